"""Materializing the graph in-process: rows land in the warehouse, checks pass, failures stay contained."""

from __future__ import annotations

import json

import dagster as dg
import pyarrow as pa
import pytest

from assets.partitions import partition_key, register_sources
from assets.problems import problems
from pipelines.definitions import CHECKS, defs
from warehouse import connect

TINY = {"ops": {"problems": {"config": {"n_ops": [2, 3], "per_level": 3}}}}  # 6 problems per partition


def materialize(instance, resource, day: str, source: str) -> dg.ExecuteInProcessResult:
    """The problems stage of the refresh job (the engine-bound stages are in test_full_graph.py)."""
    register_sources(instance, [source])
    job = defs.resolve_job_def("refresh")
    return job.execute_in_process(partition_key=partition_key(day, source), instance=instance,
                                  run_config=TINY, raise_on_error=False, asset_selection=[dg.AssetKey("problems")])


def test_the_refresh_job_writes_problems_and_passes_its_checks(instance, resource) -> None:
    result = materialize(instance, resource, "2026-11-20", "arith")
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"problems_schema_conforms": True, "problems_ids_unique": True, "problems_gold_answers": True}
    rows = connect(resource.get().root).execute("SELECT day, source, count(*) FROM problems GROUP BY ALL").fetchall()
    assert rows == [("2026-11-20", "arith", 6)]
    materialization = result.asset_materializations_for_node("problems")[0]
    assert materialization.metadata["dagster/row_count"].value == 6
    assert "| problem_id |" in materialization.metadata["preview"].value


def test_rematerializing_a_partition_replaces_it_and_new_days_append(instance, resource) -> None:
    for day in ("2026-11-20", "2026-11-20", "2026-11-21"):
        assert materialize(instance, resource, day, "arith").success
    con = connect(resource.get().root)
    assert con.execute("SELECT day, count(*) FROM problems GROUP BY 1 ORDER BY 1").fetchall() == [
        ("2026-11-20", 6), ("2026-11-21", 6)]


def test_a_failing_partition_leaves_earlier_ones_intact_and_reruns(instance, resource) -> None:
    assert materialize(instance, resource, "2026-11-20", "arith").success
    inbox = resource.inbox_path()
    (inbox / "mydata.jsonl").write_text(json.dumps({"question": "2+2?", "solution": "four"}) + "\n")
    failed = materialize(instance, resource, "2026-11-20", "mydata")
    assert not failed.success
    message = next(e for e in failed.all_events if e.is_step_failure).event_specific_data.error.message
    assert "cannot load problems of source 'mydata' for 2026-11-20" in message and "no gold answer" in message
    con = connect(resource.get().root)
    assert con.execute("SELECT source, count(*) FROM problems GROUP BY 1").fetchall() == [("arith", 6)]
    (inbox / "mydata.jsonl").write_text(json.dumps({"question": "2+2?", "answer": "4 is it\n#### 4"}) + "\n")
    assert materialize(instance, resource, "2026-11-20", "mydata").success
    con = connect(resource.get().root)  # a connection reads one snapshot: open a new one to see the rerun
    assert con.execute("SELECT source, count(*) FROM problems GROUP BY 1 ORDER BY 1").fetchall() == [
        ("arith", 6), ("mydata", 1)]


def _run_checks(resource) -> dict[str, bool]:
    outcomes = {}
    for check in CHECKS:
        (key,) = check.check_keys
        if key.asset_key == dg.AssetKey("problems"):
            outcomes[key.name] = check(warehouse=resource).passed
    return outcomes


def test_checks_pass_on_good_data_and_fail_on_broken_data(instance, resource) -> None:
    assert materialize(instance, resource, "2026-11-20", "arith").success
    assert all(_run_checks(resource).values())
    wh = resource.get()
    row = wh.read("problems").slice(0, 1).to_pylist()[0]
    # A second writer stores a copy of a problem (duplicate key) with an empty gold answer.
    wh.write("problems", [{**row, "gold_answer": " "}], source="arith", day="2026-11-21", writer="rogue")
    outcomes = _run_checks(resource)
    assert outcomes["problems_ids_unique"] is False
    assert outcomes["problems_gold_answers"] is False
    assert outcomes["problems_schema_conforms"] is True
    # A foreign writer evolves the table around the warehouse library: it merges in a column of its own.
    from deltalake import write_deltalake

    rogue = wh.read("problems").slice(0, 1).append_column("writer", pa.array(["rogue"]))
    rogue = rogue.append_column("colour", pa.array(["red"]))
    write_deltalake(wh.uri("problems"), rogue, mode="append", schema_mode="merge")
    assert _run_checks(resource)["problems_schema_conforms"] is False


def test_a_failing_blocking_check_fails_the_run(instance, resource) -> None:
    assert materialize(instance, resource, "2026-11-20", "arith").success
    wh = resource.get()
    row = wh.read("problems").slice(0, 1).to_pylist()[0]
    wh.write("problems", [row], source="arith", day="2026-11-19", writer="rogue")  # the same id twice
    problem_checks = [c for c in CHECKS if next(iter(c.check_keys)).asset_key == dg.AssetKey("problems")]
    result = dg.materialize([problems, *problem_checks], partition_key=partition_key("2026-11-21", "arith"),
                            instance=instance, resources={"warehouse": resource}, raise_on_error=False,
                            run_config=TINY)
    assert not result.success
    failed = [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]
    assert failed == ["problems_ids_unique"]


@pytest.mark.parametrize("source", ["arith"])
def test_problem_ids_are_unique_across_days(instance, resource, source: str) -> None:
    for day in ("2026-11-18", "2026-11-19", "2026-11-20"):
        assert materialize(instance, resource, day, source).success
    con = connect(resource.get().root)
    assert con.execute("SELECT count(*) = count(DISTINCT problem_id) FROM problems").fetchall() == [(True,)]


def test_logic_partition_lands_in_the_same_tables_with_z3_labels(instance, resource) -> None:
    register_sources(instance, ["logic"])
    job = defs.resolve_job_def("refresh")
    selection = [dg.AssetKey(k) for k in ("problems", "solutions", "formal_verifications", "consensus_labels",
                                          "label_audit")]
    config = {"ops": {"problems": {"config": {"logic_problems": 6}}, "solutions": {"config": {"n_samples": 3}}}}
    result = job.execute_in_process(partition_key=partition_key("2026-11-20", "logic"), instance=instance,
                                    run_config=config, raise_on_error=False, asset_selection=selection)
    assert result.success
    con = connect(resource.get().root)
    assert con.execute("SELECT task, count(*) FROM problems GROUP BY 1").fetchall() == [("logic", 6)]
    # Sample 0 is the gold derivation (no error), samples 1-2 carry one corrupted step each.
    wrong = con.execute("SELECT sample_idx, min(first_error_truth) FROM solutions GROUP BY 1 ORDER BY 1").fetchall()
    assert wrong[0] == (0, -1) and all(fe >= 0 for _, fe in wrong[1:])
    verdicts = dict(con.execute("SELECT status, count(*) FROM verifications WHERE verifier = 'z3' GROUP BY 1")
                    .fetchall())
    assert verdicts.get("correct", 0) > 0 and verdicts.get("incorrect", 0) > 0
    audit = dict(con.execute("SELECT method, step_f1 FROM label_audit").fetchall())
    assert "z3" in audit and audit["z3"] > 0.5  # Z3 finds the corrupted implications
