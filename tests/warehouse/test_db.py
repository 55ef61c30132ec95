"""DuckDB views over the warehouse: every table and every convenience view."""

from __future__ import annotations

import pytest

from warehouse import Warehouse, connect
from warehouse.db import CONVENIENCE_VIEWS, snapshot_versions, view_names
from warehouse.schemas import TABLES

DAY = "2026-11-20"


@pytest.fixture
def filled(wh: Warehouse) -> Warehouse:
    kw = {"source": "arith", "day": DAY}
    wh.write("problems", [{"problem_id": "p1", "task": "arith_chain", "split": "test", "question": "1+2*3",
                           "gold_answer": "7"}], **kw)
    wh.write("solutions", [
        {"solution_id": "s1", "problem_id": "p1", "sample_idx": 0, "text": "2*3 = 6\n1+6 = 7\nAnswer: 7",
         "n_steps": 2, "final_answer": "7", "is_correct": True, "status": "ok", "model": "m",
         "completion_tokens": 20},
        {"solution_id": "s2", "problem_id": "p1", "sample_idx": 1, "text": "2*3 = 5\n1+5 = 6\nAnswer: 6",
         "n_steps": 2, "final_answer": "6", "is_correct": False, "status": "ok", "model": "m",
         "completion_tokens": 20},
    ], **kw)
    wh.write("steps", [
        {"solution_id": s, "problem_id": "p1", "step_idx": i, "text": t, "is_correct_truth": ok,
         "char_start": 8 * i, "char_end": 8 * i + len(t)}  # each step is 7 characters and a newline
        for s, i, t, ok in [("s1", 0, "2*3 = 6", True), ("s1", 1, "1+6 = 7", True),
                            ("s2", 0, "2*3 = 5", False), ("s2", 1, "1+5 = 6", False)]
    ], **kw)
    labels = [
        {"solution_id": s, "problem_id": "p1", "step_idx": i, "method": m, "soft_label": v, "hard_label": v > 0,
         "status": "labeled", "labeler_version": "t", "cost_rollouts": 8, "cost_tokens": 100}
        for m in ("mc", "sympy") for s, i, v in [("s1", 0, 1.0), ("s1", 1, 1.0), ("s2", 0, 0.0), ("s2", 1, 0.0)]
    ]
    wh.write("step_labels", labels, **kw)
    return wh


def test_every_table_is_queryable_when_empty(wh: Warehouse) -> None:
    con = connect(wh.root)
    for name in view_names():
        expected = len(TABLES) if name == "warehouse_versions" else 0  # one row per table, version null
        assert con.execute(f"SELECT count(*) FROM {name}").fetchone() == (expected,), name
    assert set(snapshot_versions(con).values()) == {None}


def test_table_views_expose_the_logical_schema(filled: Warehouse) -> None:
    con = connect(filled.root)
    for name, schema in TABLES.items():
        cols = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
        assert cols == set(schema.names), name


def test_labeled_steps_puts_every_method_side_by_side(filled: Warehouse) -> None:
    con = connect(filled.root)
    rows = con.execute("SELECT solution_id, step_idx, step_text, mc_soft, sympy_hard, omegaprm_soft, "
                   "is_correct_truth FROM labeled_steps").fetchall()
    assert rows[0] == ("s1", 0, "2*3 = 6", 1.0, True, None, True)
    assert rows[2] == ("s2", 0, "2*3 = 5", 0.0, False, None, False)
    assert len(rows) == 4


def test_solution_accuracy_and_label_costs(filled: Warehouse) -> None:
    con = connect(filled.root)
    acc = con.execute("SELECT source, task, n_solutions, accuracy FROM solution_accuracy").fetchall()
    assert acc == [("arith", "arith_chain", 2, 0.5)]
    costs = con.execute("SELECT method, n_labels, share_positive, rollouts FROM label_costs").fetchall()
    assert costs == [("mc", 4, 0.5, 32), ("sympy", 4, 0.5, 32)]


def test_a_connection_reads_one_snapshot_and_names_its_versions(filled: Warehouse) -> None:
    con = connect(filled.root)
    filled.write("problems", [{"problem_id": "p2", "task": "t", "split": "s", "question": "q",
                               "gold_answer": "1"}], source="arith", day="2026-11-21")
    assert con.execute("SELECT count(*) FROM problems").fetchone() == (1,)  # the snapshot of connect()
    assert connect(filled.root).execute("SELECT count(*) FROM problems").fetchone() == (2,)
    assert snapshot_versions(con)["problems"] == 0 and filled.version("problems") == 1


def test_time_travel_reads_a_past_version_of_one_table(filled: Warehouse) -> None:
    filled.write("problems", [{"problem_id": "p1", "task": "t", "split": "s", "question": "changed",
                               "gold_answer": "1"}], source="arith", day=DAY, replace=True)
    past = connect(filled.root, versions={"problems": 0})
    assert past.execute("SELECT question FROM problems").fetchall() == [("1+2*3",)]
    assert snapshot_versions(past)["problems"] == 0 and snapshot_versions(past)["steps"] == filled.version("steps")
    assert connect(filled.root).execute("SELECT question FROM problems").fetchall() == [("changed",)]
    assert filled.read("problems", version=0).column("question").to_pylist() == ["1+2*3"]
    with pytest.raises(KeyError, match="unknown tables"):
        connect(filled.root, versions={"nope": 1})


@pytest.mark.parametrize("fill", [False, True], ids=["empty", "filled"])
def test_every_listed_name_is_in_duckdbs_catalog(request: pytest.FixtureRequest, fill: bool) -> None:
    """view_names() against what connect() really created, read back from DuckDB's own catalog."""
    wh = request.getfixturevalue("filled" if fill else "wh")
    con = connect(wh.root)
    catalog = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                               "WHERE table_schema = 'main'").fetchall())
    assert sorted(catalog) == view_names()
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert set(CONVENIENCE_VIEWS) <= views
    for table in TABLES:  # a written table is a view over its Delta snapshot; an empty one a typed table
        expected = "VIEW" if fill and table in {"problems", "solutions", "steps", "step_labels"} else "BASE TABLE"
        assert catalog[table] == expected, table
