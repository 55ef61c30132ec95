"""Recipes in the inbox: a dataset file without a sidecar recipe is refused with what to do instead of being sampled
by the char-level arithmetic policy; a sidecar attaches its run config; a new source can be registered."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from assets.partitions import partition_key, register_sources
from assets.resources import GenerationResource
from pipelines.cli import main as cli
from pipelines.demo import main as demo
from pipelines.inbox import stage_dataset
from pipelines.recipe import parse_recipe
from pipelines.schedules import nightly_refresh
from pipelines.sensors import inbox_sensor

GSM8K_ROW = {"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=<<2+3=5>>5\n#### 5"}
SIDECAR = ("policy: {model: smollm2-135m-instruct}\nprompt: {instruction: \"End with 'The answer is: X'.\"}\n"
           "sampling: {n: 2, temperature: 0.7}\nlabels: {methods: [mc], rollouts: 2}\nprm: {label_method: mc}\n")


def _resources(resource) -> dict:
    return {"warehouse": resource, "generation": GenerationResource()}


def _tick(instance, resource, cursor: str | None = None) -> dg.SensorResult:
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=_resources(resource)) as context:
        return inbox_sensor(context)


def _drop(inbox: Path, name: str = "gsm8k") -> Path:
    path = inbox / f"{name}.jsonl"
    path.write_text(json.dumps(GSM8K_ROW) + "\n")
    return path


def test_a_dataset_without_a_recipe_is_refused_not_sampled_by_the_arithmetic_policy(instance, resource) -> None:
    inbox = resource.inbox_path()
    _drop(inbox)
    first = _tick(instance, resource)
    assert first.run_requests == []
    reason = first.skip_reason.skip_message
    assert "gsm8k.jsonl" in reason and "'arith-policy' would sample it" in reason
    assert "gsm8k.yaml" in reason and "prm-pipeline run" in reason

    # The recipe appears beside it: the next tick requests the run, with the recipe's config attached.
    (inbox / "gsm8k.yaml").write_text(SIDECAR)
    second = _tick(instance, resource, first.cursor)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    [request] = second.run_requests
    assert request.partition_key == partition_key(today, "gsm8k")
    config = request.run_config
    assert config["resources"]["generation"]["config"]["model"] == "smollm2-135m-instruct"
    assert config["ops"]["solutions"]["config"]["instruction"] == "End with 'The answer is: X'."
    assert config["ops"]["mc_labels"]["config"] == {"n_rollouts": 2} and "omegaprm_labels" not in config["ops"]
    assert {k.path[-1] for k in request.asset_selection} == {"problems", "solutions", "rollouts", "mc_labels",
                                                             "label_audit"}
    dg.validate_run_config(_refresh_job(), config)


def _refresh_job() -> dg.JobDefinition:
    from pipelines.definitions import defs

    return defs.resolve_job_def("refresh")


def test_a_broken_sidecar_is_refused_with_its_error(instance, resource) -> None:
    inbox = resource.inbox_path()
    _drop(inbox)
    (inbox / "gsm8k.yaml").write_text("sampling: {temprature: 0.7}\n")
    result = _tick(instance, resource)
    assert result.run_requests == [] and "sampling.temprature is not a recipe field" in result.skip_reason.skip_message


def test_the_nightly_refresh_attaches_sidecars_and_skips_sources_without_one(instance, resource) -> None:
    inbox = resource.inbox_path()
    _drop(inbox, "bare")
    _drop(inbox, "withrecipe")
    (inbox / "withrecipe.yaml").write_text(SIDECAR)
    register_sources(instance, ["arith", "bare", "withrecipe"])
    when = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.UTC)
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=when,
                                   resources=_resources(resource)) as context:
        requests = nightly_refresh(context)
    by_source = {r.partition_key.keys_by_dimension["source"]: r for r in requests}
    assert sorted(by_source) == ["arith", "withrecipe"]
    assert by_source["arith"].run_config == {}
    assert by_source["withrecipe"].run_config["resources"]["generation"]["config"]["model"] == "smollm2-135m-instruct"


def test_the_demo_refuses_a_dataset_source_without_a_recipe(project_home: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    _drop(tmp_path / "inbox")
    assert demo(["--source", "gsm8k"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: source 'gsm8k' has no recipe") and "Traceback" not in err
    assert not (project_home / "storage").exists() or not any((project_home / "storage").iterdir())  # no run


def test_register_source_makes_the_partition_launchable(project_home: Path, tmp_path: Path) -> None:
    _drop(tmp_path / "inbox")
    result = CliRunner().invoke(cli, ["register-source", "gsm8k"])
    assert result.exit_code == 0, result.output
    assert "registered source 'gsm8k'" in result.output and "no recipe at" in result.output
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        assert instance.has_dynamic_partition("source", "gsm8k")
    bad = CliRunner().invoke(cli, ["register-source", "a/b"])
    assert bad.exit_code == 1 and "cannot name a source" in bad.output


def test_a_recipe_dataset_is_staged_with_mapped_fields_and_its_sidecar(tmp_path: Path) -> None:
    src = tmp_path / "mine.jsonl"
    src.write_text(json.dumps({"prompt": "2+3?", "target": "5"}) + "\nnot json\n")
    recipe = parse_recipe({"dataset": {"path": str(src), "fields": {"question": "prompt", "answer": "target"}},
                           "policy": {"model": "smollm2-135m-instruct"}})
    inbox = tmp_path / "inbox"
    staged = stage_dataset(recipe, inbox)
    lines = staged.read_text().splitlines()
    assert json.loads(lines[0]) == {"question": "2+3?", "answer": "5"} and lines[1] == "not json"
    mtime = staged.stat().st_mtime_ns
    assert stage_dataset(recipe, inbox) == staged and staged.stat().st_mtime_ns == mtime  # unchanged: not rewritten
    sidecar = (inbox / "mine.yaml").read_text()
    assert "smollm2-135m-instruct" in sidecar and "path" not in sidecar


def test_order_shortest_stages_the_easiest_problems_first(tmp_path: Path) -> None:
    src = tmp_path / "g.jsonl"
    rows = [{"question": "long " * 20, "answer": "x\n#### 1"}, {"question": "short?", "answer": "#### 2"}]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    recipe = parse_recipe({"dataset": {"path": str(src), "order": "shortest", "limit": 1}})
    staged = stage_dataset(recipe, tmp_path / "inbox")
    assert [json.loads(line)["answer"] for line in staged.read_text().splitlines()] == ["#### 2", "x\n#### 1"]


def test_materializing_a_dataset_partition_with_the_arithmetic_policy_fails_before_sampling(instance, resource):
    """`dagster asset materialize` bypasses the sensor: the solutions asset itself refuses, before any engine."""
    from assets.generation import solutions
    from assets.problems import problems

    _drop(resource.inbox_path())
    register_sources(instance, ["gsm8k"])
    key = partition_key(dt.datetime.now(dt.UTC).date().isoformat(), "gsm8k")
    result = dg.materialize([problems, solutions], partition_key=key, instance=instance,
                            resources=_resources(resource), raise_on_error=False)
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    message = str(failure.step_failure_data.error)
    assert "char-level arith-policy" in message and "gsm8k" in message and "sidecar" in message
