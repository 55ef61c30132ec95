"""One whole round in order (what ``benchmarks/flywheel.py`` runs; the assets run the same stages one by one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prm.flywheel.config import FlywheelConfig
from prm.flywheel.data import RoundSamples, label_round, rollouts_paid, sample_round, store_round_problems
from prm.flywheel.lineage import (
    register_policy,
    register_prm,
    register_start,
    round_policy,
    round_prm,
)
from prm.flywheel.policy_round import rl_on
from prm.flywheel.prm_round import RoundF1, round_f1, train_round_prm
from prm.generation import GenerationBackend, GenerationConfig, make_backend
from prm.labeling.partition import PartitionLabelReport
from prm.rl import ArmResult, HeldOut
from warehouse import Warehouse

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


def round_dir(models_dir: Path, k: int) -> Path:
    """Where round ``k``'s PRM (``prm/``) and RL run (``rl/``, its policy in ``rl/policy``) live."""
    return Path(models_dir) / f"round-{k}"


def prm_metrics(f1: RoundF1) -> dict[str, Any]:
    """The PRM entry's headline metrics: test F1 of this round's, last round's and round 0's PRMs on this round's
    held-out samples, and the paired 95% intervals of the differences."""
    out: dict[str, Any] = {f"f1_{name}": value for name, value in f1.f1.items()}
    out["n_test"] = f1.n_test
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


def run_round(wh: Warehouse, k: int, config: FlywheelConfig, models_dir: Path, generation: GenerationConfig, *,
              run_id: str, before: HeldOut | None = None,
              progress: Callable[[str], None] = print) -> RoundReport:
    """Round ``k``: fresh problems, samples and labels from the round's policy, the PRM retrained and compared
    with the PRMs before it, RL resumed with it; both models registered once their folders are complete."""
    policy = round_policy(wh.root, k, config)
    if k == 0:
        register_start(wh, policy, config, run_id=run_id)
    store_round_problems(wh, k, config, run_id=run_id)
    backend = LazyBackend(replace(generation, model=str(policy)))
    try:
        samples = sample_round(wh, k, config, policy, backend, run_id=run_id)
        progress(f"round {k}: {samples.stats.n_solutions} samples, accuracy {samples.stats.accuracy:.3f}")
        labels = label_round(wh, k, config, policy, backend, run_id=run_id, progress=progress)
    finally:
        backend.close()
    parent = round_prm(wh.root, k - 1) if k else None
    out = round_dir(models_dir, k)
    ts = train_round_prm(wh.root, k, config, out / "prm", parent)
    prms = {FRESH: out / "prm"}
    if k:
        prms |= {PREVIOUS: parent, STALE: round_prm(wh.root, 0)}
    f1 = round_f1(wh.root, k, config, prms)
    register_prm(wh, k, config, out / "prm", ts, parent or policy, prm_metrics(f1), run_id=run_id)
    progress(f"round {k}: PRM F1 {f1.f1}")
    rl = rl_on(wh.root, [k], config, policy, out / "prm", out / "rl", before=before, progress=progress)
    register_policy(wh, k, config, rl.policy_dir, policy, out / "prm", wh.version("problems"), policy_metrics(rl),
                    run_id=run_id)
    progress(f"round {k}: held-out accuracy {rl.before.accuracy:.3f} -> {rl.after.accuracy:.3f}")
    return RoundReport(k, samples, labels, rollouts_paid(wh.root, k), out / "prm", f1, rl)
