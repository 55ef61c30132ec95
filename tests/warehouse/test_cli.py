"""The prm-warehouse CLI: tables, schema, SQL in every output format, and one-line errors."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from warehouse import Warehouse
from warehouse.cli import main


@pytest.fixture
def root(wh: Warehouse) -> str:
    rows = [{"problem_id": f"p{i}", "task": "arith_chain", "split": "test", "question": f"{i}+1",
             "gold_answer": str(i + 1)} for i in range(3)]
    wh.write("problems", rows, source="arith", day="2026-11-20")
    return str(wh.root)


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def test_tables_lists_counts_and_views(root: str) -> None:
    result = run("tables", "--root", root)
    assert result.exit_code == 0
    assert "problems" in result.output and "3 rows" in result.output
    assert "labeled_steps" in result.output


def test_schema_shows_columns_key_and_partitions() -> None:
    result = run("schema", "step_labels")
    assert result.exit_code == 0
    assert "key: solution_id, step_idx, method" in result.output
    assert "soft_label" in result.output and "partition" in result.output


def test_sql_prints_a_table(root: str) -> None:
    result = run("sql", "SELECT problem_id, question FROM problems ORDER BY 1", "--root", root)
    assert result.exit_code == 0
    assert "p0" in result.output and "2+1" in result.output


def test_sql_reads_stdin(root: str) -> None:
    result = run("sql", "-", "--root", root, "--format", "csv", input="SELECT count(*) AS n FROM problems")
    assert result.exit_code == 0
    assert result.output.splitlines() == ["n", "3"]


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_sql_writes_files(root: str, tmp_path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    result = run("sql", "SELECT problem_id FROM problems ORDER BY 1", "--root", root, "--format", fmt, "-o", str(out))
    assert result.exit_code == 0, result.output
    if fmt == "parquet":
        assert pq.read_table(out).column("problem_id").to_pylist() == ["p0", "p1", "p2"]
    elif fmt == "json":
        assert [json.loads(line)["problem_id"] for line in out.read_text().splitlines()] == ["p0", "p1", "p2"]
    else:
        assert out.read_text().split() == ["problem_id", "p0", "p1", "p2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("sql", "SELEC 1"), r"^Error: Parser Error: syntax error at or near \"SELEC\" - check the SQL"),
        (("sql", "SELECT * FROM nope"), r"^Error: Catalog Error: Table with name nope does not exist"),
        (("sql", "SELECT 1", "--format", "parquet"), r"^Error: parquet output is binary - pass --output"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(root: str, args, message: str) -> None:
    result = run(*args, "--root", root)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert pytest.importorskip("re").match(message, result.output)


def test_unknown_table_and_missing_root(tmp_path) -> None:
    assert run("schema", "nope").exit_code == 1
    result = run("tables", "--root", str(tmp_path / "missing"))
    assert result.exit_code == 1 and "run `make demo` first" in result.output


def test_every_command_documents_an_example() -> None:
    for name, command in main.commands.items():
        assert "Example:" in (command.help or ""), name
