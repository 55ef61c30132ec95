"""``python -m pipelines.flywheel``'s usage errors are one line, and the engine-start timeout is a setting of the
Dagster generation resource (issue 38 item 12). Fast: nothing here starts an engine or a round."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from assets.resources import GenerationResource
from pipelines.flywheel import main


@pytest.mark.parametrize(("argv", "says"), [
    (["--rounds", "0"], "Error: --rounds 0 runs no round; pass --rounds 1 or more"),
    (["--rounds", "-2"], "Error: --rounds -2 runs no round"),
    (["--config", '{"resources": '], "Error: --config is not JSON (Expecting value at character 14); pass a JSON "
                                     "object, e.g."),
    (["--config", "[1, 2]"], "Error: --config is a JSON list, not an object"),
    (["--config", "[" * 100_000], "Error: --config is not JSON"),
])
def test_a_usage_error_is_one_line(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(says) and captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_a_run_config_that_does_not_fit_the_job_is_one_line(project_home: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    config = '{"resources": {"flywheel": {"config": {"per_level": "many"}}}}'
    assert main(["--config", config]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: the run config does not fit the flywheel job:") and "per_level" in err
    assert err.count("\n") == 1


def test_the_engine_start_timeout_is_a_resource_setting() -> None:
    from pipelines.definitions import defs

    job = defs.resolve_job_def("flywheel")
    run_config = {"resources": {"generation": {"config": {"startup_timeout_s": 1800.0}}}}
    assert dg.validate_run_config(job, run_config)["resources"]["generation"]["config"]["startup_timeout_s"] == 1800
    assert GenerationResource(startup_timeout_s=1800.0).config().startup_timeout_s == 1800.0
    assert GenerationResource().config().startup_timeout_s == 600.0  # the library's default
