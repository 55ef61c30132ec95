"""A round's models in the registry (``warehouse.model_registry``): which policy and PRM a round starts from,
and the entries it registers once a model folder is complete.

A registration is never replaced: a rerun of a round adds a new version beside the earlier ones (whose folders
stay, see :mod:`prm.flywheel.folders`), so a later round's ``parent_version`` and a policy's ``reward_prm`` always
name a registered model with its weights. Each entry carries the verdict of the round's blocking rule
(:mod:`prm.flywheel.checks`): a rejected model stays registered, and the next round never builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prm.flywheel.checks import Verdict, policy_holds, prm_no_worse
from prm.flywheel.config import FlywheelConfig
from prm.flywheel.rounds import ROUND_DAY, round_source
from prm.models import resolve_model, weights_digest
from prm.training import TrainingSet
from warehouse import ACCEPTED, REJECTED, ModelEntry, Warehouse, latest_model, lineage, register_models

# Writers of the registry entries a round adds (beside its earlier ones: a registration is never replaced).
START_WRITER, PRM_WRITER, POLICY_WRITER = "flywheel_start", "flywheel_prm", "flywheel_policy"


def prm_name(k: int) -> str:
    return f"flywheel-prm-r{k}"


def policy_name(k: int) -> str:
    return f"flywheel-policy-r{k}"


def round_entry(root: str | Path, kind: str, k: int) -> ModelEntry | None:
    """Round ``k``'s newest accepted ``kind`` ("prm" or "policy") entry; None when it has none."""
    return latest_model(root, kind, source=round_source(k), name=prm_name(k) if kind == "prm" else policy_name(k))


def _missing(root: str | Path, kind: str, k: int, needed_by: str) -> LookupError:
    """Why round ``k`` has no accepted ``kind``: never built, or its newest version rejected (and by what rule)."""
    name = prm_name(k) if kind == "prm" else policy_name(k)
    asset = "flywheel_prm" if kind == "prm" else "flywheel_policy"
    newest = latest_model(root, kind, source=round_source(k), name=name, include_rejected=True)
    if newest is None:
        return LookupError(f"{needed_by} round {k}'s {kind}, which is not registered; materialize round {k} first "
                           f"(its {asset} asset)")
    return LookupError(f"{needed_by} round {k}'s {kind}, whose version {newest.version} was rejected "
                       f"({newest.status_note}); re-materialize round {k}'s {asset} once the cause is fixed")


def round_policy(root: str | Path, k: int, config: FlywheelConfig) -> Path:
    """The policy round ``k`` samples and rolls out: round ``k - 1``'s accepted RL checkpoint, ``config.policy``
    (the shipped one by default) in round 0."""
    if k == 0:
        return Path(resolve_model(config.policy))
    found = round_entry(root, "policy", k - 1)
    if found is None:
        raise _missing(root, "policy", k - 1, f"round {k} starts from")
    return Path(found.uri)


def round_policy_name(k: int, config: FlywheelConfig) -> str:
    """The registry name of the policy round ``k`` samples: ``config.policy`` in round 0, else round ``k - 1``'s."""
    return config.policy if k == 0 else policy_name(k - 1)


def round_policy_model(k: int, config: FlywheelConfig, policy_dir: Path) -> str:
    """The ``model`` column of round ``k``'s samples and rollouts: the policy's registry name and version, never
    its folder, so a moved checkout (or models folder) still reuses the round's rows."""
    return f"{round_policy_name(k, config)}@{weights_digest(policy_dir)}"


def round_prm(root: str | Path, k: int) -> Path | None:
    """Round ``k``'s newest accepted PRM folder; None before one is built (or when every version was rejected)."""
    found = round_entry(root, "prm", k)
    return None if found is None else Path(found.uri)


def usable_prm(root: str | Path, k: int, config: FlywheelConfig, needed_by: str) -> ModelEntry:
    """The PRM round ``k`` hands on: its accepted PRM entry. Under ``config.on_rejected_prm == "keep_last"`` a round
    whose every PRM version was rejected hands on the nearest earlier round's accepted one (the entry's ``round``
    says which); a round never built, or ``"stop"``, is a LookupError that says why."""
    r = k
    while (found := round_entry(root, "prm", r)) is None:
        built = latest_model(root, "prm", source=round_source(r), name=prm_name(r), include_rejected=True)
        if config.on_rejected_prm == "stop" or built is None or r == 0:
            raise _missing(root, "prm", r, needed_by)
        r -= 1
    return found


def stale_prm(root: str | Path, parent: ModelEntry) -> Path:
    """Round 0's PRM in ``parent``'s lineage: the stale PRM a later round compares with is the one its chain grew
    from, whatever round 0 was re-run into since."""
    for entry in lineage(root, parent.version):
        if entry.kind == "prm" and entry.round == 0:
            return Path(entry.uri)
    raise LookupError(f"the lineage of PRM {parent.version} ({parent.name}) reaches no registered round-0 PRM; "
                      "its chain is broken - run the flywheel from round 0 into a fresh warehouse")


def register_start(wh: Warehouse, policy_dir: Path, config: FlywheelConfig, *, run_id: str) -> None:
    """Register round 0's starting policy (once per version), so every lineage ends at a registered model."""
    entry = ModelEntry(name=config.policy, version=weights_digest(policy_dir), kind="policy",
                       uri=str(policy_dir), round=None)
    known = latest_model(wh.root, "policy", source=round_source(0), name=config.policy, include_rejected=True)
    if known is None or known.version != entry.version:
        register_models(wh, [entry], source=round_source(0), day=ROUND_DAY, run_id=run_id, writer=START_WRITER)


def _status(verdict: Verdict) -> dict[str, str]:
    return {"status": ACCEPTED if verdict.passed else REJECTED, "status_note": verdict.description}


def _numbers(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The finite numbers of ``metrics`` (an F1 that could not be computed is None and left out)."""
    return {k: float(v) for k, v in metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}


def register_prm(wh: Warehouse, k: int, config: FlywheelConfig, folder: Path, ts: TrainingSet, parent: Path,
                 metrics: Mapping[str, Any], *, run_id: str) -> ModelEntry:
    """Register round ``k``'s finished PRM in one commit beside the round's earlier versions, accepted or rejected
    by :func:`prm_no_worse` at ``config.prm_tolerance``. ``parent``: the previous round's PRM, or the policy whose
    backbone round 0's PRM starts from."""
    numbers = _numbers(metrics)
    entry = ModelEntry(
        name=prm_name(k), version=weights_digest(folder), kind="prm", uri=str(folder),
        parent_version=weights_digest(parent), round=k,
        training_tables={t: v for t, v in ts.warehouse_versions.items() if v is not None},
        training={"training_set": asdict(ts.config), "steps": config.prm_steps,
                  "warm_start": config.warm_start},
        metrics=numbers, **_status(prm_no_worse(k, numbers, config.prm_tolerance)))
    register_models(wh, [entry], source=round_source(k), day=ROUND_DAY, run_id=run_id, writer=PRM_WRITER)
    return entry


def register_policy(wh: Warehouse, k: int, config: FlywheelConfig, folder: Path, start: Path, prm: Path,
                    problems_version: int | None, metrics: Mapping[str, Any], *, run_id: str) -> ModelEntry:
    """Register round ``k``'s RL checkpoint in one commit beside the round's earlier versions, accepted or rejected
    by :func:`policy_holds` at ``config.collapse_tolerance``."""
    numbers = _numbers(metrics)
    entry = ModelEntry(
        name=policy_name(k), version=weights_digest(folder), kind="policy", uri=str(folder),
        parent_version=weights_digest(start), round=k,
        training_tables={} if problems_version is None else {"problems": problems_version},
        training={"arm": config.arm, "steps": config.rl_steps, "reward_prm": weights_digest(prm),
                  "sources": [round_source(k)], "rl": config.rl_config().to_dict()},
        metrics=numbers, **_status(policy_holds(numbers, config.collapse_tolerance)))
    register_models(wh, [entry], source=round_source(k), day=ROUND_DAY, run_id=run_id, writer=POLICY_WRITER)
    return entry
