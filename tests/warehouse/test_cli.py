"""The prm-warehouse CLI: tables, schema, SQL in every output format, and one-line errors."""

from __future__ import annotations

import json
import re
import warnings

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


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("COPY (SELECT 1) TO '{out}'", "COPY"),
        ("COPY step_labels FROM '{out}'", "COPY"),
        ("ATTACH '{out}' AS x", "ATTACH"),
        ("CREATE TABLE t AS SELECT 1", "CREATE"),
        ("INSERT INTO problems SELECT * FROM problems", "INSERT"),
        ("SELECT 1; COPY (SELECT 1) TO '{out}'", "COPY"),
        ("EXPLAIN ANALYZE COPY (SELECT 1) TO '{out}'", "COPY"),
        ("SET threads = 1", "SET"),
        ("LOAD json", "LOAD"),
        ("PRAGMA enable_profiling", "PRAGMA"),
    ],
)
def test_sql_refuses_statements_that_could_write(root: str, tmp_path, statement: str, kind: str) -> None:
    out = tmp_path / "written"
    result = run("sql", statement.format(out=out), "--root", root)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {kind} statements are not allowed: prm-warehouse sql only reads - ")
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("query", ["DESCRIBE problems", "SHOW TABLES", "SUMMARIZE problems", "EXPLAIN SELECT 1",
                                   "FROM read_csv('{csv}')", "WITH t AS (SELECT 1 AS x) SELECT x FROM t"])
def test_sql_runs_every_kind_of_read_including_local_files(root: str, tmp_path, query: str) -> None:
    csv = tmp_path / "mine.csv"
    csv.write_text("a,b\n1,2\n")
    result = run("sql", query.format(csv=csv), "--root", root, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "sql only reads" not in result.output and "\n" in result.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("sql", "SELECT 1", "--format", "csv", "-o", "{tmp}/missing/out.csv"), None,
         r"^Error: folder .*missing does not exist - create it first"),
        (("sql", "SELECT 1", "--max-rows", "-3"), None, r"^Error: --max-rows must be at least 1, got -3 - "),
        (("sql", "-"), "", r"^Error: no SQL to run \(the query or stdin is empty\) - "),
        (("sql", "-"), "-- only a comment\n", r"^Error: no SQL statement in the query"),
        (("sql", "SELECT i, CASE WHEN i = 2 THEN error('boom') END FROM range(3) t(i)", "--format", "json"), None,
         r"^Error: Invalid Input Error: boom - check the SQL"),
    ],
    ids=["missing folder", "negative max rows", "empty stdin", "comment only", "error while writing"],
)
def test_cli_mistakes_are_one_line_errors(root: str, tmp_path, args, stdin, message: str) -> None:
    result = run(*(a.format(tmp=tmp_path) for a in args), "--root", root, input=stdin)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert re.match(message, result.stderr), result.stderr


EXOTIC = ("SELECT 'a\\x00b'::BLOB AS blob, INTERVAL 3 DAY AS span, 170141183460469231731687303715884105727::HUGEINT "
          "AS huge, union_value(k := 7)::UNION(k INT, s VARCHAR) AS tagged")


def test_json_and_parquet_hold_blob_interval_hugeint_and_union(root: str, tmp_path) -> None:
    result = run("sql", EXOTIC, "--root", root, "--format", "json")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert (row["span"], row["huge"], row["tagged"]) == ("3 days", 170141183460469231731687303715884105727, {"k": 7})
    assert "blob" in row
    out = tmp_path / "exotic.parquet"
    result = run("sql", EXOTIC, "--root", root, "--format", "parquet", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).column_names == ["blob", "span", "huge", "tagged"]


def test_csv_export_streams_rows_before_the_query_ends(root: str) -> None:
    # The last of 10 MB of rows fails. A streaming export has written most rows by then (DuckDB
    # flushes every few MB); an export that first collects every row fails before writing any.
    query = ("SELECT i, CASE WHEN i = 99999 THEN error('boom') ELSE repeat('x', 100) END AS j "
             "FROM range(100000) t(i)")
    result = run("sql", query, "--root", root, "--format", "csv")
    assert result.exit_code == 1 and "boom" in result.stderr
    assert result.stdout.startswith("i,j\n0," + "x" * 100 + "\n1,")


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_exports_print_no_deprecation_warning(root: str, tmp_path, fmt: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run("sql", "SELECT * FROM problems", "--root", root, "--format", fmt, "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == []


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_exports_to_stdout_print_no_deprecation_warning(root: str, fmt: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run("sql", "SELECT * FROM problems ORDER BY 1", "--root", root, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert "p0" in result.stdout
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)] == []


NON_FINITE = ("SELECT 'nan'::DOUBLE AS x, ['inf'::FLOAT, 1.5] AS xs, {'v': '-inf'::DOUBLE, 's': 'NaN'} AS st, "
              "MAP {'k': 'nan'::DOUBLE} AS m, union_value(d := 'inf'::DOUBLE)::UNION(d DOUBLE, s VARCHAR) AS u, "
              "[{'w': 'nan'::DOUBLE}] AS nested, 2.5::DOUBLE AS ok, NULL::DOUBLE AS missing")


def _refuse(word: str) -> None:
    raise ValueError(f"{word} is not JSON")


@pytest.mark.parametrize("args", [("--format", "json"), ("--format", "json", "-o"), ("--format", "table", "-o")])
def test_json_exports_write_null_for_nan_and_infinities(root: str, tmp_path, args: tuple[str, ...]) -> None:
    out = tmp_path / "out.json"
    result = run("sql", NON_FINITE, "--root", root, *args, *([str(out)] if "-o" in args else []))
    assert result.exit_code == 0, result.output
    text = out.read_text() if "-o" in args else result.stdout
    rows = [json.loads(line, parse_constant=_refuse) for line in text.splitlines()]  # strict JSON: no NaN
    assert rows == [{"x": None, "xs": [None, 1.5], "st": {"v": None, "s": "NaN"}, "m": {"k": None}, "u": {"d": None},
                     "nested": [{"w": None}], "ok": 2.5, "missing": None}]
