"""The docs site builds with --strict, and a broken link makes the build fail (the check `make docs` relies on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs.hooks.sync import START
from tests.docs.conftest import ROOT, mkdocs_build


@pytest.mark.slow
def test_the_real_docs_build_strict_with_every_generated_page(tmp_path: Path) -> None:
    done = mkdocs_build(ROOT, tmp_path / "site", fast=False)
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ("results/label-sources", "results/off-policy", "results/search", "reference/assets",
                 "reference/cli", "reference/api/prm.training", "how-to/from-trl-prmtrainer"):
        assert (tmp_path / "site" / page / "index.html").is_file(), page
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "python -m prm.training train" in cli and "--max-steps" in cli  # read from the real parser
    # The build also checks that the committed asset picture and README's results match the code and the logs.
    assets = (tmp_path / "site" / "reference" / "assets" / "index.html").read_text()
    assert "omegaprm_labels" in assets and "prm_splits_disjoint" in assets  # from the Dagster definitions


@pytest.mark.slow
def test_each_planted_fault_fails_the_strict_build(docs_copy: Path, tmp_path: Path) -> None:
    page = docs_copy / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    picture = docs_copy / "docs" / "assets" / "asset-graph.svg"
    picture.write_text(picture.read_text().replace("omegaprm_labels", "old_name"))
    readme = docs_copy / "README.md"
    head, block = readme.read_text().split(START)
    readme.write_text(head + START + block.replace("ProcessBench F1 0.", "ProcessBench F1 9.", 1))
    done = mkdocs_build(docs_copy, tmp_path / "site", fast=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Aborted" in output
    assert "contains a link 'no-such-page.md'" in output  # a broken link
    assert "asset-graph.svg is out of date" in output  # a picture that no longer matches the definitions
    assert "README.md's results table is out of date" in output  # a headline figure that no longer matches its log


def test_the_unchanged_copy_is_the_control(docs_copy: Path) -> None:
    """The faults above are the only differences: the copy's README and picture match the real ones."""
    assert (docs_copy / "README.md").read_text() == (ROOT / "README.md").read_text()
    assert (docs_copy / "docs" / "assets" / "asset-graph.svg").read_bytes() == (
        ROOT / "docs" / "assets" / "asset-graph.svg").read_bytes()
