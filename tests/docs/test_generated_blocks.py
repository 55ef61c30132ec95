"""The blocks of hand-written pages that are generated: the layer picture (README, the asset-graph page) from the
import-linter contracts, and the recipes' measured costs (docs/recipes.md) from the committed run logs. Each is in
step with its source, a change to the source changes it, and a broken source is one clear error."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from docs.hooks import sync
from docs.hooks.blocks import Block
from docs.hooks.layers import layers_text
from docs.hooks.recipe_runs import RUNS, costs_table, rates_table, read_run
from tests.docs.conftest import ROOT

RESULTS = ROOT / "benchmarks" / "results"
PYPROJECT = (ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("page", sorted(sync.markdown_pages(ROOT)), ids=str)
def test_each_generated_block_is_in_step_with_its_source(page: Path) -> None:
    assert (ROOT / page).read_text() == sync.markdown_pages(ROOT)[page], f"{page} is stale: run `make docs`"


@pytest.mark.parametrize("page", ["README.md", "docs/concepts/asset-graph.md"])
def test_the_layer_picture_names_every_package(page: str) -> None:
    picture = sync.LAYERS.body((ROOT / page).read_text())
    named = set(re.findall(r"\bprm\.\w+", picture))
    packages = {f"prm.{p.name}" for p in (ROOT / "prm").iterdir() if (p / "__init__.py").is_file()}
    assert named == packages, f"{page}: missing {sorted(packages - named)}, unknown {sorted(named - packages)}"
    assert {"pipelines", "assets", "verifiers | warehouse"} <= set(picture.splitlines())


def test_a_package_added_to_the_contract_appears_in_the_picture() -> None:
    changed = PYPROJECT.replace('"prm.files | prm.settings",', '"prm.files | prm.settings | prm.newpkg",', 1)
    assert changed != PYPROJECT, "the planted change no longer matches pyproject.toml"
    assert "prm.newpkg" not in layers_text(PYPROJECT)
    assert "  prm.files | prm.settings | prm.newpkg" in layers_text(changed).splitlines()


def test_a_pyproject_without_contracts_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match=re.escape("no [[tool.importlinter.contracts]]")):
        layers_text("[project]\nname = 'x'\n")


def test_a_page_without_its_markers_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match=r"page\.md needs the markers .*layers:start.* exactly once each"):
        sync.LAYERS.fill("# a page without markers\n", "body", "page.md")
    block = Block("x", "y")
    with pytest.raises(ValueError, match="exactly once"):
        block.fill(f"{block.start}\n{block.end}\n{block.start}\n{block.end}\n", "body", "page.md")


def _copy_logs(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    for _, log, _ in RUNS:
        shutil.copy2(RESULTS / log, results / log)
    return results


def test_a_changed_run_log_changes_the_cost_table(tmp_path: Path) -> None:
    results = _copy_logs(tmp_path)
    before = costs_table(results)
    log = results / "recipe_smollm2_gsm8k.log"
    text = log.read_text()
    assert "\nrc=0 seconds=3126\n" in text and "prm      prm_model                         -   2148.3" in text
    log.write_text(text.replace("rc=0 seconds=3126", "rc=0 seconds=600").replace(
        "prm_model                         -   2148.3", "prm_model                         -     60.0"))
    after = costs_table(results)
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert len(changed) == 1  # the SmolLM2 row only
    assert "| 52.1 min |" in changed[0][0] and "| 10.0 min |" in changed[0][1]
    # prm_model, a minute now, leaves the three slowest stages and prm_evaluation takes its place
    assert "`prm_model` 35.8 min" in changed[0][0] and "`prm_evaluation`" not in changed[0][0]
    assert "`prm_model`" not in changed[0][1] and "`prm_evaluation` 2.6 min" in changed[0][1]


def test_the_page_shows_what_the_logs_hold() -> None:
    page = (ROOT / "docs" / "recipes.md").read_text()
    costs, answers = sync.COSTS.body(page), sync.ANSWERS.body(page)
    for recipe, log, _ in RUNS:
        run = read_run(RESULTS / log)
        row = next(line for line in costs.splitlines() if f"`{recipe}`" in line)
        assert f"| {run.seconds / 60:.1f} min |" in row and f"`benchmarks/results/{log}`" in row
    assert answers == rates_table(RESULTS) and "| `solutions` |" in answers and "| `rollouts` |" in answers


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("rc=0 seconds=3126", "rc=1 seconds=3126"), "no closing 'rc=0 seconds=N' line"),
    (lambda t: t.replace("\nrc=0 seconds=3126", ""), "no closing 'rc=0 seconds=N' line"),
    (lambda t: t.split("\n", 1)[1], "the first line should be"),
])
def test_a_failed_or_cut_run_log_is_refused(tmp_path: Path, edit, message: str) -> None:
    results = _copy_logs(tmp_path)
    log = results / "recipe_smollm2_gsm8k.log"
    log.write_text(edit(log.read_text()))
    with pytest.raises(ValueError, match=f"recipe_smollm2_gsm8k.log: {message}"):
        costs_table(results)


def test_the_cost_table_prints_no_path_of_the_machine_that_ran() -> None:
    header = (RESULTS / "recipe_smollm2_gsm8k.log").read_text().splitlines()[0]
    assert "../shared" in header  # the command in the log's header names the run's data path
    assert "/" not in "".join(read_run(RESULTS / "recipe_smollm2_gsm8k.log").conditions)
    assert "../shared" not in costs_table(RESULTS)
