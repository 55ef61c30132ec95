"""A label method is three places (docs/how-to/add-label-method.md): a method-table row, a labeler module and a
registry line. The how-to's `blank` method is planted there (at run time, and in a copy of the checkout) and
followed to the method table, the registry, the recipe vocabulary, the labeling path, its made asset and checks."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import dagster as dg
import pytest

import warehouse.methods.table as method_table
from pipelines.recipe import RecipeError, parse_recipe
from pipelines.run_config import recipe_selection
from prm.labeling import LABELERS, get_labeler, label_method_partition
from prm.labeling.registry import LabelerSpec, computed_methods
from warehouse import Warehouse, connect
from warehouse.methods import label_assets, method, recipe_label_assets
from warehouse.schemas import VALUE_RULES, Allowed

ROOT = Path(__file__).resolve().parents[3]
HOW_TO = ROOT / "docs" / "how-to" / "add-label-method.md"
ROW = 'Method("blank", "formal", "Empty steps are wrong")'
REGISTRY_LINE = '"blank": LabelerSpec(BlankConfig, BlankConfig(), BlankLabeler, "rows")'
KW = {"source": "arith", "day": "2026-11-20"}


def blank_module_source() -> str:
    """The how-to's labeler module: its Python block that defines BlankLabeler."""
    fenced = HOW_TO.read_text(encoding="utf-8").split("```python\n")[1:]
    blocks = [block.split("\n```", 1)[0] for block in fenced if "class BlankLabeler" in block.split("\n```", 1)[0]]
    assert len(blocks) == 1, "the how-to shows the blank labeler module once"
    return blocks[0] + "\n"


def _insert_before_close(text: str, opening: str, closing: str, line: str) -> str:
    start = text.index(opening)
    end = text.index(closing, start)
    return text[:end] + "\n" + line + text[end:]


def _add_row(root: Path) -> None:
    path = root / "warehouse" / "methods" / "table.py"
    path.write_text(_insert_before_close(path.read_text(), "METHODS: tuple[Method, ...] = (", "\n)\n", f"    {ROW},"))


def _add_module(root: Path) -> None:
    (root / "prm" / "labeling" / "blank.py").write_text(blank_module_source())


def _add_registry_line(root: Path) -> None:
    path = root / "prm" / "labeling" / "registry.py"
    text = path.read_text().replace("from prm.labeling.consensus import",
                                    "from prm.labeling.blank import BlankConfig, BlankLabeler\n"
                                    "from prm.labeling.consensus import", 1)
    path.write_text(_insert_before_close(text, "LABELERS: dict[str, LabelerSpec] = {", "\n}\n",
                                         f"    {REGISTRY_LINE},"))


# The places a new method touches, each with the edit that plants `blank` there: the how-to lists the same ones.
EDITS: dict[str, Callable[[Path], None]] = {
    "warehouse/methods/table.py": _add_row,
    "prm/labeling/<name>.py": _add_module,
    "prm/labeling/registry.py": _add_registry_line,
}


def documented_places() -> list[str]:
    """The numbered paths of the how-to's "The three places" section."""
    text = HOW_TO.read_text(encoding="utf-8")
    section = text.split("## The three places", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for line in section.splitlines() if (m := re.match(r"\d+\. `([^`]+)`", line))]


def test_the_how_to_lists_at_most_three_places_and_they_are_the_ones_planted() -> None:
    places = documented_places()
    assert 1 <= len(places) <= 3, places
    assert places == list(EDITS)
    for place in places:  # each is a file of the checkout, or the new module's folder
        assert (ROOT / place.replace("<name>.py", "")).exists(), place
    text = HOW_TO.read_text(encoding="utf-8")
    assert ROW in text and REGISTRY_LINE in text  # the lines the planting edits add are the ones shown


@pytest.fixture
def blank(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """`blank` planted at run time: the how-to's module, a row in METHODS and a line in LABELERS. The schema's list
    of method names is derived from the table when warehouse.schemas is imported, so it is re-derived here."""
    (tmp_path / "blank_labeler.py").write_text(blank_module_source())
    spec = importlib.util.spec_from_file_location("blank_labeler", tmp_path / "blank_labeler.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(method_table, "METHODS", (*method_table.METHODS, method_table.Method(
        "blank", "formal", "Empty steps are wrong")))
    monkeypatch.setitem(LABELERS, "blank", LabelerSpec(module.BlankConfig, module.BlankConfig(), module.BlankLabeler,
                                                       "rows"))
    monkeypatch.setitem(VALUE_RULES["step_labels"], "method", Allowed(one_of=method_table.method_names()))
    return module


def test_before_planting_blank_is_no_method_nor_recipe_key() -> None:
    assert "blank" not in computed_methods() and "blank" not in recipe_label_assets()
    with pytest.raises(RecipeError, match=r"labels.methods \['blank'\] are not labelers"):
        parse_recipe({"labels": {"methods": ["blank"]}, "prm": {"label_method": "truth"}})


def test_a_planted_method_reaches_the_table_registry_and_recipe(blank: ModuleType) -> None:
    row = method("blank")
    assert (row.computed, row.generated, row.recipe_key, row.asset_key) == (True, True, "blank", "blank_labels")
    assert computed_methods()[-1] == "blank" and label_assets()["blank_labels"] == ("blank",)
    assert recipe_label_assets()["blank"] == "blank_labels"
    assert isinstance(get_labeler("blank"), blank.BlankLabeler)
    recipe = parse_recipe({"labels": {"methods": ["blank"]}, "prm": {"label_method": "truth"}})
    assert recipe_selection(recipe, "refresh") == ["problems", "solutions", "blank_labels"]
    # A recipe without the method still cannot train on its labels.
    with pytest.raises(RecipeError, match=r"no labeler of labels\.methods"):
        parse_recipe({"labels": {"methods": ["mc"]}, "prm": {"label_method": "z3"}})


def _two_steps(wh: Warehouse) -> None:
    wh.write("problems", [{"problem_id": "p", "task": "arith_word", "split": "test", "question": "q",
                           "gold_answer": "1"}], **KW)
    wh.write("solutions", [{"solution_id": "s", "problem_id": "p", "sample_idx": 0, "text": "1 = 1\n\n \n",
                            "n_steps": 2, "status": "ok", "model": "m"}], **KW)
    wh.write("steps", [{"solution_id": "s", "problem_id": "p", "step_idx": k, "text": t, "char_start": 0,
                        "char_end": 5} for k, t in enumerate(["1 = 1", " "])], **KW)


def _blank_labels(root: str) -> list[tuple]:
    return connect(root).execute("SELECT step_idx, hard_label, status FROM step_labels WHERE method = 'blank' "
                                 "ORDER BY step_idx").fetchall()


def test_a_planted_method_labels_a_partition_through_the_shared_path(blank: ModuleType, wh: Warehouse) -> None:
    _two_steps(wh)
    report = label_method_partition(wh, "blank", run_id="r1", **KW)
    assert (report.method, report.labeled_solutions, report.labels) == ("blank", 1, 2)
    assert report.label_balance == {"good": 1, "bad": 1}
    assert _blank_labels(wh.root) == [(0, True, "labeled"), (1, False, "labeled")]
    label_method_partition(wh, "blank", run_id="r2", **KW)  # replaces its labels, never doubles them
    assert len(_blank_labels(wh.root)) == 2
    with pytest.raises(ValueError, match="needs rollouts: pass backend and prompt and model"):
        label_method_partition(wh, "mc", run_id="r3", **KW)


def test_a_planted_method_gets_a_made_asset_with_checks(blank: ModuleType, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from assets.checks import step_label_checks
    from assets.labeling import METHOD_ASSETS, method_assets
    from assets.partitions import partition_key, register_sources
    from assets.resources import WarehouseResource

    # the checkout's own table: every method has a hand-written asset but the opt-in mc_adaptive and active (made)
    assert [a.key.to_user_string() for a in METHOD_ASSETS] == ["mc_adaptive_labels", "active_labels"]
    (made,) = [a for a in method_assets() if a.key not in {m.key for m in METHOD_ASSETS}]
    assert made.key == dg.AssetKey("blank_labels") and made.group_names_by_key[made.key] == "labeling"
    assert {k.to_user_string() for k in made.asset_deps[made.key]} == {"solutions"}  # writes `steps`, blank reads
    assert made.required_resource_keys - {"io_manager"} == {"warehouse"}  # a derived method starts no engine
    monkeypatch.setenv("PRM_DATA_ROOT", str(tmp_path / "warehouse"))
    resource = WarehouseResource()
    _two_steps(resource.get())
    checks = step_label_checks(made, label_assets()["blank_labels"])
    (tmp_path / "dagster_home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster_home")) as instance:
        register_sources(instance, ["arith"])
        result = dg.materialize([made, *checks], partition_key=partition_key(KW["day"], "arith"), instance=instance,
                                resources={"warehouse": resource})
    assert result.success
    assert result.asset_materializations_for_node("blank_labels")[0].metadata["dagster/row_count"].value == 2
    evaluations = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert {"step_labels_schema_conforms", "step_labels_in_range"} <= set(evaluations)
    assert evaluations["step_labels_schema_conforms"] and evaluations["step_labels_in_range"]
    assert _blank_labels(resource.get().root) == [(0, True, "labeled"), (1, False, "labeled")]


def test_every_label_asset_of_the_table_has_its_step_label_checks() -> None:
    from assets.checks import LABEL_WRITERS

    assert {a.key.to_user_string(): names for a, names in LABEL_WRITERS} == label_assets()


def test_planted_in_a_copy_of_the_checkout_it_runs_without_other_code(tmp_path: Path) -> None:
    """The three edits in a copy of the code; Dagster's definitions, the recipe and the warehouse then take the
    method up with nothing else changed (the import-time derivations included)."""
    copy = tmp_path / "checkout"
    for package in ("warehouse", "prm", "verifiers", "assets", "pipelines"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    for edit in EDITS.values():
        edit(copy)
    script = tmp_path / "walk.py"
    script.write_text(WALK)
    env = {**os.environ, "PYTHONPATH": str(copy), "OMP_NUM_THREADS": "1", "PRM_DATA_ROOT": str(tmp_path / "wh"),
           "DAGSTER_HOME": str(tmp_path / "dagster_home")}
    (tmp_path / "dagster_home").mkdir()
    done = subprocess.run([sys.executable, str(script)], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    walk = json.loads(done.stdout.strip().splitlines()[-1])
    assert walk["module"] == str(copy / "prm" / "labeling" / "blank.py")
    assert walk["deps"] == ["solutions"] and walk["in_refresh"] and walk["audit_after"] and walk["consensus_after"]
    assert {"blank_label_balance", "step_labels_schema_conforms", "step_labels_in_range"} <= set(walk["checks"])
    assert walk["selection"] == ["problems", "solutions", "blank_labels"]
    assert walk["labels"] == [[0, True], [1, False]] and walk["view"] == [[0, True], [1, False]]
    assert set(walk["passed"]) == set(walk["checks"])


WALK = '''
import json

import dagster as dg

import pipelines.definitions as d
import prm.labeling.blank
from assets.labeling import blank_labels  # a module attribute, where Dagster's loaders look
from assets.partitions import partition_key, register_sources
from assets.resources import WarehouseResource
from pipelines.recipe import parse_recipe
from pipelines.run_config import recipe_selection
from warehouse import connect

key = dg.AssetKey("blank_labels")
graph = d.defs.resolve_asset_graph()
node = graph.get(key)
refresh = d.defs.resolve_job_def("refresh")
out = {
    "module": prm.labeling.blank.__file__,
    "deps": sorted(k.to_user_string() for k in node.parent_keys),
    "checks": sorted(c.name for c in node.check_keys),
    "in_refresh": key in refresh.asset_layer.asset_graph.get_all_asset_keys(),
    "audit_after": key in graph.get(dg.AssetKey("label_audit")).parent_keys,
    "consensus_after": key in graph.get(dg.AssetKey("consensus_labels")).parent_keys,
    "selection": recipe_selection(parse_recipe({"labels": {"methods": ["blank"]}, "prm": {"label_method": "blank"}}),
                                  "refresh"),
}
wh = WarehouseResource().get()
kw = {"source": "arith", "day": "2026-11-20"}
wh.write("problems", [{"problem_id": "p", "task": "arith_word", "split": "test", "question": "q",
                       "gold_answer": "1"}], **kw)
wh.write("solutions", [{"solution_id": "s", "problem_id": "p", "sample_idx": 0, "text": "1 = 1", "n_steps": 2,
                        "status": "ok", "model": "m"}], **kw)
wh.write("steps", [{"solution_id": "s", "problem_id": "p", "step_idx": k, "text": t, "char_start": 0,
                    "char_end": 5} for k, t in enumerate(["1 = 1", " "])], **kw)
checks = [c for c in d.CHECKS if any(k.asset_key == key for k in c.check_keys)]
with dg.instance_for_test() as instance:
    register_sources(instance, ["arith"])
    result = dg.materialize([blank_labels, *checks], partition_key=partition_key(kw["day"], "arith"),
                            instance=instance, resources={"warehouse": WarehouseResource()})
out["passed"] = sorted(e.check_name for e in result.get_asset_check_evaluations() if e.passed)
assert result.success
con = connect(wh.root)
out["labels"] = con.execute("SELECT step_idx, hard_label FROM step_labels WHERE method = 'blank' "
                            "ORDER BY step_idx").fetchall()
out["view"] = con.execute("SELECT step_idx, blank_hard FROM labeled_steps ORDER BY step_idx").fetchall()
print(json.dumps(out))
'''
