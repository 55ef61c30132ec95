"""The weekly maintenance job: a real Dagster run compacts the warehouse's tables and reports per table."""

from __future__ import annotations

from pipelines.definitions import defs
from pipelines.maintenance import WEEKLY_CRON
from warehouse import connect


def test_the_maintenance_job_compacts_every_written_table(instance, resource) -> None:
    wh = resource.get()
    for i in range(3):
        wh.write("problems", [{"problem_id": f"p{i}", "task": "t", "split": "s", "question": "q", "gold_answer": "1"}],
                 source="arith", day="2026-11-20")
    result = defs.resolve_job_def("maintenance").execute_in_process(instance=instance)
    assert result.success
    (output,) = [e for e in result.all_events if e.event_type_value == "STEP_OUTPUT"]
    metadata = output.event_specific_data.metadata
    assert metadata["files_compacted"].value == 3
    assert "| problems |" in metadata["tables"].value
    assert len(wh.files("problems")) == 1
    assert connect(wh.root).execute("SELECT count(*) FROM problems").fetchone() == (3,)


def test_the_weekly_schedule_runs_the_maintenance_job() -> None:
    schedule = defs.resolve_schedule_def("weekly_maintenance")
    assert schedule.job_name == "maintenance" and schedule.cron_schedule == WEEKLY_CRON


def test_a_retention_below_the_safe_floor_fails_the_run_with_what_to_do_unless_forced(instance, resource) -> None:
    wh = resource.get()
    wh.write("problems", [{"problem_id": "p", "task": "t", "split": "s", "question": "q", "gold_answer": "1"}],
             source="arith", day="2026-11-20")
    job = defs.resolve_job_def("maintenance")
    config = {"ops": {"maintain_warehouse": {"config": {"retention_hours": 0}}}}
    refused = job.execute_in_process(instance=instance, run_config=config, raise_on_error=False)
    assert not refused.success
    (failure,) = [e for e in refused.all_events if e.is_step_failure]
    assert "below the safe floor" in failure.event_specific_data.error.message
    config["ops"]["maintain_warehouse"]["config"]["force"] = True
    assert job.execute_in_process(instance=instance, run_config=config).success
    assert connect(wh.root).execute("SELECT count(*) FROM problems").fetchone() == (1,)
