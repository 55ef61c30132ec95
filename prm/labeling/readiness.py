"""Whether a partition's sampled solutions can support step labels: counts, then a verdict with the real cause.

Labels from Monte-Carlo rollouts, OmegaPRM and the judge all measure progress towards the gold answer. When most
solutions state no answer the extractor reads, or none reaches the gold answer, every label is "bad" and the run
would train a constant; this module says so before any rollout is paid for, and says what to change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from prm.datagen import is_synthetic

FINISH_LENGTH = "length"  # a completion that hit max_tokens (vLLM's and the OpenAI API's finish_reason)


@dataclass(frozen=True)
class SolutionCounts:
    """What the policy's ``ok`` solutions of a partition hold (program-written solutions left out)."""

    solutions: int  # ok policy-sampled solutions
    errors: int  # solutions whose request failed (status "error")
    no_answer: int  # ok solutions without an extracted final answer
    truncated: int  # ok solutions cut by max_tokens
    correct: int  # ok solutions graded equal to the gold answer
    problems: int  # problems with at least one ok solution
    problems_solved: int  # problems with at least one correct solution

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]]) -> SolutionCounts:
        """Counts of ``solutions`` rows (as stored or as built by ``prm.datagen.solution_rows``).

        >>> SolutionCounts.from_rows([
        ...     {"problem_id": "a", "model": "m", "status": "ok", "final_answer": "3", "is_correct": True,
        ...      "finish_reason": "stop"},
        ...     {"problem_id": "a", "model": "m", "status": "ok", "final_answer": None, "is_correct": None,
        ...      "finish_reason": "length"}]).no_answer
        1
        """
        policy = [r for r in rows if not is_synthetic(str(r.get("model", "")))]
        ok = [r for r in policy if r.get("status") == "ok"]
        return cls(solutions=len(ok), errors=len(policy) - len(ok),
                   no_answer=sum(r.get("final_answer") in (None, "") for r in ok),
                   truncated=sum(r.get("finish_reason") == FINISH_LENGTH for r in ok),
                   correct=sum(bool(r.get("is_correct")) for r in ok),
                   problems=len({r["problem_id"] for r in ok}),
                   problems_solved=len({r["problem_id"] for r in ok if r.get("is_correct")}))

    def share(self, count: int) -> float:
        """``count`` as a share of the ok solutions (0.0 when there are none)."""
        return count / self.solutions if self.solutions else 0.0

    def metadata(self) -> dict[str, int | float]:
        """Counts and shares, flat, for a materialization's metadata."""
        return {**{f"n_{k}": v for k, v in asdict(self).items()},
                "no_answer_share": round(self.share(self.no_answer), 4),
                "truncated_share": round(self.share(self.truncated), 4),
                "correct_share": round(self.share(self.correct), 4)}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> SolutionCounts:
        """The counts :meth:`metadata` wrote (values or objects with a ``.value``, as Dagster returns them)."""
        def value(key: str) -> int:
            entry = metadata[f"n_{key}"]
            return int(getattr(entry, "value", entry))

        return cls(**{k: value(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class ReadinessThresholds:
    """When a partition's solutions are refused for labeling."""

    # Refuse when more than this share of solutions states no answer the extractor reads: their outcome is
    # unknown, so MC labels would call all their steps bad. The SmolLM2 runs sat at 81-94% without an
    # answer-format instruction.
    max_no_answer_share: float = 0.5
    # Refuse when fewer solutions than this reach the gold answer: with none, every MC/OmegaPRM label is bad.
    min_correct: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_no_answer_share <= 1.0:
            raise ValueError(f"max_no_answer_share={self.max_no_answer_share} must be a share in [0, 1] "
                             "(1.0 turns the no-answer refusal off)")
        if self.min_correct < 0:
            raise ValueError(f"min_correct={self.min_correct} must be >= 0 (0 turns the never-correct refusal off)")


@dataclass(frozen=True)
class Readiness:
    """The verdict: ``cause`` is ``ready``, ``no_solutions``, ``no_answers`` or ``never_correct``."""

    passed: bool
    cause: str
    message: str


def readiness(counts: SolutionCounts, thresholds: ReadinessThresholds = ReadinessThresholds()) -> Readiness:
    """Whether the solutions can support labels, and if not why and what to do.

    >>> counts = SolutionCounts(solutions=16, errors=0, no_answer=14, truncated=3, correct=0, problems=8,
    ...                         problems_solved=0)
    >>> verdict = readiness(counts)
    >>> verdict.passed, verdict.cause
    (False, 'no_answers')
    >>> readiness(SolutionCounts(16, 0, 2, 0, 5, 8, 4)).passed
    True
    """
    if counts.solutions == 0 and counts.errors == 0:
        return Readiness(True, "ready", "no policy-sampled solutions (program-written ones only): nothing to refuse")
    if counts.solutions == 0:
        return Readiness(False, "no_solutions",
                         f"no policy solution was sampled ({counts.errors} requests failed): nothing to label; read "
                         "the solutions' `error` column (a prompt longer than the context, a dead engine) and fix "
                         "that first")
    no_answer = counts.share(counts.no_answer)
    if no_answer > thresholds.max_no_answer_share:
        truncated = counts.share(counts.truncated)
        hint = (f"; {counts.truncated} were cut by max_tokens, so raise max_tokens or add stop sequences"
                if truncated >= 0.25 else "")
        return Readiness(False, "no_answers",
                         f"{counts.no_answer} of {counts.solutions} solutions ({no_answer:.0%}) state no final answer "
                         f"the extractor reads (over the limit of {thresholds.max_no_answer_share:.0%}){hint}: their "
                         "outcome is unknown, so every label would be 'bad'. Give the policy an answer-format "
                         "instruction (the prompt's `instruction`, e.g. 'End with: The answer is: <number>', or a "
                         "system prompt asking for \\boxed{}), or use an instruct model that follows it")
    if counts.correct < thresholds.min_correct:
        return Readiness(False, "never_correct",
                         f"{counts.correct} of {counts.solutions} solutions reach the gold answer (fewer than "
                         f"{thresholds.min_correct}) on {counts.problems} problems: the policy never solves them, so "
                         "every rollout fails and every step label would be 'bad'. Use a stronger policy, easier "
                         "problems, or an answer-format instruction if its answers are right but unreadable; a "
                         "higher temperature will not help")
    return Readiness(True, "ready",
                     f"{counts.correct} of {counts.solutions} solutions correct ({counts.problems_solved} of "
                     f"{counts.problems} problems solved at least once), {counts.no_answer} without an answer, "
                     f"{counts.truncated} truncated")
