"""Every runnable snippet of the README and the docs runs; a failing one is reported with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs.hooks.snippets import RUN_LANGUAGES, collect, markdown_files, run_page
from tests.docs.conftest import ROOT

# Pages whose snippets train a model (a PRM for a few dozen steps): over the ~20 s of a fast test.
SLOW_PAGES = {"README.md", "docs/how-to/from-trl-prmtrainer.md"}


def _pages() -> list:
    pages = []
    for path in markdown_files(ROOT):
        rel = path.relative_to(ROOT).as_posix()
        if any(s.language in RUN_LANGUAGES and s.skip is None for s in collect(path)):
            marks = [pytest.mark.slow] if rel in SLOW_PAGES else []
            pages.append(pytest.param(path, id=rel, marks=marks))
    return pages


@pytest.mark.parametrize("page", _pages())
def test_the_page_snippets_run(page: Path, tmp_path: Path) -> None:
    assert run_page(page, tmp_path) == []


def test_a_failing_snippet_is_reported_with_its_line(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```python\nx = 2\n```\n\n```python\nassert x == 3, 'planted'\n```\n\n"
                    "```bash\necho fine\nfalse\n```\n\n<!-- docs-test: skip (never runs) -->\n```bash\nexit 9\n```\n")
    work = tmp_path / "work"
    work.mkdir()
    failures = run_page(page, work)
    assert len(failures) == 2
    assert "page.md:7" in failures[0] and "planted" in failures[0]  # the second block sees the first's x
    assert failures[1].startswith(f"{page}:11: bash snippet exited 1")


def test_a_copy_of_a_real_page_with_a_planted_failure_fails(tmp_path: Path) -> None:
    real = ROOT / "docs" / "concepts" / "rewards.md"
    copy = tmp_path / "rewards.md"
    copy.write_text(real.read_text().replace("assert (r.reward, r.n_steps) == (0.7, 2)",
                                             "assert (r.reward, r.n_steps) == (0.8, 2)"))
    work = tmp_path / "work"
    work.mkdir()
    assert run_page(real, work) == []
    failures = run_page(copy, work)
    assert len(failures) == 1 and "AssertionError" in failures[0]


def test_make_only_blocks_and_marked_blocks_are_skipped() -> None:
    first = collect(ROOT / "README.md")[0]
    assert first.language == "bash" and "make demo" in first.code and first.skip == "make targets"
    marked = [s for s in collect(ROOT / "docs" / "how-to" / "reward-server.md") if s.language == "bash"]
    assert marked and all(s.skip and s.skip.startswith("<!-- docs-test: skip") for s in marked)
