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
