"""Beam search, DVTS and best-of-N on scripted generators where the right path is known."""

from __future__ import annotations

import math

import pytest

from prm.search import SearchConfig, beam_search, best_of_n, dvts, majority_vote, run_search, weighted_vote
from tests.prm.search.scripted import NAN, ScriptedExpander, ScriptedPRM, prompter

# Three steps, each with one good option among four; the PRM knows which. The answer line follows step 3.
OPTIONS = [[f"bad{s}a", f"good{s}", f"bad{s}b", f"bad{s}c"] for s in range(3)]
GOOD = {f"good{s}": 0.9 for s in range(3)} | {f"bad{s}{x}": 0.1 for s in range(3) for x in "abc"}


def step_fn(done: str, i: int, j: int) -> str:
    steps = [line for line in done.split("\n") if line]
    if len(steps) == 3:
        return "Answer: 7" if all(s.startswith("good") for s in steps) else "Answer: 0"
    return OPTIONS[len(steps)][j % 4]


def bad_sampler(question: str, j: int) -> str:
    """Full solutions that always take a bad option somewhere: the right path is 1 in 64 under this policy."""
    steps = [OPTIONS[s][(j + s) % 4 if (j + s) % 4 != 1 else 0] for s in range(3)]
    return "\n".join(steps) + "\nAnswer: 0"


def test_beam_search_finds_the_known_right_path_that_best_of_n_misses() -> None:
    config = SearchConfig(n=2, m=4, aggregation="last")
    found = beam_search(["Q"], prompter, ScriptedExpander(step_fn), ScriptedPRM(GOOD), config)[0]
    assert found.answer == "7"
    assert found.completion == "good0\ngood1\ngood2\nAnswer: 7"
    assert found.scores == (0.9, 0.9, 0.9)
    bon = best_of_n(["Q"], prompter, ScriptedExpander(step_fn, bad_sampler), ScriptedPRM(GOOD), config)[0]
    assert bon.answer == "0"


def test_dvts_finds_the_right_path_and_picks_by_prm() -> None:
    found = dvts(["Q"], prompter, ScriptedExpander(step_fn), ScriptedPRM(GOOD), SearchConfig(n=8, m=4))[0]
    assert found.answer == "7"


def test_dvts_subtrees_never_share_beams_while_beam_search_collapses() -> None:
    """Request 0 offers x-steps the PRM loves, request 1 y-steps it likes less. Beam search keeps both slots for
    x-descendants; each DVTS subtree keeps its own child, so the second round still grows a y-path."""

    def step(done: str, i: int, j: int) -> str:
        if done:
            return "Answer: 1"
        return f"{'xy'[i % 2]}{j}"

    prm = ScriptedPRM({f"x{j}": 0.99 for j in range(4)} | {f"y{j}": 0.6 for j in range(4)})
    for search, expect in ((beam_search, {"x"}), (dvts, {"x", "y"})):
        expander = ScriptedExpander(step)
        search(["Q"], prompter, expander, prm, SearchConfig(n=8 if search is dvts else 2, m=4))
        second_round = expander.calls[1]
        assert {p.split("\n")[1][0] for p in second_round} == expect
        assert len(second_round) == 2


def test_identical_children_hold_one_slot() -> None:
    expander = ScriptedExpander(lambda done, i, j: "Answer: 4" if done else "2+2 = 4")
    r = beam_search(["Q"], prompter, expander, ScriptedPRM({}), SearchConfig(n=3, m=2))[0]
    assert r.answer == "4" and len(expander.calls[1]) == 1  # six equal children: one beam grows on


def test_token_budget_accounting_per_problem() -> None:
    """Every generated token is counted against its own problem, dropped candidates included; the budget stops new
    rounds once spent, so a problem overshoots by at most one round."""
    expander = ScriptedExpander(step_fn)
    config = SearchConfig(n=2, m=4)
    results = beam_search(["Q", "Q2"], prompter, expander, ScriptedPRM(GOOD), config)
    for r in results:
        assert r.generated_tokens == expander.tokens[r.question]
    # round 1: 2 beams x 4 = 8 candidates; rounds 2-4: 2 live beams x 4 (the answer round ends them)
    assert results[0].candidates == 8 * 4
    capped = ScriptedExpander(step_fn)
    budget = 30
    result = beam_search(["Q"], prompter, capped, ScriptedPRM(GOOD), SearchConfig(n=2, m=4, token_budget=budget))[0]
    first_round = sum(len(t) for t in OPTIONS[0]) * 2
    assert first_round >= budget and result.generated_tokens == first_round == capped.tokens["Q"]
    assert result.answer is None  # cut before it could answer: graded wrong, never a crash


def test_sampling_budget_rounds() -> None:
    expander = ScriptedExpander(step_fn, bad_sampler)
    one = len(bad_sampler("Q", 0))
    r = best_of_n(["Q"], prompter, expander, ScriptedPRM(GOOD), SearchConfig(n=8, m=2, token_budget=2 * one + 1))[0]
    assert r.candidates == 4 and r.generated_tokens == expander.tokens["Q"]


def test_majority_vote_takes_the_common_answer() -> None:
    answers = ["3", "5", "5", "3", "5"]
    expander = ScriptedExpander(step_fn, lambda q, j: f"1+1 = 2\nAnswer: {answers[j]}")
    r = majority_vote(["Q"], prompter, expander, None, SearchConfig(n=5, m=5))[0]
    assert r.answer == "5" and r.candidates == 5


def test_weighted_vote_outvotes_the_majority_when_the_prm_trusts_the_minority() -> None:
    # Three "5"s the PRM scores 0.1 against two "3"s it scores 0.9: the weighted vote says 3 (1.8 > 0.3),
    # majority vote says 5 and best-of-N takes one of the 3s too; all three read the same samples.
    answers = ["3", "5", "5", "3", "5"]
    expander = ScriptedExpander(step_fn, lambda q, j: f"{'good' if answers[j] == '3' else 'bad'}\nAnswer: {answers[j]}")
    prm = ScriptedPRM({"good": 0.9, "bad": 0.1})
    config = SearchConfig(n=5, m=5)
    assert weighted_vote(["Q"], prompter, expander, prm, config)[0].answer == "3"
    assert majority_vote(["Q"], prompter, expander, prm, config)[0].answer == "5"
    low = ScriptedPRM({"good": 0.3, "bad": 0.25})  # 0.6 for "3" against 0.75 for "5": the weight of numbers wins
    assert weighted_vote(["Q"], prompter, expander, low, config)[0].answer == "5"
    assert best_of_n(["Q"], prompter, expander, low, config)[0].answer == "3"


def test_weighted_vote_gives_no_weight_to_samples_without_steps_or_with_nan() -> None:
    # "" has no step, "nanstep" a NaN score: neither may crash the vote or outweigh the one scored sample.
    texts = ["", "nanstep\nAnswer: 5", "nanstep\nAnswer: 5", "good\nAnswer: 3"]
    expander = ScriptedExpander(step_fn, lambda q, j: texts[j])
    prm = ScriptedPRM({"good": 0.2, "nanstep": NAN})
    assert weighted_vote(["Q"], prompter, expander, prm, SearchConfig(n=4, m=4))[0].answer == "3"
    only_nan = ScriptedExpander(step_fn, lambda q, j: texts[1 + j % 2])
    assert weighted_vote(["Q"], prompter, only_nan, prm, SearchConfig(n=2, m=2))[0].answer == "5"  # plain majority


def test_an_expansion_with_no_step_finishes_the_beam_without_a_crash() -> None:
    r = beam_search(["Q"], prompter, ScriptedExpander(lambda d, i, j: ""), ScriptedPRM({}), SearchConfig(n=2, m=2))[0]
    assert r.completion == "" and r.answer is None and r.scores == ()


def test_nan_scores_rank_below_every_finite_score() -> None:
    def step(done: str, i: int, j: int) -> str:
        return "Answer: 9" if done else ["nanstep", "okstep"][j % 2]

    r = beam_search(["Q"], prompter, ScriptedExpander(step), ScriptedPRM({"nanstep": NAN, "okstep": 0.01}),
                    SearchConfig(n=1, m=2))[0]
    assert r.completion.startswith("okstep")
    only_nan = beam_search(["Q"], prompter, ScriptedExpander(lambda d, i, j: "Answer: 9" if d else "nanstep"),
                           ScriptedPRM({"nanstep": NAN}), SearchConfig(n=1, m=2))[0]
    assert only_nan.answer == "9" and math.isnan(only_nan.scores[0])  # still answered: NaN is ranked, not fatal


def test_a_step_the_prm_cannot_fit_ends_that_beam_and_spares_the_others() -> None:
    def step(done: str, i: int, j: int) -> str:
        return "Answer: 2" if done.count("\n") >= 2 else ["s" * 50, "short"][j % 2]

    prm = ScriptedPRM({"short": 0.2, "s" * 50: 0.9}, max_chars=40)
    r = beam_search(["Q"], prompter, ScriptedExpander(step), prm, SearchConfig(n=2, m=2))[0]
    assert r.answer == "2" and r.completion.startswith("short\nshort\n")


def test_a_failed_request_ends_the_beam() -> None:
    r = beam_search(["Q"], prompter, ScriptedExpander(lambda d, i, j: None if d else "a"), ScriptedPRM({}),
                    SearchConfig(n=1, m=2))[0]
    assert r.completion == "a\n" and r.answer is None


def test_unknown_method_and_bad_config() -> None:
    with pytest.raises(ValueError, match="unknown search method"):
        run_search("greedy", ["Q"], prompter, ScriptedExpander(step_fn), ScriptedPRM({}), SearchConfig())
    with pytest.raises(ValueError, match="aggregation"):
        SearchConfig(aggregation="median")
