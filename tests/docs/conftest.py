"""Shared by the docs tests: the project root, a copy of the docs to plant faults in, and mkdocs itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # docs/hooks is not an installed package: mkdocs runs it from the project root
    sys.path.insert(0, str(ROOT))
# What the docs build reads besides docs/ and mkdocs.yml: the logs, the code it documents, the changelog.
READ_ONLY = ("benchmarks", "prm", "pipelines", "assets", "verifiers", "warehouse", "CHANGELOG.md", "pyproject.toml",
             "recipes", "deploy")


def mkdocs_build(config_dir: Path, site: Path, fast: bool) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the config in ``config_dir`` into ``site``; ``fast`` stubs the asset and CLI
    references (docs/hooks/gen_pages.py), which import the whole code location."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true",
           "PRM_DOCS_FAST": "1" if fast else "0"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=config_dir, env=env, capture_output=True, text=True, timeout=900, check=False)


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    """A project folder whose docs/, mkdocs.yml and README.md are copies (change them freely) and whose code and
    logs are links to the real ones."""
    copy = tmp_path / "project"
    copy.mkdir()
    shutil.copytree(ROOT / "docs", copy / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy2(ROOT / "README.md", copy / "README.md")
    for name in READ_ONLY:
        (copy / name).symlink_to(ROOT / name)
    return copy
