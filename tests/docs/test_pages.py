"""What the hand-written pages promise: a short README with the two commands first, one section per label
method, every environment variable, no result typed by hand, the package metadata people search for."""

from __future__ import annotations

import doctest
import importlib
import re
import tomllib

import pytest

from docs.hooks.sync import ANSWERS, COSTS, RESULTS
from tests.docs.conftest import ROOT
from warehouse.methods.table import METHODS

README = (ROOT / "README.md").read_text()
# A figure with three decimals is a measured result: it belongs on a generated page, read from its log.
MEASURED = re.compile(r"\b\d\.\d{3}\b")
GENERATED = (RESULTS, COSTS, ANSWERS)
HAND_WRITTEN = sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)


def test_readme_is_two_screens_and_starts_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) <= 150
    assert lines[2:6] == ["```bash",
                          "make demo   # set up .venv if missing, then run the whole pipeline on the embedded defaults",
                          "make test   # set up .venv if missing, then ruff + the full test suite", "```"]
    assert not re.search(r"\bissues? \d+", README, re.IGNORECASE)


@pytest.mark.parametrize("page", [ROOT / "README.md", *HAND_WRITTEN], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_measured_figure_is_typed_by_hand(page) -> None:
    text = page.read_text()
    for block in GENERATED:  # generated from the logs (and checked against them)
        if block.start in text:
            text = text.split(block.start)[0] + text.split(block.end)[1]
    assert not MEASURED.findall(text), f"{page.name}: move measured figures to a results page generated from a log"


def test_every_label_method_is_listed_and_its_sections_follow_the_table() -> None:
    """The generated table lists every method (`make docs` alone adds a new one: no fourth place to edit); the
    hand-written sections, where a method has one, come in the table's order."""
    page = (ROOT / "docs" / "concepts" / "labels.md").read_text()
    listed = re.findall(r"^\| `([\w-]+)` \|", page, re.MULTILINE)
    assert listed == [m.name for m in METHODS]
    headings = re.findall(r"^## `([\w-]+)`", page, re.MULTILINE)
    order = [m.name for m in METHODS]
    assert headings and set(headings) <= set(order) and headings == sorted(headings, key=order.index)


def test_every_environment_variable_the_code_reads_is_documented() -> None:
    page = (ROOT / "docs" / "reference" / "environment.md").read_text()
    code = "\n".join(p.read_text() for d in ("prm", "warehouse", "assets", "pipelines", "verifiers")
                     for p in (ROOT / d).rglob("*.py"))
    names = set(re.findall(r"^[A-Z_]*ENV[A-Z_]* = \"([A-Z][A-Z0-9_]+)\"", code, re.MULTILINE))
    names |= set(re.findall(r"environ\.get\(\"([A-Z][A-Z0-9_]+)\"", code))
    assert names, "the scan found no variable: the pattern no longer matches the code"
    assert not {n for n in names if f"`{n}`" not in page}


def test_package_metadata_names_what_people_search_for() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {"process reward model", "PRM", "Math-Shepherd", "OmegaPRM", "TRL", "stepwise supervision"} <= set(
        project["keywords"])
    assert "process reward model" in project["description"].lower() and project["urls"] and project["classifiers"]
    assert "mkdocs-material" in " ".join(project["optional-dependencies"]["docs"])


@pytest.mark.parametrize("module", ["results_io", "snippets", "griffe_doctest", "reference", "blocks", "layers",
                                    "recipe_runs"])
def test_the_generators_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(f"docs.hooks.{module}"))
    assert result.attempted and not result.failed
