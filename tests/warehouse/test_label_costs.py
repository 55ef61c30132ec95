"""The label_costs view: rollouts and tokens per method, source and day, per labeled step."""

from __future__ import annotations

from warehouse import Warehouse, connect


def _rows(method: str, costs: list[tuple[int, int, bool | None]], sid: str = "s") -> list[dict]:
    """One step_labels row per (cost_rollouts, cost_tokens, hard_label)."""
    return [{"solution_id": sid, "problem_id": "p", "step_idx": k, "method": method,
             "soft_label": None if hard is None else float(hard), "hard_label": hard,
             "status": "unverifiable" if hard is None else "labeled", "labeler_version": "t",
             "cost_rollouts": r, "cost_tokens": t}
            for k, (r, t, hard) in enumerate(costs)]


def test_label_costs_sums_each_partition_and_method(wh: Warehouse) -> None:
    a = {"source": "arith", "day": "2026-01-01", "run_id": "r"}
    wh.write("step_labels", _rows("mc", [(8, 80, True), (8, 90, True), (8, 70, False)]), writer="mc", **a)
    wh.write("step_labels", _rows("omegaprm", [(8, 50, True), (0, 0, True), (0, 0, None)]), writer="omegaprm",
             **a)
    wh.write("step_labels", _rows("sympy", [(0, 0, True), (0, 0, None)]), writer="formal", **a)
    b = {"source": "arith", "day": "2026-01-02", "run_id": "r"}
    wh.write("step_labels", _rows("mc", [(4, 40, True)], sid="t") + _rows("mc", [(12, 10, False)], sid="u"),
             writer="mc", **b)
    got = connect(wh.root).execute(
        "SELECT method, source, day, n_labels, labeled_steps, rollouts, tokens, rollouts_per_labeled_step, "
        "tokens_per_labeled_step FROM label_costs").fetchall()
    assert got == [
        ("mc", "arith", "2026-01-01", 3, 3, 24, 240, 8.0, 80.0),
        ("mc", "arith", "2026-01-02", 2, 2, 16, 50, 8.0, 25.0),
        ("omegaprm", "arith", "2026-01-01", 3, 2, 8, 50, 4.0, 25.0),  # an unverifiable step is no labeled step
        ("sympy", "arith", "2026-01-01", 2, 1, 0, 0, 0.0, 0.0),
    ]


def test_label_costs_of_a_method_with_no_labeled_step_has_no_rate(wh: Warehouse) -> None:
    wh.write("step_labels", _rows("mc", [(8, 80, None)]), source="arith", day="2026-01-01", run_id="r", writer="mc")
    row = connect(wh.root).execute("SELECT labeled_steps, rollouts, rollouts_per_labeled_step FROM label_costs")
    assert row.fetchall() == [(0, 8, None)]


def test_label_costs_reads_an_empty_warehouse(wh: Warehouse) -> None:
    assert connect(wh.root).execute("SELECT count(*) FROM label_costs").fetchone() == (0,)
    cols = [r[0] for r in connect(wh.root).execute("DESCRIBE label_costs").fetchall()]
    assert cols[:3] == ["method", "source", "day"] and "rollouts_per_labeled_step" in cols

