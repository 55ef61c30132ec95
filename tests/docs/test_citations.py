"""Code comments and recipe headers that send a reader to a section of README or of a docs page name a section that
exists: a heading renamed or moved to another page fails here instead of leaving a dead pointer."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.docs.conftest import ROOT

# `README, "Title"`, `README's "Title"`, `docs/concepts/prm.md: 'Title'`, across a comment's line break (`#`).
# The quoted part excludes quotes and newlines, so the match is linear on any line.
CITATION = re.compile(r"\b(README(?:\.md)?|docs/[\w./-]+?\.md|CHANGELOG\.md)(?:[,:]|'s)(?:\s|#)*"
                      r"([\"'])([^\"'\n]{2,120})\2")
# "the README's PRM section": a pointer that names no heading, which no test can follow.
VAGUE = re.compile(r"README's [\w -]{1,40} section")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
SELF = "tests/docs/test_citations.py"  # its examples cite sections on purpose


def headings(markdown: str) -> set[str]:
    """The text of every heading outside fenced code blocks.

    >>> sorted(headings("# A\\n```bash\\n# not one\\n```\\n## `b` (c)\\n"))
    ['A', '`b` (c)']
    """
    found, fenced = set(), False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            found.add(m.group(1))
    return found


def citations(text: str) -> list[tuple[str, str]]:
    """Each (markdown file, section title) a text cites.

    >>> citations('# see (README, "Layers") and docs/a.md: \\'B c\\'; README,\\n    # "Two lines"')
    [('README.md', 'Layers'), ('docs/a.md', 'B c'), ('README.md', 'Two lines')]
    """
    return [("README.md" if m.group(1).startswith("README") else m.group(1), m.group(3))
            for m in CITATION.finditer(text)]


def _sources() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.py", "recipes/*.yaml"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False).stdout.split()
    if not listed:  # not a git checkout: the packages and the recipes by hand
        return sorted(p for d in ("prm", "verifiers", "warehouse", "assets", "pipelines", "benchmarks", "tests",
                                  "docs", "recipes") for p in (ROOT / d).rglob("*")
                      if p.suffix in (".py", ".yaml") and p.relative_to(ROOT).as_posix() != SELF)
    return [ROOT / p for p in listed if (ROOT / p).is_file() and p != SELF]


def dead_citations(sources: list[Path], root: Path) -> list[str]:
    """``path:line: what is wrong`` for each citation whose page or heading is missing, and each vague one."""
    pages: dict[str, set[str] | None] = {}
    dead = []
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(root) if path.is_relative_to(root) else path
        for m in CITATION.finditer(text):
            page, title = citations(m.group(0))[0]
            if page not in pages:
                pages[page] = headings((root / page).read_text(encoding="utf-8")) if (root / page).is_file() else None
            line = text.count("\n", 0, m.start()) + 1
            if pages[page] is None:
                dead.append(f"{where}:{line}: cites {page}, which does not exist")
            elif title not in pages[page]:
                dead.append(f"{where}:{line}: {page} has no section {title!r}")
        for m in VAGUE.finditer(text):
            dead.append(f"{where}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r} names no heading")
    return dead


def test_every_section_a_comment_cites_exists() -> None:
    sources = _sources()
    assert len(sources) > 100, "the scan found too few files: the listing no longer matches the tree"
    assert sum(bool(citations(p.read_text(encoding="utf-8", errors="replace"))) for p in sources) >= 5
    assert dead_citations(sources, ROOT) == []


@pytest.mark.parametrize(("comment", "dead"), [
    ('# why (README, "Layers")', False),
    ('# why (README, "Do the PRMs read the steps?")', True),
    ('# why (docs/concepts/prm.md,\n# "Two heads")', False),
    ("# why (docs/concepts/prm.md, 'No such heading')", True),
    ('# why (docs/no-such-page.md, "Two heads")', True),
    ("# 800: every goal of the README's PRM section met", True),
])
def test_a_planted_citation_is_judged(tmp_path: Path, comment: str, dead: bool) -> None:
    source = tmp_path / "module.py"
    source.write_text(f"x = 1\n{comment}\n")
    found = dead_citations([source], ROOT)
    assert bool(found) is dead, found
    assert all(f.startswith(f"{source}:2: ") for f in found)
