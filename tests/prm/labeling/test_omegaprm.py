"""OmegaPRM mechanics on the scripted oracle: screening, selection, binary search, N/MC, pool, budget."""

from __future__ import annotations

import math

import pytest

from prm.format import segment
from prm.labeling import OmegaPRMConfig
from prm.labeling.omega_search import QuestionSearch, State
from prm.labeling.omegaprm import OmegaPRMLabeler, run_lockstep
from prm.labeling.types import RolloutOutcome

GOOD = ["ok"] * 8
WRONG_AT_5 = ["ok"] * 5 + ["bad", "ok", "ok"]


def _labels(run, sid):
    return {lb.step_idx: lb for lb in run.labels if lb.solution_id == sid}


def test_binary_search_path_and_extracted_labels(oracle_cls, sampler_of, solution):
    sols = [solution("good", "p", GOOD), solution("w", "p", WRONG_AT_5)]
    sampler = sampler_of(oracle_cls(pattern=(True, False)))
    run = OmegaPRMLabeler().label(sols, sampler)
    # lo=1, hi=8: 4 steps alive -> right; 6 steps dead -> left; 5 steps alive -> right; first error = step 5
    assert [len(s) for s in sampler.oracle.asked] == [4, 6, 5]
    assert run.sampler_calls == 3 and run.cost_rollouts == 24
    w = _labels(run, "w")
    assert {k: (lb.status, lb.soft_label) for k, lb in w.items() if lb.status == "labeled"} == {
        3: ("labeled", 0.5), 4: ("labeled", 0.5), 5: ("labeled", 0.0)}
    assert [w[k].hard_label for k in range(8)] == [True] * 5 + [False] * 3
    assert {lb.first_error for lb in w.values()} == {5}
    good = _labels(run, "good")
    assert all(lb.hard_label and lb.first_error == -1 for lb in good.values())
    # its first five steps are w's, so the shared prefixes carry the tree's estimates
    assert [good[k].status for k in range(8)] == ["by_convention"] * 3 + ["labeled"] * 2 + ["by_convention"] * 3
    assert sum(lb.cost_rollouts for lb in run.labels) == run.cost_rollouts


def test_selection_prefers_short_rollouts_and_counts_visits(solution):
    sols = [solution("c", "p", GOOD),
            *(solution(f"w{t}", "p", [f"v{t}", *WRONG_AT_5[1:]], tokens=t) for t in (300, 100, 200))]
    search = QuestionSearch(sols, OmegaPRMConfig())
    pair = search.pool[next(iter(search.pool))]
    q = 0.5 ** (1 - 0.25) * 0.9 ** (300 / 500)  # MC(root) = 1 correct of 4 sampled solutions
    assert search.score(pair) == pytest.approx(q)  # sum N = 0: no exploration bonus yet
    order = []
    while (p := search.select()) is not None:
        order.append(p.solution_id)
        assert search.tree[search.root].visits == len(order)
    assert order == ["w100", "w200", "w300"]


def test_visit_counts_make_exploration_switch_states(solution):
    search = QuestionSearch([solution("c", "p", GOOD)], OmegaPRMConfig(c_puct=1.0, screen=False))
    half = [RolloutOutcome("", True, 1), RolloutOutcome("", False, 1)]
    for name in ("A", "B"):
        target, seg = search._target(segment(f"{name}\n"), 1)
        search.tree[target.prefix_hash] = State(seg, 1, target, list(half))
    a, b = (search._target(segment(f"{n}\n"), 1)[0].prefix_hash for n in ("A", "B"))
    from prm.labeling.omega_search import Pair

    for pair in (Pair(a, segment("A\nx\n"), 1, 10.0), Pair(a, segment("A\ny\n"), 1, 10.0),
                 Pair(b, segment("B\nx\n"), 1, 10.0)):
        search._add_pair(pair)
    first, second = search.select(), search.select()
    assert (first.state, second.state) == (a, b)  # with N stuck at 0 the second pick would be A again
    assert search.score(search.pool[(a, ("y",))]) == pytest.approx(0.5**0.5 * 0.9**0.02 + math.sqrt(2) / 2)


def test_exhausted_pairs_are_never_selected_again(oracle_cls, sampler_of, solution):
    sols = [solution("c", "p", GOOD), solution("w1", "p", WRONG_AT_5), solution("w2", "p", WRONG_AT_5)]
    labeler = OmegaPRMLabeler(OmegaPRMConfig(search_generated=True, max_searches=50))
    search = labeler.searches(sols)[0]
    run_lockstep([search], sampler_of(oracle_cls()))
    keys = [(p.state, p.steps) for p in search.selections]
    assert len(keys) == len(set(keys))
    assert search.first_error == {"w1": 5, "w2": 5}  # identical texts: one search locates both
    assert sum(p.solution_id is not None for p in search.selections) == 1
    # the oracle's wrong rollouts always hold another error to find: the tree grows until max_searches
    assert len(search.selections) == 50
    assert not set(keys) & set(search.pool)
    assert all(search.mc_of(p.state) for p in search.selections)  # only states with MC > 0 feed the pool


def test_mc_estimates_are_reused_across_searches(oracle_cls, sampler_of, solution):
    w1 = ["ok"] * 6 + ["bad", "ok"]
    w2 = ["ok"] * 4 + ["ok2", "bad", "ok", "ok"]  # shares the first four steps with w1
    sampler = sampler_of(oracle_cls())
    OmegaPRMLabeler().label([solution("c", "p", GOOD), solution("a", "p", w1), solution("b", "p", w2)], sampler)
    assert len(sampler.oracle.asked) == len(set(sampler.oracle.asked))
    assert tuple(["ok"] * 4) in sampler.oracle.asked


@pytest.mark.parametrize("n_questions", [1, 3, 7])
def test_one_sampler_call_per_round_across_questions(oracle_cls, sampler_of, solution, n_questions):
    sols = []
    for i in range(n_questions):
        wrong = ["ok"] * (i % 7) + ["bad"] + ["ok"] * (7 - i % 7)
        sols += [solution(f"c{i}", f"p{i}", GOOD), solution(f"w{i}", f"p{i}", wrong)]
    sampler = sampler_of(oracle_cls())
    run = OmegaPRMLabeler().label(sols, sampler)
    assert run.sampler_calls == 3 and sampler.call_sizes == [n_questions] * 3  # log2(8) rounds, all questions
    assert run.extra["first_errors_located"] == n_questions
    assert all(_labels(run, f"w{i}")[0].first_error == i % 7 for i in range(n_questions))


@pytest.mark.parametrize(
    "config, searches, max_used",
    [
        (OmegaPRMConfig(max_searches=1), 1, 24),
        (OmegaPRMConfig(max_rollouts=16), 1, 16),  # second estimate fits, third would not
        (OmegaPRMConfig(max_rollouts=40), 2, 40),
    ],
)
def test_budget_is_respected(oracle_cls, sampler_of, solution, config, searches, max_used):
    sols = [solution("c", "p", GOOD)] + [solution(f"w{i}", "p", ["ok"] * i + ["bad"] * (8 - i)) for i in (2, 5, 6)]
    search = OmegaPRMLabeler(config).searches(sols)[0]
    run_lockstep([search], sampler_of(oracle_cls()))
    assert len(search.selections) == searches
    assert search.rollouts_used <= max_used


@pytest.mark.parametrize(
    "correct, screen, screened, rows",
    [
        ([True, True], True, True, 16),  # all right: screened, both labeled good by convention
        ([False, False], True, True, 0),  # all wrong: the paper drops the question
        ([False, False], False, False, 16),  # no screening: both searched (first error at step 0)
        ([True, False], True, False, 16),
        ([True, None], True, False, 16),  # no gradable answer = did not reach gold: searched like a wrong one
    ],
)
def test_screening(oracle_cls, sampler_of, solution, correct, screen, screened, rows):
    sols = [solution(f"s{i}", "p", GOOD if ok else ["bad"] * 8, is_correct=ok) for i, ok in enumerate(correct)]
    labeler = OmegaPRMLabeler(OmegaPRMConfig(screen=screen))
    search = labeler.searches(sols)[0]
    assert search.screened_out is screened
    run = labeler.label(sols, sampler_of(oracle_cls()))
    assert len(run.labels) == rows


def test_extra_root_rollouts_join_screening_in_the_first_round(oracle_cls, sampler_of, solution):
    sols = [solution("w", "p", WRONG_AT_5), solution("w2", "q", WRONG_AT_5)]
    sampler = sampler_of(oracle_cls(pattern=(True, False)))
    run = OmegaPRMLabeler(OmegaPRMConfig(n_root_rollouts=4)).label(sols, sampler)
    assert sampler.call_sizes[0] == 2 and sampler.oracle.asked[0] == ()  # both roots in one call
    assert run.extra["screened_out"] == 0  # 2 of 4 root rollouts right: both questions kept
    assert run.cost_rollouts == 2 * (4 + 24) == sum(lb.cost_rollouts for lb in run.labels)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"alpha": 0.0}, "alpha=0.0"), ({"length_tokens": 0}, "length_tokens=0"),
     ({"max_rollouts": 4}, "max_rollouts=4"), ({"c_puct": -1}, "c_puct=-1")],
)
def test_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OmegaPRMConfig(**kwargs)
