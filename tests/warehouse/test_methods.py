"""The method table drives the labeled_steps view; an older warehouse is refused, never misread."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from warehouse import Warehouse, connect
from warehouse.methods import method, method_names
from warehouse.methods.table import KINDS, METHODS
from warehouse.version import MARKER, SchemaVersionError

KW = {"source": "arith", "day": "2026-11-20"}


def _one_step(wh: Warehouse) -> None:
    wh.write("problems", [{"problem_id": "p", "task": "arith_word", "split": "test", "question": "q",
                           "gold_answer": "1"}], **KW)
    wh.write("solutions", [{"solution_id": "s", "problem_id": "p", "sample_idx": 0, "text": "1 = 1\n",
                            "n_steps": 1, "status": "ok", "model": "m"}], **KW)
    wh.write("steps", [{"solution_id": "s", "problem_id": "p", "step_idx": 0, "text": "1 = 1", "char_start": 0,
                        "char_end": 5}], **KW)


def test_labeled_steps_has_a_column_pair_for_every_method_written(wh: Warehouse) -> None:
    _one_step(wh)
    # Each method writes its own distinct soft label, so a pivot that mixes columns up would show.
    soft = {m.name: round(0.05 + 0.08 * i, 2) for i, m in enumerate(METHODS)}
    wh.write("step_labels", [{"solution_id": "s", "problem_id": "p", "step_idx": 0, "method": name,
                              "soft_label": value, "hard_label": i % 2 == 0, "status": "labeled",
                              "labeler_version": "t"} for i, (name, value) in enumerate(soft.items())], **KW)
    con = connect(wh.root)
    cursor = con.execute("SELECT * FROM labeled_steps")
    names = [d[0] for d in cursor.description]
    row = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    assert len(row) == 1
    for i, name in enumerate(soft):
        assert row[0][f"{name}_soft"] == pytest.approx(soft[name]), name
        assert row[0][f"{name}_hard"] is (i % 2 == 0), name
    assert row[0]["mc_early_stop_soft"] is not None  # once missing from the view
    assert (row[0]["char_start"], row[0]["char_end"]) == (0, 5)


def test_method_table_is_consistent() -> None:
    assert len({m.name for m in METHODS}) == len(METHODS)
    assert {m.kind for m in METHODS} <= set(KINDS)
    assert method_names("formal") == ("sympy", "z3", "sympy_ref")
    assert "formal" not in method_names()  # formal is a kind; the tables name the verifier
    with pytest.raises(ValueError, match="not in the method table"):
        method("formal")


def test_a_warehouse_of_an_older_schema_is_refused_with_what_to_do(tmp_path) -> None:
    old = tmp_path / "old"
    part = old / "steps" / "source=arith" / "day=2026-11-20"
    part.mkdir(parents=True)
    pq.write_table(pa.table({"solution_id": ["s"], "step_idx": [0], "text": ["1 = 1"]}), part / "part-x.parquet")
    for open_it in (Warehouse, connect):
        with pytest.raises(SchemaVersionError, match=r"schema version 1.*re-materialize"):
            open_it(old)
    (old / MARKER).write_text(json.dumps({"schema_version": 1}))
    with pytest.raises(SchemaVersionError):
        Warehouse(old)


def test_a_new_warehouse_is_stamped_on_first_write(wh: Warehouse) -> None:
    assert not (Path(wh.root) / MARKER).exists()
    _one_step(wh)
    assert json.loads((Path(wh.root) / MARKER).read_text()) == {"schema_version": 2, "format": "delta"}
    Warehouse(wh.root)  # and opens again
