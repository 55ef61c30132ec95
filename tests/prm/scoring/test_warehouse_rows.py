"""step_scores rows: one per step, the scorer's scores, schema-valid, and refused when steps are missing."""

from __future__ import annotations

import random

import pytest

from prm.scoring import ScorerConfig, load_prm
from prm.scoring.warehouse_rows import score_rows_for_warehouse
from warehouse.schemas import STEP_SCORES

SOLUTIONS = {"s0": ("p0", "3+4*2 =", ["4*2 = 8", "3+8 = 11"]), "s1": ("p1", "9-2-5 =", ["9-2 = 7", "7-5 = 3", "3"])}


def _step_rows():
    rows = [{"solution_id": sid, "problem_id": pid, "question": q, "step_idx": k, "text": text}
            for sid, (pid, q, steps) in SOLUTIONS.items() for k, text in enumerate(steps)]
    random.Random(0).shuffle(rows)  # SQL gives no order unless asked
    return rows


@pytest.fixture(scope="module")
def scorer(prm_folders):
    return load_prm(prm_folders["prm-pipeline"], ScorerConfig(device="cpu", torch_threads=1))


def test_rows_carry_each_steps_score(scorer, wh):
    out = score_rows_for_warehouse(scorer, "tiny@abc", _step_rows(), batch_size=2)
    assert [(r["solution_id"], r["step_idx"]) for r in sorted(out, key=lambda r: (r["solution_id"], r["step_idx"]))] \
        == [("s0", 0), ("s0", 1), ("s1", 0), ("s1", 1), ("s1", 2)]
    for sid, (pid, question, steps) in SOLUTIONS.items():
        mine = sorted((r for r in out if r["solution_id"] == sid), key=lambda r: r["step_idx"])
        assert [r["score"] for r in mine] == pytest.approx(scorer.score_steps(question, steps), abs=1e-5)
        assert {r["problem_id"] for r in mine} == {pid} and {r["model"] for r in mine} == {"tiny@abc"}
    assert set(out[0]) <= set(STEP_SCORES.names)
    assert wh.write("step_scores", out, source="arith").rows == 5  # the warehouse accepts them as they are


def test_a_missing_step_is_refused(scorer):
    rows = [r for r in _step_rows() if not (r["solution_id"] == "s1" and r["step_idx"] == 1)]
    with pytest.raises(ValueError, match=r"solution s1 has steps \[0, 2\], not 0..1"):
        score_rows_for_warehouse(scorer, "tiny@abc", rows)


def test_rows_without_the_question_say_what_to_select(scorer):
    rows = [{k: v for k, v in r.items() if k != "question"} for r in _step_rows()]
    with pytest.raises(ValueError, match=r"lacks \['question'\].*JOIN problems"):
        score_rows_for_warehouse(scorer, "tiny@abc", rows)
