"""The pure parts of benchmarks/rl_threshold.py on scripted numbers: the validation draw stays apart from every problem
RL trains or is measured on, truth labels, the flawed-positive flag's precision and recall, the ProcessBench choice."""

from __future__ import annotations

import doctest

import pytest

import benchmarks.rl_threshold as rl_threshold
from benchmarks.rl import TRUTH_PRM_SEED
from benchmarks.rl_threshold import ValSample, choose, flawed_detection, label, validation_problems
from prm.rl import RLRunConfig, eval_problems
from prm.rl.data import train_problems
from prm.tasks import ArithmeticConfig, generate_problems


def test_doctests() -> None:
    assert doctest.testmod(rl_threshold, optionflags=doctest.ELLIPSIS).failed == 0


def test_validation_problems_are_the_rl_training_lengths_and_never_an_rl_or_truth_prm_problem() -> None:
    config = RLRunConfig()
    val = validation_problems(config, 48)
    assert sorted({p.n_ops for p in val}) == sorted({*config.train_ops, *config.anchor_ops})
    assert len(val) == 48 * len({*config.train_ops, *config.anchor_ops})
    ids = {p.problem_id for p in val}
    for seed in (0, 1, 2, 3, 4):  # the seeds the committed RL runs use
        run = RLRunConfig(seed=seed)
        assert not ids & {p.problem_id for p in eval_problems(run)}, seed
        assert not ids & {p.problem_id for p in train_problems(run)}, seed
        task = {"operators": "+-", "max_value": 9, "style": "word"}  # benchmarks/rl.py's truth_prm draw
        truth = {p.problem_id for ops in range(6, 11)
                 for p in generate_problems(48, ArithmeticConfig(n_ops=ops, **task), seed=TRUTH_PRM_SEED + seed + ops)}
        assert not ids & truth, seed


def test_label_reads_exact_truth_and_the_answer() -> None:
    p = generate_problems(1, ArithmeticConfig(n_ops=3, operators="+-", max_value=9, style="word"), seed=5)[0]
    totals = p.intermediates
    good = list(p.gold_steps)
    bad = [*good[:1], f"{totals[0]} + 1 = {totals[0] + 1}", *good[2:]]  # step 1 wrong, the answer line right
    texts = [["\n".join(good) + f"\nAnswer: {p.answer}", "\n".join(bad) + f"\nAnswer: {p.answer}",
              "\n".join(good) + f"\nAnswer: {p.answer + 1}"]]
    out = label([p], texts, [good, bad, good], [[0.9] * 3, [0.9, 0.2, 0.8], [0.9] * 3])
    assert [(s.first_error, s.right) for s in out] == [(-1, True), (1, True), (-1, False)]
    assert [s.solution_id for s in out] == [f"{p.problem_id}/{j}" for j in range(3)]
    with pytest.raises(ValueError, match="3 samples but 2 step lists"):
        label([p], texts, [good, bad], [[0.9] * 3, [0.9, 0.2, 0.8], [0.9] * 3])


# Eight right answers (three truly flawed) and two wrong ones, scored as the shipped PRM does: low everywhere.
SCRIPTED = [
    ValSample("r1", "p1", (0.40, 0.30, 0.35), -1, True),
    ValSample("r2", "p1", (0.45, 0.25), -1, True),
    ValSample("r3", "p2", (0.50, 0.20, 0.30), -1, True),
    ValSample("r4", "p2", (0.40, 0.35), -1, True),
    ValSample("r5", "p3", (0.30, 0.22), -1, True),
    ValSample("f1", "p3", (0.40, 0.05, 0.30), 1, True),
    ValSample("f2", "p4", (0.08, 0.30), 0, True),
    ValSample("f3", "p4", (0.40, 0.30, 0.12), 2, True),
    ValSample("w1", "p5", (0.30, 0.02, 0.01), 1, False),
    ValSample("w2", "p5", (0.06, 0.03), 0, False),
]


def test_flawed_detection_at_the_class_boundary_flags_every_right_answer() -> None:
    at_default = flawed_detection(SCRIPTED, 0.5)
    assert at_default == {"right": 8, "flagged_share": 1.0, "true_share": 3 / 8, "precision": 3 / 8, "recall": 1.0}
    at_low = flawed_detection(SCRIPTED, 0.15)
    assert at_low == {"right": 8, "flagged_share": 3 / 8, "true_share": 3 / 8, "precision": 1.0, "recall": 1.0}
    assert flawed_detection(SCRIPTED[8:], 0.5) == {"right": 0, "flagged_share": None, "true_share": None,
                                                   "precision": None, "recall": None}


def test_choose_picks_the_best_processbench_f1_below_the_default() -> None:
    result = choose(SCRIPTED, 0.5)
    # every wrong first step is the only one below 0.2 before it, and every clean solution's lowest step is >= 0.2:
    # the lowest threshold that gets all ten right lies between 0.12 and 0.2 (a midpoint of adjacent scores)
    assert result["chosen_on"] == "validation" and 0.12 < result["threshold"] <= 0.2
    assert result["f1_at_threshold"] == 1.0
    assert result["f1_at_default"] == 0.0  # at 0.5 no clean solution is accepted
    assert result["flawed_at_threshold"]["flagged_share"] == 3 / 8
    assert result["flawed_at_default"]["flagged_share"] == 1.0
    assert result["counts"] == {"samples": 10, "scored": 10, "wrong_steps": 5, "right_answers": 8}
    assert [row["threshold"] for row in result["by_threshold"]] == list(rl_threshold.GRID)


def test_choose_falls_back_to_the_default_without_a_wrong_solution() -> None:
    clean = [s for s in SCRIPTED if s.first_error < 0]
    result = choose(clean, 0.5)
    assert result["threshold"] == 0.5 and result["chosen_on"].startswith("default 0.5")
