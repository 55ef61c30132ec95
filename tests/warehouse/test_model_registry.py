"""The model registry: entries round-trip, one commit per registration, lineage through SQL, and the table
versions a model names rebuild its training set exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prm.models import model_version, weights_digest
from prm.training import TrainingSetConfig, build_training_set
from tests.prm.training.conftest import fill_warehouse
from warehouse import Warehouse, connect
from warehouse.checks import ids_unique
from warehouse.cli import main
from warehouse.model_registry import ModelEntry, latest_model, lineage, register_models

DAY = "2026-11-24"
V0, V1, V2, V3 = "000000000000", "111111111111", "222222222222", "abcdef012345"


def entry(version: str, parent: str | None = None, **kw) -> ModelEntry:
    fields = {"name": f"m-{version[:2]}", "kind": "prm", "uri": f"/models/{version}", "parent_version": parent, **kw}
    return ModelEntry(version=version, **fields)


def register(wh: Warehouse, entries: list[ModelEntry], source: str = "arith", writer: str = "test", **kw):
    return register_models(wh, entries, source=source, day=kw.pop("day", DAY), run_id=kw.pop("run_id", "r1"),
                           writer=writer)


def test_an_entry_round_trips_through_the_table(wh: Warehouse) -> None:
    full = ModelEntry(name="flywheel-prm-r2", version=V2, kind="prm", uri="s3://bucket/models/r2",
                      parent_version=V1, round=2, training_tables={"steps": 3, "step_labels": 9},
                      training={"method": "omegaprm", "source": ["flywheel-r1", "flywheel-r2"], "seed": 0},
                      metrics={"eval_loss": 0.25, "steps": 40})
    bare = ModelEntry(name="arith-policy", version=V0, kind="policy", uri="/models/policy")
    register(wh, [bare, full])
    rows = wh.read("models").to_pylist()
    assert {ModelEntry.from_row(r) for r in rows} == {full, bare}
    stored = next(r for r in rows if r["version"] == V0)
    assert (stored["training_tables_json"], stored["training_json"], stored["metrics_json"]) == ("{}", None, None)
    assert json.loads(next(r for r in rows if r["version"] == V2)["training_tables_json"]) == {"step_labels": 9,
                                                                                              "steps": 3}
    assert latest_model(wh.root, "prm") == full and latest_model(wh.root, "policy") == bare


@pytest.mark.parametrize("fields,match", [
    ({"kind": "judge"}, r"kind='judge' is not a model kind; use one of \['policy', 'prm'\]"),
    ({"version": "ABCDEF012345"}, "not a weights digest: 12 lowercase hex"),
    ({"version": "abc"}, "not a weights digest"),
    ({"version": f"arith-policy@{V1}"}, f"pass the part after '@' of the model_version \\('{V1}'\\)"),
    ({"parent_version": "nope"}, "parent_version='nope' is not a weights digest"),
    ({"parent_version": V3}, "cannot be warm-started from itself"),
    ({"round": -1}, "not a flywheel round"),
    ({"name": " "}, "needs a non-empty name"),
    ({"uri": ""}, "needs a non-empty uri"),
    ({"training_tables": {"labels": 3}}, r"names \['labels'\], which are not warehouse tables"),
    ({"training_tables": {"steps": -1}}, "a table version is an int >= 0"),
    ({"metrics": {"f1": float("nan")}}, "not finite numbers"),
    ({"training": {"path": Path("/x")}}, "training is not JSON-serializable"),
])
def test_a_bad_entry_says_what_is_wrong(fields: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        entry(**{"version": V3, **fields})


def test_each_registration_is_one_commit_that_adds_rows_and_removes_none(wh: Warehouse) -> None:
    assert register(wh, [entry(V0), entry(V1, V0)]).version == 0
    assert wh.version("models") == 0
    other = register(wh, [entry(V2)], writer="other")  # another writer of the same partition
    assert other.version == 1
    again = register(wh, [entry(V1, V0)], run_id="r2")  # re-materializing: one more row, the earlier ones stay
    assert (again.version, again.rows, again.replaced) == (2, 1, 0)
    rows = wh.read("models").to_pylist()
    assert sorted((r["version"], r["run_id"]) for r in rows) == [(V0, "r1"), (V1, "r1"), (V1, "r2"), (V2, "r1")]
    assert wh.history("models", limit=1)[0]["run_id"] == "r2"
    nothing = register(wh, [], run_id="r3")  # an empty registration removes nothing
    assert (nothing.rows, nothing.replaced) == (0, 0) and len(wh.read("models")) == 4


def test_a_listed_twice_model_is_refused_before_the_disk(wh: Warehouse) -> None:
    with pytest.raises(ValueError, match="listed twice"):
        register(wh, [entry(V1), entry(V1)])
    assert wh.version("models") is None


def test_the_same_weights_in_two_partitions_are_two_registrations_and_one_lineage(wh: Warehouse) -> None:
    register(wh, [entry(V0, kind="policy", name="arith-policy")], source="policy", writer="policy_model")
    register(wh, [entry(V0, kind="policy", name="arith-policy", round=0)], source="flywheel-r0",
             writer="flywheel_start", run_id="r2", day="2026-11-25")
    register(wh, [entry(V1, V0)], run_id="r3")
    assert ids_unique(wh, "models").passed
    assert len(wh.read("models")) == 3
    chain = lineage(wh.root, V1)
    assert [(m.version, m.round) for m in chain] == [(V1, None), (V0, 0)]  # the newest registration of V0
    assert latest_model(wh.root, "policy", source="policy").round is None


def test_lineage_of_three_generations_through_sql(wh: Warehouse) -> None:
    register(wh, [entry(V0, kind="policy", training_tables={"problems": 1}), entry(V1, V0, round=0),
                  entry(V2, V1, round=1, training_tables={"steps": 4, "step_labels": 7})])
    rows = connect(wh.root).execute(
        "SELECT depth, ancestor_version, kind, round, training_tables_json FROM model_lineage "
        "WHERE version = ? ORDER BY depth", [V2]).fetchall()
    assert rows == [(0, V2, "prm", 1, '{"step_labels": 7, "steps": 4}'), (1, V1, "prm", 0, "{}"),
                    (2, V0, "policy", None, '{"problems": 1}')]
    assert [m.version for m in lineage(wh.root, V2)] == [V2, V1, V0]
    assert [m.version for m in lineage(connect(wh.root), V1)] == [V1, V0]
    result = CliRunner().invoke(main, ["sql", "--root", str(wh.root), "--format", "csv",
                                       f"SELECT depth, name FROM model_lineage WHERE version = '{V2}' ORDER BY depth"])
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["depth,name", "0,m-22", "1,m-11", "2,m-00"]


def test_lineage_stops_at_an_unregistered_parent_and_at_a_cycle(wh: Warehouse) -> None:
    register(wh, [entry(V1, V0), entry(V2, V3), entry(V3, V2)])  # V0 never registered; V2 <-> V3
    sql = "SELECT ancestor_version, name FROM model_lineage WHERE version = ? ORDER BY depth"
    assert connect(wh.root).execute(sql, [V1]).fetchall() == [(V1, "m-11"), (V0, None)]  # the break shows
    assert [m.version for m in lineage(wh.root, V1)] == [V1]
    assert [m.version for m in lineage(wh.root, V2)] == [V2, V3]
    assert lineage(wh.root, "ffffffffffff") == []


def test_latest_model_is_the_newest_registration(wh: Warehouse) -> None:
    assert latest_model(wh.root, "prm") is None
    register(wh, [entry(V0, name="a"), entry(V1, name="b")], source="s1")  # later in the list = newer
    assert latest_model(wh.root, "prm").version == V1
    register(wh, [entry(V2, name="a")], source="s2", writer="w2")
    assert latest_model(wh.root, "prm").version == V2
    assert latest_model(wh.root, "prm", source="s1").version == V1
    assert latest_model(wh.root, "prm", source="s1", name="a").version == V0
    assert latest_model(wh.root, "prm", name="c") is None and latest_model(wh.root, "policy") is None
    with pytest.raises(ValueError, match="not a model kind"):
        latest_model(wh.root, "judge")


def test_a_warehouse_written_before_the_table_existed_opens_with_an_empty_registry(wh: Warehouse) -> None:
    wh.write("problems", [{"problem_id": "p1", "task": "arith_chain", "split": "test", "question": "1+1",
                           "gold_answer": "2"}], source="arith", day=DAY)
    con = connect(wh.root)
    assert con.execute("SELECT count(*) FROM models").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM model_lineage").fetchone() == (0,)
    assert latest_model(con, "prm") is None and wh.version("models") is None


def test_weights_digest_is_the_version_of_model_version(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    digest = weights_digest(folder)
    assert model_version(folder) == f"{folder}@{digest}" and entry(digest).version == digest
    (folder / "model.safetensors").write_bytes(b"\1" * 64)  # retrained weights: a new version
    assert weights_digest(folder) != digest
    with pytest.raises(FileNotFoundError, match=r"has no config\.json"):
        weights_digest(tmp_path)


def test_every_models_lineage_names_the_table_versions_that_rebuild_its_training_set_exactly(wh: Warehouse) -> None:
    """The acceptance test of the registry: read back through SQL alone, a model's lineage names the Delta
    versions its training set read, and connecting at those versions rebuilds that set row for row."""
    fill_warehouse(wh)
    config = TrainingSetConfig(method="mc")
    ts = build_training_set(wh.root, config)
    used = {t: v for t, v in ts.warehouse_versions.items() if v is not None}
    register(wh, [entry(V0, kind="policy", name="policy"),
                  entry(V1, V0, training_tables=used, training={"method": config.method})])
    # The data moves on: flipped mc labels, a new version of step_labels.
    flipped = [{**r, "soft_label": 1.0 - r["soft_label"], "hard_label": not r["hard_label"]}
               for r in wh.read("step_labels").to_pylist() if r["method"] == "mc"]
    wh.write("step_labels", flipped, source=flipped[0]["source"], day=flipped[0]["day"], replace=True)
    assert build_training_set(wh.root, config).rows != ts.rows  # a rebuild at the current versions differs

    con = connect(wh.root)
    chain = con.execute("SELECT depth, name, training_tables_json FROM model_lineage WHERE version = ? "
                        "ORDER BY depth", [V1]).fetchall()
    assert [(depth, name) for depth, name, _ in chain] == [(0, "m-11"), (1, "policy")]
    for _, _, tables_json in chain:
        versions = json.loads(tables_json)
        if not versions:  # the policy: trained on no warehouse table
            continue
        assert versions == used and set(versions) >= {"problems", "solutions", "steps", "step_labels"}
        again = build_training_set(connect(wh.root, versions=versions), config)
        assert again.rows == ts.rows
        assert {t: again.warehouse_versions[t] for t in versions} == versions
