"""The layer contracts in pyproject.toml (`lint-imports`, run by `make lint` and `make test`): the tree keeps them,
and a copy of the tree with one deliberate violation breaks the contract that names it. The package-API contract
(tests/contracts/import_contracts.py): another package is imported through its ``__init__``, and at most 10% of
cross-package imports reach past one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prm", "verifiers", "warehouse", "assets", "pipelines")
LINT = Path(sys.executable).parent / "lint-imports"
API_CONTRACT = "Packages import each other only through their __init__"
pytestmark = pytest.mark.skipif(not LINT.is_file(), reason="import-linter is not installed (make venv)")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}  # the copy, ahead of the editable install's finder
    return subprocess.run([str(LINT), "--no-cache", "--config", str(root / "pyproject.toml")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    shutil.copy(ROOT / "pyproject.toml", root)
    for package in (*PACKAGES, "tests/contracts"):  # tests/contracts: the package_api contract type
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "shipped"))
    return root


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0 and " 0 broken" in result.stdout, result.stdout + result.stderr


def _lint_with(tree: Path, module: str, lines: str) -> subprocess.CompletedProcess[str]:
    """Lint the copy with ``lines`` added to ``module``, then put the module back."""
    path = tree / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{lines}\n")
        return _lint(tree)
    finally:
        path.write_text(original)


@pytest.mark.parametrize("module,line,contract,named", [
    ("prm/format/steps.py", "import dagster", "Library packages never import dagster, assets or pipelines", ""),
    ("warehouse/db.py", "import assets.prm", "Library packages never import dagster, assets or pipelines", ""),
    ("assets/metadata.py", "import pipelines.jobs", "pipelines imports assets, never the reverse", ""),
    ("prm/format/steps.py", "import prm.models", "prm.format imports no other prm package", ""),
    ("prm/training/data.py", "import prm.experiments", "The data path runs one way", ""),
    ("verifiers/verdict.py", "import verifiers.answers", "No import cycles between sibling packages or modules", ""),
    # a stage reaching into a lower stage's module
    ("prm/rl/report.py", "from prm.evaluation.metrics import roc_auc", API_CONTRACT,
     "prm.rl.report -> prm.evaluation.metrics"),
    # an asset reaching into a library module (assets and pipelines import units but are not units)
    ("assets/metadata.py", "import warehouse.db", API_CONTRACT, "assets.metadata -> warehouse.db"),
    # a named exception covers its importer only
    ("prm/training/data.py", "from prm.evaluation.folder import evaluate_folder", API_CONTRACT,
     "prm.training.data -> prm.evaluation.folder"),
])
def test_a_deliberate_violation_breaks_its_contract(tree: Path, module: str, line: str, contract: str,
                                                    named: str) -> None:
    result = _lint_with(tree, module, f"{line}  # deliberate violation")
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts")[-1]
    assert contract in broken and named in broken, result.stdout


def test_imports_through_the_package_or_within_it_keep_the_api_contract(tree: Path) -> None:
    # the package's API, and a module of the importer's own package
    result = _lint_with(tree, "prm/rl/report.py",
                        "from prm.evaluation import roc_auc\nfrom prm.rl.constants import POLICY_SUBDIR")
    assert result.returncode == 0 and " 0 broken" in result.stdout, result.stdout + result.stderr


def test_at_most_a_tenth_of_cross_package_imports_reach_past_an_init() -> None:
    done = subprocess.run([sys.executable, "-m", "tests.contracts.import_contracts", "--list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    counted = json.loads(done.stdout)
    assert counted["cross_package_imports"] > 100  # the count sees the tree, not an empty graph
    assert counted["share_past_init"] <= 0.10, counted["past_init_list"]
