"""The search settings shared by every method."""

from __future__ import annotations

from dataclasses import dataclass

from prm.best_of_n import SCORE_AGGREGATIONS
from prm.search.constants import MAX_CANDIDATES, MAX_M, MAX_N
from prm.settings import check_seed


@dataclass(frozen=True)
class SearchConfig:
    """How wide to search and when to stop; one config for all four methods.

    >>> SearchConfig(n=1024, m=1024)
    Traceback (most recent call last):
    ...
    ValueError: n=1024, m=1024: at most n=1024, m=64 and n*m=4096 expansions a round (asked: 1048576); ...

    Width: beam search keeps ``n`` beams and expands each ``m`` times (``n * m`` candidates per step); DVTS
    splits ``n`` into ``n // m`` independent subtrees of one beam expanded ``m`` times (``n`` candidates per
    step); best-of-N and majority vote sample ``n`` full solutions. ``token_budget`` (generated tokens per
    problem, counting every expansion, kept or not) caps all four: no new round starts once it is spent, so a
    method overshoots it by at most one round (one step of every live beam, or ``m`` samples).
    """

    n: int = 4  # beams (beam search), beams over all subtrees (DVTS), samples (best-of-N, majority)
    m: int = 4  # expansions per beam per step (search-and-learn's beam_width); sampling rounds of m samples
    max_steps: int = 16  # step rounds per tree; the arithmetic tasks need at most 8 steps plus the answer line
    max_step_tokens: int = 64  # tokens per expansion (one step); the char policy writes ~15 per step
    max_solution_tokens: int = 256  # tokens per full sample (best-of-N, majority), as GenerationRequest
    temperature: float = 1.0  # the policy's own distribution: diversity is what the PRM chooses from
    aggregation: str = "last"  # ranks beams and picks the answer; "last" = the newest step's score (search-and-learn)
    token_budget: int | None = None  # generated tokens per problem; None = no cap
    seed: int = 0  # every round's sampling seed derives from it
    prefix_cache: bool = True  # score new steps from the parent's cached keys/values (transformers PRMs; same scores)

    def __post_init__(self) -> None:
        if self.n < 1 or self.m < 1:
            raise ValueError(f"n={self.n}, m={self.m}: both must be >= 1")
        if self.n > MAX_N or self.m > MAX_M or self.n * self.m > MAX_CANDIDATES:
            raise ValueError(f"n={self.n}, m={self.m}: at most n={MAX_N}, m={MAX_M} and n*m={MAX_CANDIDATES} "
                             f"expansions a round (asked: {self.n * self.m}); the first round sends all of them at "
                             "once, whatever the token budget - lower --n or --m (search-and-learn uses m=4)")
        if self.aggregation not in SCORE_AGGREGATIONS:
            raise ValueError(f"aggregation={self.aggregation!r} is unknown; choose one of {SCORE_AGGREGATIONS}")
        if self.max_steps < 1 or self.max_step_tokens < 1 or self.max_solution_tokens < 1:
            raise ValueError("max_steps, max_step_tokens and max_solution_tokens must be >= 1")
        if self.token_budget is not None and self.token_budget < 1:
            raise ValueError(f"token_budget={self.token_budget}: give a positive budget, or None for no cap")
        check_seed("seed", self.seed)  # the engine's seed too: refused here, before any problem or model loads

    @property
    def subtrees(self) -> int:
        """DVTS's independent subtrees: ``n // m``, at least one."""
        return max(1, self.n // self.m)
