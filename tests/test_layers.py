"""The layer contracts in pyproject.toml (`lint-imports`, run by `make lint` and `make test`): the tree keeps them,
and a copy of the tree with one deliberate violation breaks the contract that names it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prm", "verifiers", "warehouse", "assets", "pipelines")
LINT = Path(sys.executable).parent / "lint-imports"
pytestmark = pytest.mark.skipif(not LINT.is_file(), reason="import-linter is not installed (make venv)")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy, ahead of the editable install's finder
    return subprocess.run([str(LINT), "--no-cache", "--config", str(root / "pyproject.toml")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    shutil.copy(ROOT / "pyproject.toml", root)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "shipped"))
    return root


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0 and " 0 broken" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("module,line,contract", [
    ("prm/format/steps.py", "import dagster", "Library packages never import dagster, assets or pipelines"),
    ("warehouse/db.py", "import assets.prm", "Library packages never import dagster, assets or pipelines"),
    ("assets/metadata.py", "import pipelines.jobs", "pipelines imports assets, never the reverse"),
    ("prm/format/steps.py", "import prm.models", "prm.format imports no other prm package"),
    ("prm/training/data.py", "import prm.experiments", "The data path runs one way"),
    ("verifiers/verdict.py", "import verifiers.answers", "No import cycles between sibling packages or modules"),
])
def test_a_deliberate_violation_breaks_its_contract(tree: Path, module: str, line: str, contract: str) -> None:
    path = tree / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{line}  # deliberate violation\n")
        result = _lint(tree)
    finally:
        path.write_text(original)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken, result.stdout
