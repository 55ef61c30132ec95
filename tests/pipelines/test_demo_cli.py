"""The demo's command line refuses a day that is no partition with one line, before any run starts."""

from __future__ import annotations

import pytest

from pipelines.demo import main


@pytest.mark.parametrize("day", ["2026-13-01", "2026-11-31", "20261101", "next tuesday", "2099-01-01", "2026-10-31"])
def test_a_day_that_is_no_partition_is_refused_with_the_range(day: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--day", day])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"day {day!r} is not a partition" in err and "from 2026-11-01 to today" in err
    assert "Traceback" not in err and "DagsterUnknownPartitionError" not in err
