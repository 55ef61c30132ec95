"""Step-level beam search and DVTS: grow solutions one step at a time, the PRM choosing which to keep.

Both run the same loop over *groups*. Each round expands every live beam of every group ``m`` times (one
batched generation call for all problems, each expansion stopped at the step separator), scores each new
candidate with one batched PRM call, and lets each group keep its best ``keep`` candidates by
``rank_key(scores, config.aggregation)`` (with ``"last"``, the new step's score). A kept candidate that is
finished (stated its answer, wrote nothing, or overflowed the PRM) leaves the group and frees its slot; identical
children (the same text sampled twice) hold one slot.

* Beam search: one group per problem, ``keep = n``, starting from ``n`` copies of the empty solution, so every
  round scores ``n * m`` candidates.
* DVTS (Beeching et al., Hugging Face search-and-learn): ``n // m`` groups per problem, ``keep = 1``, each
  started from the empty solution. A subtree only ever keeps its own children, so subtrees never share beams:
  diversity comes from the independent first steps, and the PRM picks among the subtrees' answers at the end.

New steps are scored from their parent's cached keys/values where the PRM allows (``config.prefix_cache``,
:func:`prm.search.scoring.prefix_scorer`); after each round the cache keeps only what live beams extend.

A problem stops when its groups are empty, after ``config.max_steps`` rounds, or when its token budget is
spent; live beams then end as they are (usually without an answer). The answer is :func:`pick_best` over every
ended beam of the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from prm.format import STEP_SEPARATOR, segment
from prm.generation import derive_seed
from prm.search.config import SearchConfig
from prm.search.expand import Expander, Expansion
from prm.search.pick import pick_best
from prm.search.scoring import prefix_scorer, rank_key, release, score_candidates
from prm.search.types import Beam, SearchResult
from verifiers import extract_answer

if TYPE_CHECKING:
    from prm.scoring import Scorer


@dataclass
class _Group:
    keep: int  # slots left: beams it may still finish
    active: list[Beam]
    ended: list[Beam] = field(default_factory=list)


def beam_search(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
                config: SearchConfig) -> list[SearchResult]:
    """Step-level beam search of every question: ``n`` beams, ``m`` expansions each, the top ``n`` kept."""
    groups = [[_Group(config.n, [Beam()] * config.n)] for _ in questions]
    return _search("beam_search", questions, prompter, expander, scorer, config, groups)


def dvts(questions: Sequence[str], prompter: Callable[[str], str], expander: Expander, scorer: Scorer,
         config: SearchConfig) -> list[SearchResult]:
    """Diverse verifier tree search: ``n // m`` independent greedy subtrees of ``m`` expansions per step."""
    groups = [[_Group(1, [Beam(group=g)]) for g in range(config.subtrees)] for _ in questions]
    return _search("dvts", questions, prompter, expander, scorer, config, groups)


def extend(beam: Beam, expansion: Expansion) -> Beam:
    """``beam`` followed by one expansion (scores still to come). It finishes when the expansion states an
    answer or holds no step (an empty completion, or an answer line alone).

    >>> extend(Beam(), Expansion("1+2 = 3", 7)).completion
    '1+2 = 3\\n'
    >>> extend(Beam("1+2 = 3\\n", ("1+2 = 3",), (0.9,)), Expansion("Answer: 3", 9)).finished
    True
    """
    tail = segment(expansion.text)
    finished = not tail.steps or extract_answer(expansion.text) is not None
    text = expansion.text if finished else expansion.text + STEP_SEPARATOR
    grown = segment(beam.completion).then(len(beam.steps) - 1, text) if beam.steps else segment(text)
    return replace(beam, completion=grown.text, steps=grown.steps, finished=finished)


def _search(method: str, questions: Sequence[str], prompter: Callable[[str], str], expander: Expander,
            scorer: Scorer, config: SearchConfig, groups: list[list[_Group]]) -> list[SearchResult]:
    prompts = [prompter(q) for q in questions]
    spent, candidates, read = [0] * len(questions), [0] * len(questions), [0] * len(questions)
    scorer = prefix_scorer(scorer) if config.prefix_cache else scorer
    for step in range(config.max_steps):
        for p, problem_groups in enumerate(groups):
            if config.token_budget is not None and spent[p] >= config.token_budget:
                _end_all(problem_groups)
        jobs = [(p, g, beam) for p, gs in enumerate(groups) for g in gs for beam in g.active]
        if not jobs:
            break
        expansions = expander([prompts[p] + beam.completion for p, _, beam in jobs], config.m,
                              stop=(STEP_SEPARATOR,), max_tokens=config.max_step_tokens,
                              temperature=config.temperature, seed=derive_seed(config.seed, step))
        children: dict[int, list[Beam]] = {}
        for (p, g, beam), found in zip(jobs, expansions, strict=True):
            spent[p] += sum(e.tokens for e in found)
            candidates[p] += len(found)
            if not found:  # the request failed: the beam ends as it is, never the run
                g.ended.append(beam)
            children.setdefault(id(g), []).extend(extend(beam, e) for e in found)
        _score([(p, questions[p], g, children.get(id(g), [])) for p, gs in enumerate(groups) for g in gs],
               scorer, children, read)
        for gs in groups:
            for g in gs:
                _select(g, children.get(id(g), []), config.aggregation)
        release(scorer, [(questions[p], b.steps) for p, gs in enumerate(groups) for g in gs for b in g.active])
    release(scorer)
    for gs in groups:
        _end_all(gs)
    results = []
    for p, question in enumerate(questions):
        ended = [b for g in groups[p] for b in g.ended]
        best = pick_best(ended, config.aggregation) if ended else Beam()
        results.append(SearchResult(method, question, best.completion, best.answer, best.scores, spent[p],
                                    candidates[p], read[p]))
    return results


def _score(rows: list[tuple[int, str, _Group, list[Beam]]], scorer: Scorer, children: dict[int, list[Beam]],
           read: list[int]) -> None:
    """Score every child that gained a step (one batched call); children without a new step keep their scores.
    Adds the PRM tokens each problem's children ran to ``read``."""
    todo = [(g, i) for _, _, g, kids in rows for i, kid in enumerate(kids) if len(kid.steps) > len(kid.scores)]
    of = {id(g): (p, q) for p, q, g, _ in rows}
    scored = score_candidates(scorer, [(of[id(g)][1], children[id(g)][i].steps) for g, i in todo])
    for (g, i), s, over, tokens in zip(todo, *scored, strict=True):
        kid = children[id(g)][i]
        children[id(g)][i] = replace(kid, scores=tuple(s), finished=kid.finished or over)
        read[of[id(g)][0]] += tokens


def _select(group: _Group, kids: list[Beam], how: str) -> None:
    """Keep the group's best ``keep`` children; kept finished ones end and free their slots."""
    if not kids:
        group.active = []
        return
    order = sorted(range(len(kids)), key=lambda i: -rank_key(kids[i].scores, how))  # stable: first of equals
    # Identical children (two samples of the same step) hold one slot: a duplicate beam only repeats work.
    unique: dict[str, Beam] = {}
    for i in order:
        unique.setdefault(kids[i].completion, kids[i])
    kept = list(unique.values())[: group.keep]
    done = [k for k in kept if k.finished]
    group.ended += done
    group.keep -= len(done)
    group.active = [k for k in kept if not k.finished]


def _end_all(groups: list[_Group]) -> None:
    for g in groups:
        g.ended += g.active
        g.active = []
