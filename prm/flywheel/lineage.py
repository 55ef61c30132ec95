"""A round's models in the registry (``warehouse.model_registry``): which policy and PRM a round starts from,
and the entries it registers once a model folder is complete."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prm.flywheel.config import FlywheelConfig
from prm.flywheel.rounds import ROUND_DAY, round_source
from prm.models import resolve_model
from prm.models.registry import weights_digest
from prm.training import TrainingSet
from warehouse import Warehouse
from warehouse.model_registry import ModelEntry, latest_model, register_models

# Writers of the registry entries a round owns: re-materializing a stage replaces exactly its own entries.
START_WRITER, PRM_WRITER, POLICY_WRITER = "flywheel_start", "flywheel_prm", "flywheel_policy"


def prm_name(k: int) -> str:
    return f"flywheel-prm-r{k}"


def policy_name(k: int) -> str:
    return f"flywheel-policy-r{k}"


def _registered(root: str | Path, kind: str, k: int, name: str) -> Path | None:
    entry = latest_model(root, kind, source=round_source(k), name=name)
    return None if entry is None else Path(entry.uri)


def round_policy(root: str | Path, k: int, config: FlywheelConfig) -> Path:
    """The policy round ``k`` samples and rolls out: round ``k - 1``'s RL checkpoint, ``config.policy`` (the
    shipped one by default) in round 0."""
    if k == 0:
        return Path(resolve_model(config.policy))
    found = _registered(root, "policy", k - 1, policy_name(k - 1))
    if found is None:
        raise LookupError(f"round {k} starts from round {k - 1}'s policy, which is not registered; materialize "
                          f"round {k - 1} first (its flywheel_policy asset)")
    return found


def round_prm(root: str | Path, k: int) -> Path | None:
    """Round ``k``'s registered PRM folder; None before it is built."""
    return _registered(root, "prm", k, prm_name(k))


def register_start(wh: Warehouse, policy_dir: Path, config: FlywheelConfig, *, run_id: str) -> None:
    """Register round 0's starting policy, so every lineage ends at a registered model."""
    entry = ModelEntry(name=config.policy, version=weights_digest(policy_dir), kind="policy",
                       uri=str(policy_dir), round=None)
    register_models(wh, [entry], source=round_source(0), day=ROUND_DAY, run_id=run_id, writer=START_WRITER)


def _numbers(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The finite numbers of ``metrics`` (an F1 that could not be computed is None and left out)."""
    return {k: float(v) for k, v in metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}


def register_prm(wh: Warehouse, k: int, config: FlywheelConfig, folder: Path, ts: TrainingSet, parent: Path,
                 metrics: Mapping[str, Any], *, run_id: str) -> ModelEntry:
    """Register round ``k``'s finished PRM (one commit, replacing the round's earlier PRM entry). ``parent``:
    the previous round's PRM, or the policy whose backbone round 0's PRM starts from."""
    entry = ModelEntry(
        name=prm_name(k), version=weights_digest(folder), kind="prm", uri=str(folder),
        parent_version=weights_digest(parent), round=k,
        training_tables={t: v for t, v in ts.warehouse_versions.items() if v is not None},
        training={"training_set": asdict(ts.config), "steps": config.prm_steps,
                  "warm_start": config.warm_start},
        metrics=_numbers(metrics))
    register_models(wh, [entry], source=round_source(k), day=ROUND_DAY, run_id=run_id, writer=PRM_WRITER)
    return entry


def register_policy(wh: Warehouse, k: int, config: FlywheelConfig, folder: Path, start: Path, prm: Path,
                    problems_version: int | None, metrics: Mapping[str, Any], *, run_id: str) -> ModelEntry:
    """Register round ``k``'s RL checkpoint (one commit, replacing the round's earlier policy entry)."""
    entry = ModelEntry(
        name=policy_name(k), version=weights_digest(folder), kind="policy", uri=str(folder),
        parent_version=weights_digest(start), round=k,
        training_tables={} if problems_version is None else {"problems": problems_version},
        training={"arm": config.arm, "steps": config.rl_steps, "reward_prm": weights_digest(prm),
                  "sources": [round_source(k)], "rl": config.rl_config().to_dict()},
        metrics=_numbers(metrics))
    register_models(wh, [entry], source=round_source(k), day=ROUND_DAY, run_id=run_id, writer=POLICY_WRITER)
    return entry
