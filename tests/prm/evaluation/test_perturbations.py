"""The off-policy perturbation suite: each wrong kind is wrong by exact truth, each reformatted kind keeps the
right value, a fixed seed repeats, and the report counts what it should."""

from __future__ import annotations

import random
import time

import pytest

from prm.evaluation import perturbation_report
from prm.evaluation.perturbations import (
    REFORMATTED_KINDS,
    WRONG_KINDS,
    Perturbation,
    parse_equation,
    perturb,
    perturbation_pairs,
    score_perturbations,
)
from prm.tasks.arithmetic import ArithmeticConfig, generate_problems, step_truth

PROBLEMS = [p for n in (3, 5, 8) for p in generate_problems(
    40, ArithmeticConfig(n_ops=n, operators="+-", max_value=9, style="word"), seed=n)]


def _cases():
    rng = random.Random(0)
    for i, problem in enumerate(PROBLEMS):
        other = PROBLEMS[(i + 1) % len(PROBLEMS)]
        for k in range(problem.n_ops):
            nxt = problem.gold_steps[k + 1] if k + 1 < problem.n_ops else None
            yield problem, k, perturb(problem.gold_steps[:k], problem.gold_steps[k], nxt,
                                      rng.choice(other.gold_steps), rng)


def test_every_wrong_kind_is_wrong_by_exact_truth():
    seen = set()
    for problem, k, kinds in _cases():
        prefix = list(problem.gold_steps[:k])
        assert step_truth(problem, [*prefix, problem.gold_steps[k]])[-1]
        for kind, text in kinds.items():
            if kind in WRONG_KINDS:
                seen.add(kind)
                assert not step_truth(problem, [*prefix, text])[-1], (kind, problem.gold_steps[k], text)
    assert seen == set(WRONG_KINDS)


def test_reformatted_kinds_keep_the_right_value():
    seen = set()
    for problem, k, kinds in _cases():
        for kind, text in kinds.items():
            if kind not in REFORMATTED_KINDS:
                continue
            seen.add(kind)
            value = text.rstrip(".").split("=")[1].split()[0]
            target = problem.intermediates[k + 1] if kind == "merged_ops" else problem.intermediates[k]
            assert float(value) == target, (kind, text)
    assert seen == set(REFORMATTED_KINDS)


@pytest.mark.parametrize(("step", "expected"), [
    ("11-6 = 5", (11, "-", 6, 5)), ("-3+4 = 1", (-3, "+", 4, 1)), ("11 - 6 = 5", None), ("hello", None),
    ("1" * 100 + "+1 = 2", None), ("", None)])
def test_parse_equation(step, expected):
    eq = parse_equation(step)
    assert (None if eq is None else (eq.a, eq.op, eq.b, eq.c)) == expected


def test_parse_equation_is_linear_on_hostile_text():
    started = time.process_time()
    for text in ("1" * 100_000, "1+" * 50_000, "1+1 = " + "1" * 100_000):
        assert parse_equation(text) is None
    assert time.process_time() - started < 2.0


def _solutions():
    sols = []
    for p in PROBLEMS[:30]:
        steps = list(p.gold_steps)
        sols.append({"problem_id": p.problem_id, "steps": steps, "first_error": -1, "solution_id": p.problem_id})
        wrong = [*steps[:1], "1+1 = 3"]
        sols.append({"problem_id": p.problem_id, "steps": wrong, "first_error": 1, "solution_id": p.problem_id + "w"})
    return sols


def test_pairs_repeat_under_a_fixed_seed_and_change_with_another():
    a, b, c = (perturbation_pairs(_solutions(), positions=2, seed=s) for s in (0, 0, 1))
    assert a == b
    assert a != c
    assert {p.kind for p in a} == set(WRONG_KINDS) | set(REFORMATTED_KINDS)
    assert all(p.right in dict.fromkeys(s for sol in _solutions() for s in sol["steps"]) for p in a)


def test_pairs_use_only_right_steps_and_prefixes():
    sols = [{"problem_id": "p", "steps": ["1+2 = 3", "3+4 = 8", "8+1 = 9"], "first_error": 1}]
    pairs = perturbation_pairs(sols, positions=3)
    assert {(p.prefix, p.right) for p in pairs} == {((), "1+2 = 3")}


def test_report_detection_ties_and_thresholds():
    pairs = [Perturbation("p", (), "1+2 = 3", "1+2 = 4", "slip_small"),
             Perturbation("p", (), "1+2 = 3", "hello world", "nonsense"),
             Perturbation("q", (), "2+2 = 4", "hello world", "nonsense"),
             Perturbation("q", (), "2+2 = 4", "2 + 2 = 4", "spaced")]
    report = perturbation_report([(pairs, [0.8, 0.8, 0.4, 0.4], [0.1, 0.9, 0.4, 0.45], 0.5)])
    assert report["slip_small"]["detection"] == 1.0
    assert report["nonsense"]["detection"] == 0.25  # one above the right step, one tie
    assert report["nonsense"]["below_threshold"] == 0.5
    assert report["nonsense"]["n_problems"] == 2
    assert report["right_at_or_above_threshold"] == 0.5  # p's right step 0.8 >= 0.5, q's 0.4 below
    assert report["reformatted"]["spaced"]["at_or_above_threshold"] == 0.0
    assert set(report) - {"reformatted", "right_at_or_above_threshold", "right_at_or_above_threshold_ci"} \
        <= set(WRONG_KINDS)


def test_score_perturbations_scores_each_right_step_once():
    calls = []

    def score(items):
        calls.extend(items)
        return [[0.0] * (len(steps) - 1) + [len(steps[-1]) / 100] for _, steps in items]

    pairs = [Perturbation("p", ("a",), "1+2 = 3", "x", "nonsense"), Perturbation("p", ("a",), "1+2 = 3", "", "empty")]
    right, perturbed = score_perturbations(score, {"p": "Q"}, pairs)
    assert right == [0.07, 0.07] and perturbed == [0.01, 0.0]
    assert len(calls) == 3


def test_pairs_past_the_context_are_left_out_not_fatal():
    from prm.evaluation.perturbations import fitting_pairs
    from prm.format import ContextOverflowError

    def score(items):
        if any(len(step) > 50 for _, steps in items for step in steps):
            raise ContextOverflowError("past the context")
        return [[0.5] * len(steps) for _, steps in items]

    pairs = perturbation_pairs(_solutions()[:6])
    kept, right, perturbed = fitting_pairs(score, {s["problem_id"]: "Q" for s in _solutions()}, pairs)
    assert "very_long" in {p.kind for p in pairs} and "very_long" not in {p.kind for p in kept}
    assert len(kept) == len(right) == len(perturbed) == sum(p.kind != "very_long" for p in pairs)
