"""One whole round in order (what ``benchmarks/flywheel.py`` runs; the assets run the same stages one by one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prm.flywheel.config import FlywheelConfig
from prm.flywheel.data import RoundSamples, label_round, rollouts_paid, sample_round, store_round_problems
from prm.flywheel.folders import new_version, round_dir
from prm.flywheel.lineage import (
    POLICY_WRITER,
    register_policy,
    register_prm,
    register_start,
    round_policy,
    stale_prm,
    usable_prm,
)
from prm.flywheel.policy_round import rl_on
from prm.flywheel.prm_round import RoundF1, round_f1, train_round_prm
from prm.flywheel.rounds import ROUND_DAY, round_source
from prm.generation import GenerationBackend, GenerationConfig, make_backend
from prm.labeling import PartitionLabelReport
from prm.rl import POLICY_SUBDIR, ArmResult, HeldOut, metric_rows
from warehouse import REJECTED, ModelEntry, Warehouse

FRESH, PREVIOUS, STALE = "fresh", "previous", "stale"  # this round's PRM, the last round's, round 0's


class LazyBackend:
    """A generation backend on one model, started on first use and closed by :meth:`close`."""

    def __init__(self, config: GenerationConfig) -> None:
        self.config = config
        self._backend: GenerationBackend | None = None

    def __call__(self) -> GenerationBackend:
        if self._backend is None:
            self._backend = make_backend(self.config)
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


def prm_metrics(f1: RoundF1) -> dict[str, Any]:
    """The PRM entry's headline metrics: test F1 of this round's, last round's and round 0's PRMs on this round's
    held-out samples, and the paired 95% intervals of the differences."""
    out: dict[str, Any] = {f"f1_{name}": value for name, value in f1.f1.items()}
    out["n_test"] = f1.n_test
    out["n_test_wrong"] = sum(first >= 0 for first in f1.truth.values())
    out["n_test_right"] = f1.n_test - out["n_test_wrong"]
    for other in (PREVIOUS, STALE):
        if other in f1.f1:
            diff = f1.difference(FRESH, other)
            out.update({f"f1_minus_{other}": diff["delta"], f"f1_minus_{other}_low": diff["ci_low"],
                        f"f1_minus_{other}_high": diff["ci_high"]})
    return out


def policy_metrics(result: ArmResult) -> dict[str, Any]:
    """The policy entry's headline metrics: held-out accuracy (95% interval over problems), per-step error and the
    hacking signals, before and after the round's RL."""
    low, high = result.after.accuracy_ci() or (None, None)
    return {"acc_before": result.before.accuracy, "acc_after": result.after.accuracy, "acc_after_low": low,
            "acc_after_high": high, "step_err_before": result.before.step_error,
            "step_err_after": result.after.step_error, "steps_before": result.before.mean_steps,
            "steps_after": result.after.mean_steps, "chars_before": result.before.mean_chars,
            "chars_after": result.after.mean_chars, "rl_steps": result.steps}


@dataclass(frozen=True)
class RoundReport:
    """What one round produced."""

    round: int
    samples: RoundSamples
    labels: PartitionLabelReport
    rollouts: int
    prm_dir: Path
    f1: RoundF1
    rl: ArmResult
    reward_prm_round: int  # the round whose PRM rewarded this round's RL (earlier than ``round``: this one's rejected)


def samples_stage(wh: Warehouse, k: int, config: FlywheelConfig, backend: Callable[[], GenerationBackend],
                  policy: Path, *, run_id: str) -> tuple[int, RoundSamples]:
    """Round ``k``'s fresh problems and the policy's samples of them (round 0 also registers its starting
    policy, so every lineage ends at a registered model); returns (new problems, samples)."""
    if k == 0:
        register_start(wh, policy, config, run_id=run_id)
    problems = store_round_problems(wh, k, config, run_id=run_id)
    return problems, sample_round(wh, k, config, policy, backend, run_id=run_id)


def prm_stage(wh: Warehouse, k: int, config: FlywheelConfig, models_dir: Path, *,
              run_id: str) -> tuple[ModelEntry, RoundF1]:
    """Round ``k``'s PRM: trained (warm-started from round ``k - 1``'s accepted one) into a new version folder,
    scored with the last round's and the round-0 PRM of its lineage on this round's held-out samples, then
    registered accepted or rejected. The previous round's PRM is the one it handed on (:func:`usable_prm`); none
    is a LookupError."""
    policy = round_policy(wh.root, k, config)
    previous = usable_prm(wh.root, k - 1, config, f"round {k} warm-starts from") if k else None
    parent = None if previous is None else Path(previous.uri)
    out, ts = new_version(round_dir(models_dir, k), "prm",
                          lambda folder: train_round_prm(wh.root, k, config, folder, parent))
    prms = {FRESH: out} | ({PREVIOUS: parent, STALE: stale_prm(wh.root, previous)} if previous else {})
    f1 = round_f1(wh.root, k, config, prms)
    return register_prm(wh, k, config, out, ts, parent or policy, prm_metrics(f1), run_id=run_id), f1


def policy_stage(wh: Warehouse, k: int, config: FlywheelConfig, models_dir: Path, *, run_id: str,
                 before: HeldOut | None = None,
                 progress: Callable[[str], None] | None = None) -> tuple[ModelEntry, ArmResult]:
    """Round ``k``'s RL: resumed from the round's policy with the PRM the round hands on (its accepted one, or under
    ``on_rejected_prm="keep_last"`` an earlier round's; ``reward_prm_round`` in the entry's metrics) into a new
    version folder; the checkpoint is registered and its curves written to ``rl_metrics`` under the round's source."""
    policy = round_policy(wh.root, k, config)
    reward = usable_prm(wh.root, k, config, f"round {k}'s RL rewards with")
    prm = Path(reward.uri)
    problems_version = wh.version("problems")  # the table the RL prompts are read from
    folder, result = new_version(round_dir(models_dir, k), "rl", lambda out: rl_on(
        wh.root, [k], config, policy, prm, out, before=before, progress=progress), weights=POLICY_SUBDIR)
    result = replace(result, policy_dir=folder / POLICY_SUBDIR)
    entry = register_policy(wh, k, config, result.policy_dir, policy, prm, problems_version,
                            policy_metrics(result) | {"reward_prm_round": reward.round}, run_id=run_id)
    wh.write("rl_metrics", metric_rows(result), source=round_source(k), day=ROUND_DAY, run_id=run_id,
             writer=POLICY_WRITER, replace=True)
    return entry, result


def run_round(wh: Warehouse, k: int, config: FlywheelConfig, models_dir: Path, generation: GenerationConfig, *,
              run_id: str, before: HeldOut | None = None,
              progress: Callable[[str], None] = print) -> RoundReport:
    """Round ``k``, every stage in order (the assets run the same stages one per asset)."""
    policy = round_policy(wh.root, k, config)
    backend = LazyBackend(replace(generation, model=str(policy)))
    try:
        _, samples = samples_stage(wh, k, config, backend, policy, run_id=run_id)
        progress(f"round {k}: {samples.stats.n_solutions} samples, accuracy {samples.stats.accuracy:.3f}")
        labels = label_round(wh, k, config, policy, backend, run_id=run_id, progress=progress)
    finally:
        backend.close()
    prm, f1 = prm_stage(wh, k, config, models_dir, run_id=run_id)
    progress(f"round {k}: PRM F1 {f1.f1}")
    if prm.status == REJECTED:
        progress(f"round {k}: PRM rejected ({prm.status_note}); on_rejected_prm={config.on_rejected_prm}")
    policy, rl = policy_stage(wh, k, config, models_dir, run_id=run_id, before=before, progress=progress)
    progress(f"round {k}: held-out accuracy {rl.before.accuracy:.3f} -> {rl.after.accuracy:.3f}")
    return RoundReport(k, samples, labels, rollouts_paid(wh.root, k), Path(prm.uri), f1, rl,
                       int(policy.metrics["reward_prm_round"]))
