"""Zero rows is a normal write: day 2 of a dropped-in dataset has nothing new, and that is a success."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from warehouse import Warehouse, connect


def problem(i: int) -> dict:
    return {"problem_id": f"p{i}", "task": "t", "split": "s", "question": f"{i}+1", "gold_answer": str(i + 1)}


def test_zero_rows_write_nothing_and_a_zero_row_replace_empties_the_writers_rows(wh: Warehouse) -> None:
    kw = {"source": "mydata", "day": "2026-11-20", "writer": "problems"}
    assert wh.write("problems", [], **kw).rows == 0
    assert wh.files("problems") == []
    wh.write("problems", [problem(0), problem(1)], **kw)
    wh.write("problems", [problem(2)], source="mydata", day="2026-11-20", writer="other")
    result = wh.write("problems", [], replace=True, **kw)
    assert (result.rows, result.replaced) == (0, 2)
    assert connect(wh.root).execute("SELECT problem_id FROM problems").fetchall() == [("p2",)]


@pytest.fixture
def resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from assets.resources import WarehouseResource

    (tmp_path / "inbox").mkdir()
    monkeypatch.setenv("PRM_DATA_ROOT", str(tmp_path / "warehouse"))
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    return WarehouseResource()


def test_the_problems_asset_succeeds_on_day_two_of_an_inbox_dataset(resource, tmp_path: Path) -> None:
    from assets.partitions import partition_key, register_sources
    from assets.problems import problems

    lines = [{"question": f"What is {i} + {i}?", "answer": f"{i} + {i} = {2 * i}\n#### {2 * i}"} for i in range(3)]
    (resource.inbox_path() / "mydata.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "dagster_home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster_home")) as instance:
        register_sources(instance, ["mydata"])
        counts = {}
        for day in ("2026-11-20", "2026-11-21"):
            result = dg.materialize([problems], partition_key=partition_key(day, "mydata"), instance=instance,
                                    resources={"warehouse": resource}, raise_on_error=False)
            assert result.success, day
            metadata = result.asset_materializations_for_node("problems")[0].metadata
            counts[day] = (metadata["dagster/row_count"].value, metadata["skipped_existing"].value)
    assert counts == {"2026-11-20": (3, 0), "2026-11-21": (0, 3)}
    assert "no new problems: all 3 of mydata were stored by earlier partitions" in metadata["outcome"].value
    rows = connect(resource.get().root).execute("SELECT day, count(*) FROM problems GROUP BY 1").fetchall()
    assert rows == [("2026-11-20", 3)]
