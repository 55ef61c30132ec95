"""Best-of-N, the PRM-weighted vote and majority vote: ``n`` full solutions per problem, picked by the PRM or by the
most common answer."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prm.best_of_n import majority_pick, weighted_vote_pick
from prm.first_error import ScoredSolution
from prm.format import segment
from prm.generation import derive_seed
from prm.search.config import SearchConfig
from prm.search.expand import Expander, Expansion
from prm.search.pick import pick_best
from prm.search.scoring import prefix_scorer, release, score_candidates
from prm.search.types import Beam, SearchResult

if TYPE_CHECKING:
    from prm.scoring import Scorer

# Offsets the sampling rounds' seeds from the tree rounds' (derive_seed(seed, step)), so best-of-N never replays
# the exact draws of a tree method's first step.
_SAMPLE_SEED_OFFSET = 1_000_003


def sample_pool(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander,
                config: SearchConfig) -> tuple[list[list[Expansion]], list[int]]:
    """(full solutions per question, tokens generated per question): rounds of ``m`` samples until ``n`` are
    drawn or the question's token budget is spent (at least one round)."""
    prompts = [prompter(q) for q in questions]
    pools: list[list[Expansion]] = [[] for _ in questions]
    spent = [0] * len(questions)
    for round_ in range(-(-config.n // config.m)):
        todo = [p for p in range(len(questions))
                if round_ == 0 or config.token_budget is None or spent[p] < config.token_budget]
        if not todo:
            break
        size = min(config.m, config.n - round_ * config.m)
        drawn = expander([prompts[p] for p in todo], size, stop=(), max_tokens=config.max_solution_tokens,
                         temperature=config.temperature, seed=derive_seed(config.seed + _SAMPLE_SEED_OFFSET, round_))
        for p, found in zip(todo, drawn, strict=True):
            pools[p] += found
            spent[p] += sum(e.tokens for e in found)
    return pools, spent


@dataclass(frozen=True)
class ScoredPool:
    """Every question's samples with their PRM step scores, the tokens generated and the tokens the PRM read."""

    beams: list[list[Beam]]
    spent: list[int]
    read: list[int]


def score_pool(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
               config: SearchConfig, pools: tuple[list[list[Expansion]], list[int]] | None = None) -> ScoredPool:
    """:func:`sample_pool`'s draws (``pools`` reuses them) scored step by step, once for every picking rule."""
    samples, spent = pools or sample_pool(questions, prompter, expander, config)
    beams = [[_as_beam(e) for e in found] for found in samples]
    flat = [(q, b.steps) for q, bs in zip(questions, beams, strict=True) for b in bs]
    # Samples share only their prompt, which the prefix cache reads once per question.
    scorer = prefix_scorer(scorer) if config.prefix_cache else scorer
    found = score_candidates(scorer, flat)
    release(scorer)
    scores, tokens = iter(found.scores), iter(found.prm_tokens)
    scored = [[Beam(b.completion, b.steps, tuple(next(scores)), True) for b in bs] for bs in beams]
    read = [sum(next(tokens) for _ in bs) for bs in beams]
    return ScoredPool(scored, list(spent), read)


def best_of_n(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
              config: SearchConfig, pools: tuple[list[list[Expansion]], list[int]] | None = None,
              scored: ScoredPool | None = None) -> list[SearchResult]:
    """Each question's sample with the highest PRM aggregate (:func:`pick_best`); ``pools`` reuses
    :func:`sample_pool`'s draws and ``scored`` :func:`score_pool`'s scores (the benchmark gives best-of-N, the
    weighted vote and majority vote the same samples)."""
    scored = scored or score_pool(questions, prompter, expander, scorer, config, pools)
    results = []
    for p, question in enumerate(questions):
        best = pick_best(scored.beams[p], config.aggregation) if scored.beams[p] else Beam()
        results.append(SearchResult("best_of_n", question, best.completion, best.answer, best.scores,
                                    scored.spent[p], len(scored.beams[p]), scored.read[p]))
    return results


def weighted_vote(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
                  config: SearchConfig, pools: tuple[list[list[Expansion]], list[int]] | None = None,
                  scored: ScoredPool | None = None) -> list[SearchResult]:
    """The PRM-weighted majority vote (Math-Shepherd): the answer whose samples' aggregated scores sum highest
    (``prm.evaluation.weighted_vote_pick``); ``pools``/``scored`` as :func:`best_of_n`'s."""
    scored = scored or score_pool(questions, prompter, expander, scorer, config, pools)
    results = []
    for p, question in enumerate(questions):
        beams = scored.beams[p]
        # A sample without steps or with a NaN score (overflowed the PRM's context) carries no weight; with no
        # weighted sample left the vote is the plain majority's.
        votes = [ScoredSolution(str(i), "p", b.scores, None, b.answer) for i, b in enumerate(beams)
                 if b.scores and not any(math.isnan(x) for x in b.scores)]
        best = beams[int(weighted_vote_pick(votes, config.aggregation).solution_id)] if votes else _majority(beams)
        results.append(SearchResult("weighted_vote", question, best.completion, best.answer, best.scores,
                                    scored.spent[p], len(beams), scored.read[p]))
    return results


def majority_vote(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
                  config: SearchConfig, pools: tuple[list[list[Expansion]], list[int]] | None = None
                  ) -> list[SearchResult]:
    """Each question's most common final answer (``prm.evaluation.majority_pick``); the PRM is not read."""
    samples, spent = pools or sample_pool(questions, prompter, expander, config)
    results = []
    for p, question in enumerate(questions):
        beams = [_as_beam(e) for e in samples[p]]
        best = _majority(beams)
        results.append(SearchResult("majority_vote", question, best.completion, best.answer, (), spent[p],
                                    len(beams)))
    return results


def _majority(beams: Sequence[Beam]) -> Beam:
    """The beam with the most common answer (``prm.evaluation.majority_pick``); an empty Beam for none."""
    if not beams:
        return Beam()
    # majority_pick reads only the answers; ScoredSolution insists on a score, so each gets a neutral one.
    votes = [ScoredSolution(str(i), "p", (1.0,), None, b.answer) for i, b in enumerate(beams)]
    return beams[int(majority_pick(votes).solution_id)]


def _as_beam(expansion: Expansion) -> Beam:
    seg = segment(expansion.text)
    return Beam(expansion.text, seg.steps, (), True)
