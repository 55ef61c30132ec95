"""Solutions a user already has, end to end on the 20-row ProcessBench slices the package ships (no ../shared):
the inbox file and its sidecar, problems with the reference's gold answers, the solutions stored as they are, a
formal labeler and the reference check, the audit against people's first-error labels (queryable with SQL), and the
eval command on the shipped PRM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg

from assets.partitions import partition_key, register_sources
from pipelines.definitions import defs
from pipelines.inbox import sidecar_recipe
from pipelines.run_config import recipe_run_config, recipe_selection
from prm.evaluation import SLICES
from warehouse import connect

FIXTURES = SLICES
DAY = "2026-11-28"


def _drop(inbox: Path, methods: str = "[formal]") -> None:
    shutil.copy(FIXTURES / "gsm8k.json", inbox / "pb_gsm8k.json")
    (inbox / "pb_gsm8k.yaml").write_text(
        f"dataset: {{kind: solutions, reference: {FIXTURES / 'gsm8k_reference.jsonl'}, task: gsm8k}}\n"
        f"labels: {{methods: {methods}}}\nprm: {{label_method: sympy_ref}}\n")


def _run(instance, inbox: Path) -> dg.ExecuteInProcessResult:
    recipe = sidecar_recipe(inbox, "pb_gsm8k")
    assert recipe is not None
    register_sources(instance, ["pb_gsm8k"])
    selection = [dg.AssetKey(k) for k in recipe_selection(recipe, "refresh")]
    return defs.resolve_job_def("refresh").execute_in_process(
        partition_key=partition_key(DAY, "pb_gsm8k"), instance=instance,
        run_config=recipe_run_config(recipe, "refresh"), raise_on_error=False, asset_selection=selection)


def test_a_solution_file_is_labeled_as_it_is_and_audited_against_people(instance, resource) -> None:
    inbox = resource.inbox_path()
    _drop(inbox)
    result = _run(instance, inbox)
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    con = connect(resource.get().root)
    problems = con.execute("SELECT count(*), count(*) FILTER (WHERE gold_answer <> ''), min(task) FROM problems")
    assert problems.fetchone() == (19, 19, "gsm8k")  # 20 rows, two of one problem; all in the reference
    rows = json.loads((FIXTURES / "gsm8k.json").read_text())
    stored = dict(con.execute("SELECT solution_id, first_error_truth FROM solutions").fetchall())
    assert stored == {r["id"]: r["label"] for r in rows}
    steps = con.execute("SELECT count(*) FROM steps").fetchone()[0]
    assert steps == sum(len(r["steps"]) for r in rows)
    # The stored steps are the file's steps, character for character.
    first = con.execute("SELECT text FROM steps WHERE solution_id = ? ORDER BY step_idx", [rows[0]["id"]]).fetchall()
    assert [t for (t,) in first] == rows[0]["steps"]
    audit = {m: (v, json.loads(d)) for m, v, d in con.execute(
        "SELECT model, value, detail_json FROM prm_evaluations WHERE experiment = 'label_audit_people' "
        "AND metric = 'correct_acc'").fetchall()}
    assert set(audit) == {"sympy", "sympy_ref"} and audit["sympy"][1]["truth"] == "people"
    assert not audit["sympy"][1]["uses_reference"] and audit["sympy_ref"][1]["uses_reference"]
    f1 = dict(con.execute("SELECT model, value FROM prm_evaluations WHERE experiment = 'label_audit_people' "
                          "AND metric = 'processbench_f1'").fetchall())
    assert f1["sympy_ref"] > f1["sympy"]  # the gold answer and the reference's values find more first errors
    # Nothing was sampled: the policy never ran.
    assert con.execute("SELECT count(*) FROM solutions WHERE model LIKE 'file:%' OR model = 'arith-policy'"
                       ).fetchone()[0] == 0


def test_a_malformed_solution_file_fails_with_its_line_and_writes_nothing(instance, resource) -> None:
    inbox = resource.inbox_path()
    _drop(inbox)
    rows = json.loads((inbox / "pb_gsm8k.json").read_text())
    rows[3]["label"] = 99
    (inbox / "pb_gsm8k.json").write_text(json.dumps(rows))
    result = _run(instance, inbox)
    assert not result.success
    failures = [str(e.event_specific_data.error) for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert len(failures) == 1 and "pb_gsm8k.json:4: label 99" in failures[0]
    assert not resource.get().files("solutions")


def test_a_recipe_says_what_its_file_holds_and_refuses_what_cannot_apply() -> None:
    import pytest

    from pipelines.recipe import RecipeError, parse_recipe

    recipe = parse_recipe({"dataset": {"path": str(FIXTURES / "gsm8k.json"), "kind": "solutions",
                                       "reference": str(FIXTURES / "gsm8k_reference.jsonl"), "task": "gsm8k"}})
    problems = recipe_run_config(recipe, "refresh")["ops"]["problems"]["config"]
    assert problems == {"kind": "solutions", "reference": str(FIXTURES / "gsm8k_reference.jsonl"), "task": "gsm8k"}
    chosen = parse_recipe({"dataset": {"path": "x.json", "kind": "solutions"}, "labels": {"methods": ["formal"]},
                           "prm": {"label_method": "sympy_ref"}})
    assert recipe_selection(chosen, "refresh") == ["problems", "solutions", "formal_verifications", "label_audit"]
    with pytest.raises(RecipeError, match=r"dataset\.kind 'rollouts' is unknown"):
        parse_recipe({"dataset": {"kind": "rollouts"}})
    with pytest.raises(RecipeError, match=r"set dataset\.kind: solutions"):
        parse_recipe({"dataset": {"path": "x.jsonl", "reference": "gsm8k.jsonl"}})
    with pytest.raises(RecipeError, match=r"dataset\.task 'physics' is unknown"):
        parse_recipe({"dataset": {"path": "x.jsonl", "kind": "solutions", "task": "physics"}})


def test_a_dry_run_of_a_solutions_recipe_reads_the_file_and_its_reference(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pipelines.cli import main

    recipe = tmp_path / "pb.yaml"
    recipe.write_text(f"dataset: {{path: {SLICES / 'gsm8k.json'}, source: pb, kind: solutions, "
                      f"reference: {SLICES / 'gsm8k_reference.jsonl'}, task: gsm8k}}\nlabels: {{methods: [formal]}}\n"
                      "prm: {label_method: sympy_ref}\n")
    result = CliRunner().invoke(main, ["run", str(recipe), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "20 of 20 rows kept" in result.output and "19 of 19 problems with a gold answer" in result.output


def test_the_command_scores_the_shipped_prm_on_the_slices(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pipelines.cli import main
    from prm.metrics.processbench import score_rows

    out = tmp_path / "preds.jsonl"
    result = CliRunner().invoke(main, ["eval", "processbench", "--prm", "arith-prm", "--data", str(SLICES),
                                       "--split", "gsm8k", "math", "--out", str(out)])
    assert result.exit_code == 0, result.output
    last = json.loads(result.output.strip().splitlines()[-1])
    assert last["prm"].startswith("arith-prm@")
    assert [(s["split"], s["threshold_from"]) for s in last["splits"]] == [
        ("gsm8k", "fixed"), ("gsm8k", "math"), ("math", "fixed"), ("math", "gsm8k")]
    preds = [json.loads(line) for line in out.read_text().splitlines()]
    for split in ("gsm8k", "math"):
        fixed = next(s for s in last["splits"] if s["split"] == split and s["threshold_from"] == "fixed")
        assert score_rows([p for p in preds if p["split"] == split]).f1 == fixed["f1"] and fixed["rows"] == 20


def test_five_thousand_solutions_go_in_with_every_count(tmp_path: Path) -> None:
    from prm.datagen import intake_rows, read_intake

    rows = json.loads((SLICES / "gsm8k.json").read_text())
    big = [{**r, "id": f"{r['id']}-{k}"} for k in range(250) for r in rows]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(big))
    intake = read_intake(path, source="big", reference=SLICES / "gsm8k_reference.jsonl", task="gsm8k")
    sols, steps, counts = intake_rows(intake.loaded)
    assert counts.n_solutions == len(sols) == 5000 and counts.n_problems == 19 and counts.n_human_labeled == 5000
    assert counts.n_steps == len(steps) == 250 * sum(len(r["steps"]) for r in rows)
    assert counts.n_with_gold == 5000 and intake.n_reference_matched == 5000
    assert sum(s["first_error_truth"] == -1 for s in sols) == 2500  # the slice: 10 all-right rows of 20
