"""mkdocs-gen-files entry point: writes the generated pages into the site at build time (nothing on disk).

Results pages come from ``benchmarks/results/*``; API pages from each package's ``__all__``; the asset and CLI
references from the Dagster definitions and the parsers. ``PRM_DOCS_FAST=1`` replaces the two pages that import
the code location and every CLI (seconds of imports) with stubs, for tests that only check links and snippets.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import mkdocs_gen_files  # noqa: E402 - after the repo is importable

from docs.hooks import reference, sync  # noqa: E402
from docs.hooks.results_pages import (  # noqa: E402
    STUDIES,
    render_index,
    render_policy_card,
    render_prm_card,
    render_study,
)

RESULTS = REPO / "benchmarks" / "results"
# A warning under mkdocs' logger fails a --strict build: the committed picture and generated blocks must match.
LOG = logging.getLogger("mkdocs.plugins.prm_docs")
POLICY_CARD = REPO / "prm" / "shipped" / "arith-policy" / "policy_card.json"
PRM_CARD = REPO / "prm" / "shipped" / "arith-prm" / "prm_card.json"


def write(path: str, text: str) -> None:
    with mkdocs_gen_files.open(path, "w") as f:
        f.write(text)


def main() -> None:
    write("results/index.md", render_index())
    for study in STUDIES:
        write(f"results/{study.slug}.md", render_study(study, RESULTS, REPO))
        for image in study.images:
            if (RESULTS / image).is_file():
                with mkdocs_gen_files.open(f"results/img/{image}", "wb") as f:
                    f.write((RESULTS / image).read_bytes())
    write("results/policy.md", render_policy_card(POLICY_CARD, REPO))
    write("results/shipped-prm.md", render_prm_card(PRM_CARD, REPO))
    packages = reference.public_packages(REPO)
    write("reference/api/index.md", "# Python API\n\nOne page per package, from its `__all__`.\n\n" + "\n".join(
        f"- [`{name}`]({name}.md)" for name, _ in packages) + "\n")
    for name, names in packages:
        write(f"reference/api/{name}.md", reference.api_page(name, names, REPO))
    if os.environ.get("PRM_DOCS_FAST") == "1":
        stub = "# {}\n\nNot generated in this build (`PRM_DOCS_FAST=1`); `make docs` generates it.\n"
        write("reference/assets.md", stub.format("Assets and checks"))
        write("reference/cli.md", stub.format("Command line"))
        write("reference/reward-server-limits.md", stub.format("Reward server limits"))
    else:
        assets, defs = reference.load_assets()
        if (REPO / sync.SVG).read_text(encoding="utf-8") != reference.asset_graph_svg(assets):
            LOG.warning("%s is out of date with pipelines/definitions.py - run `make docs`", sync.SVG)
        write("reference/assets.md", reference.assets_page(assets, defs))
        write("reference/cli.md", reference.cli_page())
        write("reference/reward-server-limits.md", reference.limits_page())
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    if sync.readme_with_results(readme, RESULTS) != readme:
        LOG.warning("README.md's results table is out of date with benchmarks/results - run `make docs`")
    for rel, text in sync.markdown_pages(REPO).items():  # the layer picture, the recipe costs
        if (REPO / rel).read_text(encoding="utf-8") != text:
            LOG.warning("%s: a generated block is out of date with pyproject.toml or benchmarks/results - run "
                        "`make docs`", rel)
    write("changelog.md", (REPO / "CHANGELOG.md").read_text(encoding="utf-8"))


main()
