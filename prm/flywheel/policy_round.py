"""A round's RL: GRPO resumed from the round's policy with the round's PRM, measured on held-out problems that
stay the same every round (and for the single-run baseline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from prm.files import atomic_write_dir
from prm.flywheel.config import FlywheelConfig
from prm.flywheel.rounds import round_source
from prm.rl import POLICY_SUBDIR, ArmResult, HeldOut, eval_problems, run_grpo, warehouse_problems
from prm.tasks import ArithmeticProblem


def rl_on(root: str | Path, rounds: Sequence[int], config: FlywheelConfig, policy_dir: Path, prm_dir: Path,
          out_dir: Path, *, steps: int | None = None, before: HeldOut | None = None,
          progress: Callable[[str], None] | None = None) -> ArmResult:
    """GRPO from ``policy_dir`` under ``config.arm`` with the PRM in ``prm_dir`` for ``steps`` (default: one
    round's), on the problems of ``rounds``; the trained policy lands in ``out_dir/policy``, the folder swapped in
    whole so a killed run leaves no half-written policy. ``before``: the start policy's held-out numbers when
    already measured (the previous round's ``after``)."""
    rl = config.rl_config(steps)
    pool: list[ArithmeticProblem] = [p for k in rounds for p in warehouse_problems(root, round_source(k))]
    results: list[ArmResult] = []
    atomic_write_dir(out_dir, lambda tmp: results.append(run_grpo(
        policy_dir, prm_dir, config.arm, rl, tmp, before=before, problems=pool, held_out=eval_problems(rl),
        progress=progress)))
    return replace(results[0], policy_dir=out_dir / POLICY_SUBDIR)
