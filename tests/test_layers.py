"""The layer contracts in pyproject.toml (`lint-imports`, run by `make lint` and `make test`): the tree keeps them,
and a copy of the tree with one deliberate violation breaks the contract that names it (a type-only import circle
included). The package-API contract (tests/contracts/import_contracts.py): another package is imported through its
``__init__``, at most 10% of cross-package imports over every non-test module (benchmarks and docs hooks included)
reach past one, and no package exports more than 30 names. The pure metric packages load neither torch nor
matplotlib."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prm", "verifiers", "warehouse", "assets", "pipelines", "benchmarks", "docs/hooks")
MAX_EXPORTS = 30
PURE = ("prm.metrics", "prm.first_error", "prm.best_of_n")  # what every stage reads its figures from
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
        shutil.copytree(ROOT / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__", "shipped", "results"))
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
    # a circle made only of a type-only import counts too (exclude_type_checking_imports = false)
    ("verifiers/verdict.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import verifiers.answers",
     "No import cycles between sibling packages or modules", ""),
    # the pure metrics sit below every stage; benchmarks and the docs hooks sit above pipelines
    ("prm/metrics/stats.py", "import prm.reports", "The data path runs one way", ""),
    # the label audits sit below the labelers that run them
    ("prm/label_audit/truth.py", "import prm.labeling", "The data path runs one way", ""),
    ("pipelines/jobs.py", "import benchmarks.workload", "pipelines imports assets, never the reverse", ""),
    ("benchmarks/workload.py", "import docs.hooks.layers", "pipelines imports assets, never the reverse", ""),
    # a stage reaching into a lower stage's module
    ("prm/rl/report.py", "from prm.metrics.stats import roc_auc", API_CONTRACT,
     "prm.rl.report -> prm.metrics.stats"),
    # an asset reaching into a library module (assets and pipelines import units but are not units)
    ("assets/metadata.py", "import warehouse.db", API_CONTRACT, "assets.metadata -> warehouse.db"),
    # a benchmark reaching into a library module
    ("benchmarks/search.py", "from prm.search.run import heldout_problems", API_CONTRACT,
     "benchmarks.search -> prm.search.run"),
    # the label-method table is a unit of its own: the rest of warehouse reads it through its __init__ too
    ("warehouse/db.py", "from warehouse.methods.table import METHODS", API_CONTRACT,
     "warehouse.db -> warehouse.methods.table"),
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
                        "from prm.metrics import roc_auc\nfrom prm.rl.constants import POLICY_SUBDIR")
    assert result.returncode == 0 and " 0 broken" in result.stdout, result.stdout + result.stderr


@pytest.fixture(scope="module")
def counted() -> dict:
    done = subprocess.run([sys.executable, "-m", "tests.contracts.import_contracts", "--list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def test_at_most_a_tenth_of_cross_package_imports_reach_past_an_init(counted: dict) -> None:
    assert counted["cross_package_imports"] > 100  # the count sees the tree, not an empty graph
    importers = {name.split(" -> ")[0].split(".")[0] for name in counted["importers"]}
    assert {"prm", "assets", "pipelines", "benchmarks", "docs"} <= importers  # every non-test root is counted
    assert counted["share_past_init"] <= 0.10, counted["past_init_list"]


def test_no_package_exports_more_than_thirty_names(counted: dict) -> None:
    exports = counted["exports"]
    assert {"prm.evaluation", "prm.metrics", "prm.reports", "prm.label_audit", "warehouse", "warehouse.methods",
            "verifiers"} <= exports.keys()
    over = {unit: n for unit, n in exports.items() if n > MAX_EXPORTS}
    assert not over, f"__all__ over {MAX_EXPORTS} names: {over} (export only what other packages import)"


def test_every_unit_of_the_contract_is_counted(counted: dict) -> None:
    # the count reads its units from the package_api contract: a unit lint-imports holds to the rule has its exports
    # counted, and every prm package is one
    packages = {f"prm.{p.name}" for p in (ROOT / "prm").iterdir() if (p / "__init__.py").is_file()}
    assert packages | {"verifiers", "warehouse", "warehouse.methods"} == counted["exports"].keys()


@pytest.mark.parametrize("package", PURE)
def test_the_pure_metrics_load_neither_torch_nor_matplotlib(package: str) -> None:
    check = (f"import {package}, sys; heavy = sorted({{'torch', 'matplotlib'}} & sys.modules.keys()); "
             "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
