"""What a search holds while it runs (beams) and what it returns (one result per problem)."""

from __future__ import annotations

from dataclasses import dataclass

from verifiers import extract_answer


@dataclass(frozen=True)
class Beam:
    """A partial (or finished) solution: the model's own text after the prompt, its steps and their scores."""

    completion: str = ""  # everything generated after the prompt, separators included
    steps: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()  # P(good) per step from the PRM (NaN where it could not read them)
    finished: bool = False  # wrote its answer (or nothing more), or can grow no further
    group: int = 0  # DVTS subtree it belongs to (0 for beam search)

    @property
    def answer(self) -> str | None:
        """The final answer it states (``verifiers.extract_answer``), or None."""
        return extract_answer(self.completion)


@dataclass(frozen=True)
class SearchResult:
    """One problem's pick and what finding it cost."""

    method: str
    question: str
    completion: str  # the picked solution's text after the prompt
    answer: str | None  # its extracted final answer; None = states none (graded wrong)
    scores: tuple[float, ...]  # the PRM's step scores of the pick (empty for majority vote without a PRM)
    generated_tokens: int  # every token generated for this problem, candidates dropped included
    candidates: int  # expansions (tree methods) or samples (best-of-N, majority) generated
    prm_tokens: int = 0  # tokens run through the PRM for this problem (prm.search.scoring: 0 without a PRM)
