"""Results pages come from the committed logs: a changed value in a copy of a log changes its page, every study
renders, and README's headline table and the asset picture are in step with the logs and the code."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from docs.hooks import sync
from docs.hooks.results_pages import STUDIES, render_study
from tests.docs.conftest import ROOT

RESULTS = ROOT / "benchmarks" / "results"
STUDY = {s.slug: s for s in STUDIES}


def _with_changed_truth_f1(log: Path, value: float) -> None:
    lines = log.read_text().splitlines()
    for i in range(len(lines) - 1, -1, -1):  # the summary: the last line with the comparison
        if lines[i].startswith("{") and '"comparison"' in lines[i]:
            summary = json.loads(lines[i])
            row = next(r for r in summary["comparison"] if (r["method"], r["test"]) == ("truth", "in_distribution"))
            row["prm_f1"] = value
            lines[i] = json.dumps(summary)
            break
    log.write_text("\n".join(lines) + "\n")


def test_a_changed_log_value_changes_the_generated_page(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    study = STUDY["label-sources"]
    before = render_study(study, results, ROOT)
    _with_changed_truth_f1(results / "prm_per_level_800.log", 0.1234)
    after = render_study(study, results, ROOT)
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert len(changed) == 1  # exactly the truth-trained PRM's in-distribution row
    old, new = changed[0]
    assert "truth-trained PRM" in new and "| 0.123 [" in new and "| 0.123 [" not in old


def test_a_changed_log_value_changes_readme_headline(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    before = sync.headline(results)
    _with_changed_truth_f1(results / "prm_per_level_800.log", 0.1234)
    assert sync.headline(results) != before and "ProcessBench F1 0.123 [" in sync.headline(results)


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.slug)
def test_every_study_renders_from_its_committed_logs(study) -> None:
    page = render_study(study, RESULTS, ROOT)
    assert all((RESULTS / log).is_file() for log in study.logs), "a study names a log that is not committed"
    assert "## Results" in page and study.command in page and "Not in this checkout" not in page
    assert re.search(r"\| `benchmarks/results/[\w.]+` \| `[0-9a-f]{7,}` \| \d{4}-\d\d-\d\d \|", page)  # commit, date


def test_readme_results_table_is_in_step_with_the_logs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert sync.readme_with_results(readme, RESULTS) == readme, "README's results are stale: run `make docs`"
