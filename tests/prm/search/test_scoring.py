"""The real batched scorer under search: context overflow and NaN get defined results."""

from __future__ import annotations

import math
from pathlib import Path

from prm.scoring import load_prm
from prm.search import Expansion, SearchConfig, beam_search
from prm.search.scoring import rank_key, score_candidates
from tests.prm.search.scripted import ScriptedExpander, prompter


def test_an_overflowing_candidate_gets_nan_and_the_rest_real_scores(tiny_prm: Path) -> None:
    scorer = load_prm(tiny_prm)
    items = [("1 plus 1", ["1+1 = 2"]), ("1 plus 1", ["9" * 300]), ("1 plus 1", [])]
    scores, overflow, tokens = score_candidates(scorer, items)
    assert overflow == [False, True, False]
    assert tokens == [len(scorer.encode(*items[0]).input_ids), 0, 0]
    assert len(scores[0]) == 1 and 0.0 <= scores[0][0] <= 1.0
    assert scores[0] == scorer.score_steps("1 plus 1", ["1+1 = 2"])
    assert math.isnan(scores[1][0]) and scores[2] == []
    assert rank_key(scores[1], "last") == -math.inf


def test_beam_search_with_the_real_scorer_survives_a_step_past_its_context(tiny_prm: Path) -> None:
    def step(done: str, i: int, j: int) -> str:
        return "Answer: 2" if done else ["9" * 300, "1+1 = 2"][j % 2]

    result = beam_search(["1 plus 1"], prompter, ScriptedExpander(step), load_prm(tiny_prm), SearchConfig(n=2, m=2))[0]
    assert result.answer == "2" and result.completion == "1+1 = 2\nAnswer: 2"
    assert not math.isnan(result.scores[0])


def test_expansion_is_frozen_text_and_tokens() -> None:
    e = Expansion("1+1 = 2", 7)
    assert (e.text, e.tokens, e.truncated) == ("1+1 = 2", 7, False)
