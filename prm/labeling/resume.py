"""Resumable labeling: label in chunks of whole problems so a crash loses at most one chunk.

The caller writes each chunk's ``step_labels`` rows and ``new_rollouts`` before asking for the next.
On restart it passes the solution ids already in ``step_labels`` for this method as ``skip`` and seeds
the sampler cache with the ``rollouts`` rows already written, so nothing is labeled or paid twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence

from prm.datagen import SolutionToLabel
from prm.labeling.types import Labeler, LabelRun, RolloutSampler


def chunk_by_problem(solutions: Sequence[SolutionToLabel], max_solutions: int) -> list[list[SolutionToLabel]]:
    """Consecutive chunks of whole problems (OmegaPRM searches a problem's solutions together), each up to
    ``max_solutions`` unless one problem alone has more.

    >>> sols = [SolutionToLabel(f"s{i}", f"p{i // 2}", "Q\\n", ("1 = 1",), "1") for i in range(5)]
    >>> [[s.solution_id for s in c] for c in chunk_by_problem(sols, 3)]  # p1 and p2 fit one chunk
    [['s0', 's1'], ['s2', 's3', 's4']]
    """
    if max_solutions < 1:
        raise ValueError(f"max_solutions={max_solutions} must be >= 1")
    groups: dict[str, list[SolutionToLabel]] = defaultdict(list)
    for sol in solutions:
        groups[sol.problem_id].append(sol)
    chunks: list[list[SolutionToLabel]] = []
    current: list[SolutionToLabel] = []
    for group in groups.values():
        if current and len(current) + len(group) > max_solutions:
            chunks.append(current)
            current = []
        current = current + group
    return [*chunks, current] if current else chunks


def label_in_chunks(labeler: Labeler, solutions: Sequence[SolutionToLabel], sampler: RolloutSampler, *,
                    skip: Collection[str] = (), max_solutions: int = 256) -> Iterator[LabelRun]:
    """Yield one :class:`LabelRun` per chunk of problems not fully in ``skip``; write each before the next.

    A problem is skipped whole when all its solutions are in ``skip``; a partly labeled problem is
    labeled again only for its missing solutions.
    """
    todo = [s for s in solutions if s.solution_id not in skip]
    for chunk in chunk_by_problem(todo, max_solutions):
        yield labeler.label(chunk, sampler)
