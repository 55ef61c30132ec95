"""The rollout budget over one warehouse partition: label_partition stops, says why, and a resume counts what the
partition already spent; label_costs then sums the labels' costs."""

from __future__ import annotations

from prm.generation import BackendInfo, Completion
from prm.labeling import MCConfig, label_partition
from warehouse import Warehouse, connect

KW = {"source": "arith", "day": "2026-11-20"}


class _Answers7:
    """A policy that finishes every prefix with 'Answer: 7' (the gold answer) in 3 tokens."""

    info = BackendInfo("fake", "fake", 512)

    def generate(self, requests):
        return [Completion(texts=("Answer: 7",) * r.n, finish_reasons=("stop",) * r.n, prompt_tokens=5,
                           completion_tokens=(3,) * r.n, index=i) for i, r in enumerate(requests)]

    def close(self) -> None:
        pass


def _fill(wh: Warehouse) -> None:
    wh.write("problems", [{"problem_id": "p1", "task": "arith_chain", "split": "test", "question": "1+2*3",
                           "gold_answer": "7"}], **KW)
    wh.write("solutions", [
        {"solution_id": f"s{i}", "problem_id": "p1", "sample_idx": i, "text": "2*3 = 6\n1+6 = 7\nAnswer: 7",
         "n_steps": 2, "final_answer": "7", "is_correct": True, "status": "ok", "model": "policy",
         "completion_tokens": 20} for i in range(3)], **KW)
    wh.write("steps", [{"solution_id": f"s{i}", "problem_id": "p1", "step_idx": k, "text": t,
                        "char_start": 8 * k, "char_end": 8 * k + 7}
                       for i in range(3) for k, t in enumerate(["2*3 = 6", "1+6 = 7"])], **KW)


def _label(wh: Warehouse, budget: int, run_id: str):
    return label_partition(wh, "mc", MCConfig(n_rollouts=2, max_rollouts_per_partition=budget), _Answers7,
                           model="policy", run_id=run_id, prompt=lambda q: f"Q: {q}\n", chunk_solutions=1,
                           progress=lambda _: None, **KW)


def test_the_budget_stops_labeling_and_a_resume_counts_what_was_spent(wh: Warehouse) -> None:
    _fill(wh)
    first = _label(wh, 5, "r1")  # a solution's worst case is 2 steps x 2 rollouts = 4
    assert first.labeled_solutions == 1 and first.cost_rollouts == 4
    assert first.budget_stopped is not None and "max_rollouts_per_partition=5" in first.budget_stopped
    assert "1 of 3 solutions" in first.budget_stopped

    again = _label(wh, 5, "r2")  # the partition already spent its budget: nothing more
    assert again.labeled_solutions == 0 and again.skipped_solutions == 1 and again.budget_stopped is not None

    more = _label(wh, 12, "r3")  # a larger budget labels the rest
    assert more.labeled_solutions == 2 and more.budget_stopped is None
    stored = wh.read_partition("step_labels", **KW).to_pylist()
    assert len({r["solution_id"] for r in stored}) == 3
    costs = connect(wh.root).execute("SELECT method, labeled_steps, rollouts, tokens FROM label_costs").fetchall()
    total = sum(r["cost_rollouts"] for r in stored)
    assert costs == [("mc", 6, total, 3 * total)] and total == 8  # s1 and s2 share prefixes in one run


def test_the_asset_metadata_says_when_the_budget_stopped(wh: Warehouse) -> None:
    from assets.labeling import _metadata

    _fill(wh)
    meta = _metadata(_label(wh, 5, "r1"))
    assert "raise the budget" in meta["budget_stopped"]
    assert "budget_stopped" not in _metadata(_label(wh, 100, "r2"))
