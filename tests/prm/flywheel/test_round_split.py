"""A flywheel round's held-out samples hold wrong and right solutions whenever the round has enough of each, so the
blocking PRM check can compare F1 (issue 38 item 4): the window's split is stratified round by round, with the
same helper the demo's split uses (prm.training.stratified_splits)."""

from __future__ import annotations

from collections import Counter

from prm.evaluation import heldout_solutions
from prm.flywheel import FlywheelConfig, round_source
from prm.flywheel.rounds import ROUND_DAY
from prm.training import TrainingSetConfig, problem_split, stratified_splits
from prm.training.constants import SPLITS
from warehouse import Warehouse, connect

CONFIG = FlywheelConfig()


def _ids(tag: str, split: str, n: int, cfg: TrainingSetConfig) -> list[str]:
    """``n`` problem ids starting with ``tag`` whose hash split is ``split``."""
    found = (f"{tag}-p{i}" for i in range(10_000))
    return [pid for pid in found if problem_split(pid, 3, cfg) == split][:n]


def _fill(wh: Warehouse, k: int, wrong: list[str], right: list[str]) -> None:
    """Round ``k``: one solution per problem, with a wrong second step (``wrong``) or all correct (``right``)."""
    problems, solutions, steps = [], [], []
    for pid in wrong + right:
        bad = pid in wrong
        problems.append({"problem_id": pid, "task": "arith_word", "split": "test", "question": f"q {pid}",
                         "gold_answer": "3", "n_gold_steps": 3})
        sid = f"{pid}-s0"
        solutions.append({"solution_id": sid, "problem_id": pid, "sample_idx": 0, "text": "a\nb\nc", "n_steps": 3,
                          "is_correct": not bad, "first_error_truth": 1 if bad else -1, "status": "ok",
                          "model": "flywheel-policy@0123456789ab", "final_answer": "4" if bad else "3"})
        steps += [{"solution_id": sid, "problem_id": pid, "step_idx": i, "text": t, "char_start": 2 * i,
                   "char_end": 2 * i + 1, "is_correct_truth": not (bad and i >= 1)} for i, t in enumerate("abc")]
    kw = {"source": round_source(k), "day": ROUND_DAY}
    wh.write("problems", problems, **kw)
    wh.write("solutions", solutions, **kw)
    wh.write("steps", steps, **kw)


def test_each_rounds_held_out_samples_hold_both_outcomes(wh: Warehouse) -> None:
    cfg = CONFIG.training_set(2)
    for k in (0, 1):  # both outcomes in every split of rounds 0 and 1
        _fill(wh, k, [p for s in SPLITS for p in _ids(f"r{k}w", s, 2, cfg)],
              [p for s in SPLITS for p in _ids(f"r{k}r", s, 2, cfg)])
    # Round 2's three problems with a wrong solution all hash into train: a split of the window as a whole already
    # holds wrong solutions in test (rounds 0 and 1), so it moved none of round 2's there.
    _fill(wh, 2, _ids("r2w", "train", 3, cfg), [p for s in SPLITS for p in _ids("r2r", s, 2, cfg)])
    con = connect(wh.root)
    for k in (0, 1, 2):
        split = stratified_splits(con, CONFIG.training_set(k))
        held = heldout_solutions(con, split, source=round_source(k))
        outcomes = {s: Counter("wrong" if r["first_error"] >= 0 else "right" for r in rows)
                    for s, rows in held.items()}
        assert all(outcomes[s]["wrong"] and outcomes[s]["right"] for s in ("val", "test")), (k, outcomes)


def test_a_rounds_split_does_not_change_when_later_rounds_join_the_window(wh: Warehouse) -> None:
    cfg = CONFIG.training_set(1)
    _fill(wh, 0, _ids("r0w", "train", 3, cfg), [p for s in SPLITS for p in _ids("r0r", s, 2, cfg)])
    con = connect(wh.root)
    before = stratified_splits(con, CONFIG.training_set(0))
    _fill(wh, 1, [p for s in SPLITS for p in _ids("r1w", s, 2, cfg)],
          [p for s in SPLITS for p in _ids("r1r", s, 2, cfg)])
    after = stratified_splits(connect(wh.root), CONFIG.training_set(1))
    pids = [r[0] for r in con.execute("SELECT problem_id FROM problems WHERE source = ?", [round_source(0)]).fetchall()]
    assert {p: before(p, 3) for p in pids} == {p: after(p, 3) for p in pids}
