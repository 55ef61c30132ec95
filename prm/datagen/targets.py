"""A stored solution ready to label: its prompt, its completion with the stored step spans, and its gold answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.datagen.rollouts import RolloutTarget, prefix_target
from prm.format import Segmented, from_spans, join_steps, segment

# Used only when a solution carries no completion_tokens (rows built by hand): arithmetic steps are
# short ASCII, about 3 characters per BPE token for SmolLM2-style tokenizers and 1 for char tokenizers;
# 3 errs towards shorter lengths, which only shifts OmegaPRM's beta^(len/L) by a few percent at L=500.
CHARS_PER_TOKEN_FALLBACK = 3.0


@dataclass(frozen=True)
class SolutionToLabel:
    """One sampled solution (a ``solutions`` row with its ``steps`` spans) ready to label.

    >>> s = SolutionToLabel.of_steps("s1", "p1", "2+3*4 =\\n", ("2+3*4 = 2+12", "2+12 = 14"), "14")
    >>> s.target(0).prefix
    '2+3*4 =\\n2+3*4 = 2+12\\n'
    """

    solution_id: str
    problem_id: str
    prompt: str  # the formatted prompt the policy saw (prm.format.format_prompt), prefixes start with it
    seg: Segmented  # the completion and its step spans, as stored in ``solutions.text`` / ``steps``
    gold_answer: str
    is_correct: bool | None = None  # final answer vs gold (solutions.is_correct); None = no gradable answer = wrong
    completion_tokens: int | None = None  # solutions.completion_tokens: OmegaPRM's rollout length, in tokens

    @property
    def steps(self) -> tuple[str, ...]:
        """Step texts in order, each ``seg.text[char_start:char_end]``."""
        return self.seg.steps

    def target(self, step_idx: int) -> RolloutTarget:
        """The rollout target whose prefix is the prompt plus the completion up to step ``step_idx``."""
        return prefix_target(self.solution_id, self.problem_id, self.prompt, self.seg, step_idx, self.gold_answer)

    @property
    def n_tokens(self) -> float:
        """Length in tokens; estimated from characters only when the row carries no token count."""
        if self.completion_tokens is not None:
            return float(self.completion_tokens)
        return len(self.seg.text) / CHARS_PER_TOKEN_FALLBACK

    @staticmethod
    def of_steps(solution_id: str, problem_id: str, prompt: str, steps: Sequence[str], gold_answer: str,
                 **kwargs: Any) -> SolutionToLabel:
        """A solution written as ``steps`` in the canonical layout (tests, hand-made fixtures)."""
        return SolutionToLabel(solution_id, problem_id, prompt, segment(join_steps(steps)), gold_answer, **kwargs)

    @staticmethod
    def from_rows(solution: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], prompt: str,
                  gold_answer: str) -> SolutionToLabel:
        """Build from a ``solutions`` row and its ``steps`` rows (any order), using their stored spans.

        Raises ``ValueError`` when a step row's span does not cut its own text out of the solution: the
        warehouse rows are inconsistent, and labeling them would label other text than the model wrote.
        """
        ordered = sorted(steps, key=lambda r: r["step_idx"])
        seg = from_spans(solution["text"], [(r["char_start"], r["char_end"]) for r in ordered])
        for row, text in zip(ordered, seg.steps, strict=True):
            if row["text"] != text:
                raise ValueError(f"steps row ({solution['solution_id']}, {row['step_idx']}) holds {row['text']!r} "
                                 f"but its span cuts {text!r} from the solution text; re-materialize `solutions`")
        return SolutionToLabel(solution_id=solution["solution_id"], problem_id=solution["problem_id"], prompt=prompt,
                               seg=seg, gold_answer=gold_answer, is_correct=solution.get("is_correct"),
                               completion_tokens=solution.get("completion_tokens"))
