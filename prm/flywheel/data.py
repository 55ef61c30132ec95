"""A round's data: fresh problems, the round's policy's samples, and their labels from that policy's rollouts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prm.datagen import SampleStats, replace_solutions, sample_solution_rows, store_new_problems
from prm.flywheel.config import FlywheelConfig
from prm.flywheel.lineage import round_policy_model, usable_prm
from prm.flywheel.rounds import ROUND_DAY, round_source
from prm.generation import GenerationBackend
from prm.labeling import PartitionLabelReport, label_partition
from prm.models import prompter_for
from prm.tasks import generate_arithmetic
from warehouse import Warehouse, connect


def store_round_problems(wh: Warehouse, k: int, config: FlywheelConfig, *, run_id: str) -> int:
    """Write round ``k``'s problems (fresh ones, none another partition holds) in one commit; returns how many."""
    records = generate_arithmetic(config.problems(), seed=config.problem_seed(k))
    fresh, _ = store_new_problems(wh, records, source=round_source(k), day=ROUND_DAY, run_id=run_id)
    return len(fresh)


@dataclass(frozen=True)
class RoundSamples:
    """Round ``k``'s stored samples and whether an earlier run's were kept."""

    stats: SampleStats
    policy: str  # the policy that wrote them, as registry name@version (lineage.round_policy_model)
    reused_from_run: str | None


def kept_samples(wh: Warehouse, k: int, policy: str, n_samples: int) -> RoundSamples | None:
    """Round ``k``'s samples when an earlier run already wrote all of them from ``policy``: every problem has
    ``n_samples`` solutions, and solutions and steps come from one run (a run killed between its two writes
    leaves rows that do not qualify)."""
    source = round_source(k)
    sols = wh.read_partition("solutions", source, ROUND_DAY).to_pylist()
    n_problems = wh.read_partition("problems", source, ROUND_DAY).num_rows
    runs = {s["run_id"] for s in sols} | set(wh.read_partition("steps", source, ROUND_DAY).column("run_id").to_pylist())
    if not sols or len(sols) != n_problems * n_samples or {s["model"] for s in sols} != {policy} or len(runs) != 1:
        return None
    return RoundSamples(SampleStats.from_rows(sols), policy, runs.pop())


def sample_round(wh: Warehouse, k: int, config: FlywheelConfig, policy_dir: Path,
                 backend: Callable[[], GenerationBackend], *, run_id: str) -> RoundSamples:
    """Sample ``n_samples`` solutions per round-``k`` problem from the policy in ``policy_dir`` and replace the
    round's solutions and steps with them (labels of older samples go first). An earlier run's complete samples
    from the same policy are kept, labels and all, so a killed round resumes without paying twice."""
    policy = round_policy_model(k, config, policy_dir)
    kept = kept_samples(wh, k, policy, config.n_samples)
    if kept is not None:
        return kept
    source = round_source(k)
    problems = wh.read_partition("problems", source, ROUND_DAY).to_pylist()
    if not problems:
        raise ValueError(f"round {k} has no problems in the warehouse; store them first (store_round_problems)")
    sols, steps, stats = sample_solution_rows(backend(), problems, prompter_for(policy_dir), model=policy,
                                              n=config.n_samples, seed=config.problem_seed(k),
                                              max_tokens=config.max_tokens, temperature=config.temperature)
    replace_solutions(wh, sols, steps, source=source, day=ROUND_DAY, run_id=run_id)
    return RoundSamples(stats, policy, None)


def label_round(wh: Warehouse, k: int, config: FlywheelConfig, policy_dir: Path,
                backend: Callable[[], GenerationBackend], *, run_id: str,
                progress: Callable[[str], None] = print) -> PartitionLabelReport:
    """Label round ``k``'s samples with ``config.label_method``, rolling out from the same policy that wrote them
    (labels are relative to the policy that rolls out). Resumes: solutions already labeled are skipped. ``active``
    scores with the PRM that rewarded the round's policy (the one round ``k - 1`` handed on; none in round 0)."""
    prm = usable_prm(wh.root, k - 1, config, f"round {k}'s active labeling scores with").uri \
        if k and config.label_method == "active" else None
    return label_partition(wh, config.label_method, config.labeler(prm), backend,
                           model=round_policy_model(k, config, policy_dir),
                           source=round_source(k), day=ROUND_DAY, run_id=run_id, prompt=prompter_for(policy_dir),
                           resume=True, seed=config.problem_seed(k) + 1, max_tokens=config.max_tokens,
                           progress=progress)


def rollouts_paid(root: str | Path, k: int) -> int:
    """Rollouts stored for round ``k``: what its labels cost."""
    return connect(root).execute("SELECT count(*) FROM rollouts WHERE source = ?", [round_source(k)]).fetchone()[0]
