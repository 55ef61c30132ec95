"""``prm-warehouse migrate``: a warehouse of the earlier Parquet-folder layout becomes Delta tables, same rows."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from warehouse import Warehouse, connect
from warehouse.cli import main
from warehouse.schemas import file_schema
from warehouse.version import SchemaVersionError

DAY = "2026-11-20"


def _legacy(root: Path) -> None:
    """The old layout: hive folders, ``part-<writer>-<run_id>-<hex>.parquet`` files, a version-2 marker,
    and a killed writer's temp file that was never committed."""
    now = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    files = (("problems", ["p1", "p2"], DAY), ("problems", ["p3"], "2026-11-21"), ("rogue", ["p4"], DAY))
    for writer, ids, day in files:
        folder = root / "problems" / "source=arith" / f"day={day}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = [{"problem_id": i, "task": "t", "split": "s", "question": f"q{i}", "gold_answer": "1",
                 "run_id": "local-20261120T000000-abcd1234", "created_at": now} for i in ids]
        table = pa.Table.from_pylist(rows, schema=file_schema("problems"))
        pq.write_table(table, folder / f"part-{writer}-local-20261120T000000-abcd1234-0a1b2c.parquet")
    pq.write_table(table, root / "problems" / "source=arith" / f"day={DAY}" / ".tmp-part-x.parquet@host.1")
    (root / "warehouse.json").write_text(json.dumps({"schema_version": 2}))


def test_an_old_layout_is_refused_with_the_migrate_command(tmp_path: Path) -> None:
    _legacy(tmp_path / "wh")
    for open_it in (Warehouse, connect):
        with pytest.raises(SchemaVersionError, match="prm-warehouse migrate --root"):
            open_it(tmp_path / "wh")


def test_migrate_in_place_keeps_every_row_and_the_writers(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    _legacy(root)
    out = CliRunner().invoke(main, ["migrate", "--root", str(root)])
    assert out.exit_code == 0, out.output
    assert "problems" in out.output and "4 rows" in out.output
    (backup,) = tmp_path.glob("wh.parquet-backup-*")
    assert (backup / "problems").is_dir()  # the old files are kept aside
    wh = Warehouse(root)
    rows = connect(root).execute("SELECT problem_id, day, question, run_id FROM problems ORDER BY 1").fetchall()
    assert [r[:3] for r in rows] == [("p1", DAY, "qp1"), ("p2", DAY, "qp2"), ("p3", "2026-11-21", "qp3"),
                                     ("p4", DAY, "qp4")]
    assert {r[3] for r in rows} == {"local-20261120T000000-abcd1234"}  # provenance kept
    # The writer came from the file name: replacing "problems" leaves the rogue writer's row alone.
    wh.write("problems", [{"problem_id": "p9", "task": "t", "split": "s", "question": "new", "gold_answer": "1"}],
             source="arith", day=DAY, replace=True)
    assert sorted(wh.read_partition("problems", "arith", DAY).column("problem_id").to_pylist()) == ["p4", "p9"]
    out = CliRunner().invoke(main, ["migrate", "--root", str(root)])
    assert out.exit_code == 1 and "already a Delta warehouse" in out.output


def test_migrate_to_s3_leaves_the_old_folder_alone(tmp_path: Path, s3_root: str) -> None:
    root = tmp_path / "wh"
    _legacy(root)
    out = CliRunner().invoke(main, ["migrate", "--root", str(root), "--to", s3_root])
    assert out.exit_code == 0, out.output
    assert connect(s3_root).execute("SELECT count(*) FROM problems").fetchone() == (4,)
    with pytest.raises(SchemaVersionError):
        Warehouse(root)  # untouched: still the old layout


def test_a_file_that_no_longer_validates_stops_the_migration_unless_skipped(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    _legacy(root)
    folder = root / "steps" / "source=arith" / f"day={DAY}"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"solution_id": ["s"], "step_idx": [0]}), folder / "part-steps-r-000000.parquet")
    out = CliRunner().invoke(main, ["migrate", "--root", str(root)])
    assert out.exit_code == 1 and "part-steps-r-000000.parquet" in out.output and "--skip-invalid" in out.output
    with pytest.raises(SchemaVersionError):
        Warehouse(root)  # nothing was swapped
    assert not list(tmp_path.glob("wh.delta-migrating-*"))  # and the half-made copy is gone
    out = CliRunner().invoke(main, ["migrate", "--root", str(root), "--skip-invalid"])
    assert out.exit_code == 0 and "skipped steps/source=arith" in out.output
    assert Warehouse(root).read("problems").num_rows == 4 and Warehouse(root).version("steps") is None
    assert Warehouse(root).history("problems")[0]["prm_operation"] == "migrate"
