"""The headline results table's jargon is defined: README's generated block links the glossary, every name the table
writes in `code` has a glossary entry, and every entry points to the page that explains it."""

from __future__ import annotations

import re

import yaml

from docs.hooks import sync
from tests.docs.conftest import ROOT
from tests.docs.test_citations import headings

GLOSSARY = ROOT / "docs" / "concepts" / "glossary.md"
# The jargon the issue named, checked apart from the `code` names: it must stay both in the table and defined.
TERMS = ("floored", "arm", "DVTS", "step sensitivity", "flipped_operator", "best-of-8", "majority vote", "paired",
         "OmegaPRM", "in distribution", "beam search", "flywheel")
NAME = re.compile(r"`([a-z][a-z0-9_-]*)`")  # `sympy_ref`, `harder`; not step texts such as `11-6 = 5`


def _entries() -> dict[str, str]:
    """Each ### entry's heading and its text."""
    text = GLOSSARY.read_text()
    parts = re.split(r"^### +(.+)$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _headline_cells() -> str:
    block = sync.RESULTS.body((ROOT / "README.md").read_text())
    rows = [line.split(" | ") for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    return "\n".join(" | ".join(r[:2]) for r in rows[1:])  # study and result; the log column names files


def test_the_headline_block_links_the_glossary() -> None:
    block = sync.RESULTS.body((ROOT / "README.md").read_text())
    assert "](docs/concepts/glossary.md)" in block and GLOSSARY.is_file()
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    concepts = next(item["Concepts"] for item in nav if isinstance(item, dict) and "Concepts" in item)
    assert {"Glossary": "concepts/glossary.md"} in concepts


def test_every_code_name_of_the_headline_table_has_an_entry() -> None:
    names = set(NAME.findall(_headline_cells()))
    assert {"sympy_ref", "flipped_operator", "prime_plain", "harder"} <= names, "the scan no longer reads the table"
    defined = set(NAME.findall(" ".join(_entries())))
    assert not names - defined, f"define {sorted(names - defined)} in docs/concepts/glossary.md"


def test_the_named_jargon_is_in_the_table_and_defined() -> None:
    table, entries = _headline_cells().lower(), " ".join(_entries()).lower()
    for term in TERMS:
        assert term.lower() in table, f"{term!r} left the headline table: drop it from TERMS"
        assert term.lower() in entries, f"{term!r} has no glossary entry"


def test_each_entry_is_short_and_links_where_it_is_explained() -> None:
    entries = _entries()
    assert len(entries) >= 15
    for heading, text in entries.items():
        body = " ".join(text.split())
        assert re.search(r"\]\((?:\.\./)?[\w/-]+\.md(?:#[\w-]+)?\)", body), f"{heading}: link the page explaining it"
        assert body.count(". ") <= 2, f"{heading}: one or two sentences, then the link"
    assert {"Labels and truth", "Scoring a PRM"} <= headings(GLOSSARY.read_text())
