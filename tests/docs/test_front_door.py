"""What a reader copies from the hand-written pages works here and on their machine: commands take what they are
given (a source name, not a file), Dagster commands are the `dg` CLI's with its real flags, no page prints a path
of the machine the docs were written on, and no timing is typed by hand where a committed log holds it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs.hooks import sync
from docs.hooks.recipe_runs import RUNS
from docs.hooks.snippets import markdown_files
from tests.docs.conftest import ROOT

PAGES = markdown_files(ROOT)  # README and every page under docs/, the generators aside
IDS = [p.relative_to(ROOT).as_posix() for p in PAGES]
# Where the machines the docs were written on keep things; a reader has none of them.
DEV_PATH = re.compile(r"/work/|/home/|/root/|/tmp/|\.\./shared\b")
# The `dagster` commands Dagster's docs mark superseded by `dg` (`dg dev`, `dg launch`).
SUPERSEDED = re.compile(r"\bdagster (?:dev|asset materialize|job (?:execute|launch))\b|\bdagster-webserver\b")
REGISTER = re.compile(r"\bregister-source +([^\s`'\")]+)")
DG_LAUNCH = re.compile(r"\bdg launch\b([^\n`]*)")
FLAG = re.compile(r"(?<!\S)(--?[a-z][\w-]*)")
SUBSHELL = re.compile(r"\$\([^()]*\)")  # `$(date -u +%F)`: its flags are date's, not dg's
# A duration (`52 min`, `~10 minutes`, `378 s`) or a share (`82%`): measured figures, read from logs instead.
TIMING = re.compile(r"\b\d[\d,.]*\s?(?:s|sec|seconds|min|minutes|h|hours)\b|\b\d+(?:\.\d+)?%")
GENERATED = (sync.RESULTS, sync.LAYERS, sync.COSTS, sync.ANSWERS)


def _outside_generated(text: str) -> str:
    for block in GENERATED:
        if block.start in text and block.end in text:
            head, rest = text.split(block.start, 1)
            text = head + rest.split(block.end, 1)[1]
    return text


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_page_prints_a_path_of_the_machine_it_was_written_on(page: Path) -> None:
    found = [(n, line) for n, line in enumerate(page.read_text().splitlines(), 1) if DEV_PATH.search(line)]
    assert not found, f"{page.name}: replace these with a path a reader has (recipes/data/..., /data/...): {found}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_dagster_commands_are_the_dg_cli(page: Path) -> None:
    found = SUPERSEDED.findall(page.read_text())
    assert not found, f"{page.name}: use `dg dev` / `dg launch` (make ui runs `dg dev`) instead of {found}"


def test_every_dg_launch_in_the_docs_uses_flags_it_has() -> None:
    from dagster_dg_cli.cli.launch import launch_command

    known = {opt for param in launch_command.params for opt in (*param.opts, *param.secondary_opts)}
    used = {(p.name, flag) for p in PAGES for args in DG_LAUNCH.findall(p.read_text())
            for flag in FLAG.findall(SUBSHELL.sub("", args))}
    assert used, "no page runs `dg launch`: the scan no longer matches the pages"
    assert {"--assets", "--job", "--partition"} <= known  # the flags the pages rely on, in the CLI itself
    assert not {(page, flag) for page, flag in used if flag not in known}


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_register_source_is_given_a_source_name(page: Path) -> None:
    from prm.tasks import is_source_name

    for name in REGISTER.findall(page.read_text()):
        assert name == "NAME" or (is_source_name(name) and "/" not in name and not re.search(
            r"\.(jsonl|json|parquet|csv|ya?ml)$", name)), (
            f"{page.name}: `register-source {name}` - it takes a source name (the file's stem), not a file")


def test_the_recipes_page_types_no_timing_by_hand() -> None:
    text = _outside_generated((ROOT / "docs" / "recipes.md").read_text())
    found = TIMING.findall(text)
    assert not found, f"docs/recipes.md: {found} - measured figures come from the logs (the generated blocks)"


@pytest.mark.parametrize("recipe", sorted((ROOT / "recipes").rglob("*.yaml")), ids=lambda p: p.name)
def test_recipe_comments_carry_no_measured_timing(recipe: Path) -> None:
    comments = "\n".join(line.split("#", 1)[1] for line in recipe.read_text().splitlines() if "#" in line)
    measured = {r for r, _, _ in RUNS}
    timings = TIMING.findall(comments)
    if recipe.relative_to(ROOT).as_posix() in measured:
        assert not timings, f"{recipe.name}: {timings} - its committed run's cost is on docs/recipes.md"
        assert "docs/recipes.md" in comments  # and the header says where
    elif timings:  # a recipe with no committed run may estimate its cost, and must say it is an estimate
        assert "not a measured run" in comments, f"{recipe.name}: {timings} read as measured figures"
