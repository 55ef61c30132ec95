"""Validators read the whole value, lookups survive malformed registry rows, lineage follows one chain (issue 38
item 11)."""

from __future__ import annotations

import time
import warnings

import pytest

from prm.flywheel.rounds import round_of
from prm.models.registry import resolve_model
from warehouse import Warehouse
from warehouse.model_registry import MalformedModelRowWarning, ModelEntry, latest_model, lineage, register_models
from warehouse.store import is_partition_value

DAY = "2026-11-24"
GOOD = "0123456789ab"
ROW = {"name": "prm", "version": GOOD, "kind": "prm", "parent_version": None, "round": None,
       "training_tables_json": "{}", "training_json": None, "metrics_json": None, "uri": "/models/prm"}


@pytest.mark.parametrize("value", ["arith\n", "arith\r\n", "\narith", "ari\nth", "arith "])
def test_a_partition_value_with_a_newline_is_refused(wh: Warehouse, value: str) -> None:
    assert not is_partition_value(value)
    with pytest.raises(ValueError, match="cannot name a partition"):
        wh.write("models", [ROW], source=value, day=DAY, run_id="r1", writer="test")


@pytest.mark.parametrize("day", [f"{DAY}\n", "٢٠٢٦-١١-٢٤"])
def test_a_day_must_be_exactly_yyyy_mm_dd(wh: Warehouse, day: str) -> None:
    with pytest.raises(ValueError, match="is not YYYY-MM-DD"):
        wh.write("models", [ROW], source="arith", day=day, run_id="r1", writer="test")


def test_round_of_reads_only_a_whole_round_source() -> None:
    assert round_of("flywheel-r3") == 3
    assert [round_of(s) for s in ("flywheel-r1\n", "flywheel-r01", "flywheel-r٣", "flywheel-r" + "9" * 10_000)] == [
        None, None, None, None]


@pytest.mark.parametrize("version", [f"{GOOD}\n", f"{GOOD}\r\n"])
def test_a_version_with_a_trailing_newline_is_refused(version: str) -> None:
    with pytest.raises(ValueError, match="not a weights digest"):
        ModelEntry(name="prm", version=version, kind="prm", uri="/m")
    with pytest.raises(ValueError, match="not a weights digest"):
        ModelEntry(name="prm", version=GOOD, kind="prm", uri="/m", parent_version=version)


def test_a_hub_id_with_a_trailing_newline_is_refused() -> None:
    assert resolve_model("org/name") == "org/name"
    with pytest.raises(FileNotFoundError, match="hub id of the form 'org/name'"):
        resolve_model("org/name\n")


@pytest.mark.parametrize("value", [10**400, -(10**400), 10**5000, float("inf")],
                         ids=["1e400", "-1e400", "1e5000", "inf"])
def test_a_metric_too_large_for_a_float_is_a_clear_value_error(value: float) -> None:
    with pytest.raises(ValueError, match=r"metrics \{'f1': .*\} are not finite numbers"):
        ModelEntry(name="prm", version=GOOD, kind="prm", uri="/m", metrics={"f1": value})


def test_latest_model_skips_and_reports_malformed_rows(wh: Warehouse) -> None:
    good = ModelEntry(name="prm", version=GOOD, kind="prm", uri="/models/prm")
    register_models(wh, [good], source="arith", day=DAY, run_id="r1", writer="good")
    # Written later by another writer, so newer: a bad version and a training_tables_json that is not JSON.
    wh.write("models", [{**ROW, "version": "not-a-digest"}], source="arith", day=DAY, run_id="r2", writer="bad1")
    wh.write("models", [{**ROW, "version": "fedcba987654", "training_tables_json": "{oops"}], source="arith",
             day=DAY, run_id="r3", writer="bad2")
    with pytest.warns(MalformedModelRowWarning, match=r"skipped 2 malformed models row") as caught:
        assert latest_model(wh.root, "prm") == good
    message = str(caught[0].message)
    assert "'not-a-digest' is not a weights digest" in message and "'fedcba987654' is not JSON" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert latest_model(wh.root, "prm", name="nothing") is None


def test_lineage_follows_one_chain_without_computing_every_models_closure(wh: Warehouse) -> None:
    """A 1,000-deep chain: computing every model's closure and then filtering took 3.7 CPU s per lookup here (and
    grows with the cube of the depth: 43 s at 1,500 in issue 38); following one chain takes ~0.06 s. CPU seconds
    of this process, DuckDB's threads included, so machine load cannot fail it."""
    versions = [f"{i:012x}" for i in range(1, 1001)]
    entries = [ModelEntry(name=f"m{i}", version=v, kind="prm", uri=f"/m/{i}",
                          parent_version=versions[i - 1] if i else None) for i, v in enumerate(versions)]
    register_models(wh, entries, source="arith", day=DAY, run_id="r1", writer="chain")
    start = time.process_time()
    found = lineage(wh.root, versions[-1])
    spent = time.process_time() - start
    assert [e.version for e in found[:3]] == versions[-1:-4:-1] and len(found) == 1000
    assert found[-1].parent_version is None
    assert spent < 1.0, f"lineage spent {spent:.2f} CPU s on one lookup"
