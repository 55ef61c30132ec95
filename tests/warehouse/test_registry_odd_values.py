"""The registry's register and read functions turn every odd value into one clear ValueError, before the disk
(issue 53 item 5): NaN/inf metrics, empty, huge or control-character strings, a non-str uri, None, wrong shapes.
Before, some were stored as given (a 10 MB name, a NUL in a uri) and others crashed deep inside (AttributeError,
an Arrow or DuckDB conversion error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse import Warehouse
from warehouse.model_registry import ModelEntry, latest_model, lineage, model_versions, register_models

GOOD = "0123456789ab"
DAY = "2026-11-24"
BASE = {"name": "prm", "version": GOOD, "kind": "prm", "uri": "/models/prm"}
HUGE = "x" * 1_000_000


@pytest.mark.parametrize(("fields", "match"), [
    ({"name": None}, r"name=None: the registry needs a non-empty name"),
    ({"name": ""}, "needs a non-empty name"),
    ({"name": 5}, "name=5: the registry needs a non-empty name"),
    ({"name": HUGE}, "name is 1,000,000 characters, over the 256 allowed"),
    ({"name": "prm\n"}, r"holds the control character '\\n'"),
    ({"uri": None}, "needs a non-empty uri"),
    ({"uri": Path("/models/prm")}, r"uri=PosixPath\('/models/prm'\): the registry needs a non-empty uri, a string"),
    ({"uri": "/" + HUGE}, "uri is 1,000,001 characters, over the 4,096 allowed"),
    ({"uri": "/models/prm\x00"}, r"holds the control character '\\x00'"),
    ({"kind": None}, "kind=None is not a model kind"),
    ({"kind": ["prm"]}, r"kind=\['prm'\] is not a model kind"),
    ({"version": None}, "version=None is not a weights digest"),
    ({"metrics": None}, "metrics=None is not a mapping"),
    ({"metrics": [0.5]}, r"metrics=\[0.5\] is not a mapping"),
    ({"metrics": {"f1": float("nan")}}, "are not finite numbers"),
    ({"metrics": {"f1": float("-inf")}}, "are not finite numbers"),
    ({"metrics": {"f1": None}}, "are not finite numbers"),
    ({"metrics": {1: 0.5}}, "metric name=1: the registry needs a non-empty metric name"),
    ({"metrics": {"": 0.5}}, "needs a non-empty metric name"),
    ({"metrics": {HUGE: 0.5}}, "metric name is 1,000,000 characters"),
    ({"training": None}, "training=None is not a mapping"),
    ({"training": {"note": "x" * 2_000_000}}, "training is 2,000,0.. characters of JSON, over the 1,048,576"),
    ({"training": {"lr": float("nan")}}, "training is not JSON-serializable"),
    ({"training_tables": None}, "training_tables=None is not a mapping"),
    ({"training_tables": ["steps"]}, "is not a mapping"),
    ({"training_tables": {"steps": 2**63}}, "a table version is an int >= 0, at most 9223372036854775807"),
    ({"training_tables": {1: 3, "labels": 2}}, r"names \['labels', 1\], which are not warehouse tables"),
    ({"round": 2**31}, r"round=2147483648 is not a flywheel round \(an int >= 0, at most 2147483647\)"),
    ({"status": None}, "status=None is not a registry status"),
    ({"status_note": HUGE}, "status_note is 1,000,000 characters, over the 10,000 allowed"),
])
def test_an_odd_entry_field_is_a_clear_value_error(fields: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ModelEntry(**{**BASE, **fields})


@pytest.mark.parametrize(("kw", "match"), [
    ({"entries": None}, "entries=None: register_models takes a list of ModelEntry objects"),
    ({"entries": ModelEntry(**BASE)}, "register_models takes a list of ModelEntry objects"),
    ({"entries": "prm"}, "register_models takes a list of ModelEntry objects"),
    ({"entries": [BASE]}, "register_models takes ModelEntry objects, got dict"),
    ({"source": None}, "source=None: the registry needs a non-empty source"),
    ({"source": ""}, "needs a non-empty source"),
    ({"day": None}, "day=None is not a YYYY-MM-DD string"),
    ({"day": 20261124}, "day=20261124 is not a YYYY-MM-DD string"),
    ({"day": "24/11/2026"}, "is not YYYY-MM-DD"),
    ({"run_id": None}, "run_id=None: the registry needs a non-empty run_id"),
    ({"run_id": 5}, "run_id=5: the registry needs a non-empty run_id"),
    ({"run_id": ""}, "needs a non-empty run_id"),
    ({"run_id": HUGE}, "run_id is 1,000,000 characters, over the 256 allowed"),
    ({"writer": None}, "writer=None: the registry needs a non-empty writer"),
    ({"writer": ""}, "needs a non-empty writer"),
])
def test_an_odd_registration_argument_is_a_clear_value_error_before_the_disk(wh: Warehouse, kw: dict,
                                                                             match: str) -> None:
    args = {"entries": [ModelEntry(**BASE)], "source": "arith", "day": DAY, "run_id": "r1", "writer": "test", **kw}
    with pytest.raises(ValueError, match=match):
        register_models(wh, args.pop("entries"), **args)
    assert wh.version("models") is None


@pytest.mark.parametrize(("read", "match"), [
    (lambda root: latest_model(root, None), "kind=None is not a model kind"),
    (lambda root: latest_model(root, "prm", source=3), "source=3: the registry needs a non-empty source"),
    (lambda root: latest_model(root, "prm", name=["prm"]), r"name=\['prm'\]: the registry needs a non-empty name"),
    (lambda root: latest_model(root, "prm", name=""), "needs a non-empty name"),
    (lambda root: latest_model(root, "prm", include_rejected="no"), "include_rejected='no' is not True or False"),
    (lambda root: latest_model(None, "prm"), "snapshot=None is not a warehouse root or connection"),
    (lambda root: latest_model(5, "prm"), "snapshot=5 is not a warehouse root or connection"),
    (lambda root: model_versions(root, ["prm"]), r"kind=\['prm'\] is not a model kind"),
    (lambda root: model_versions(" ", "prm"), "snapshot=' ' is not a warehouse root or connection"),
    (lambda root: lineage(root, None), "version=None is not a weights digest"),
    (lambda root: lineage(None, GOOD), "snapshot=None is not a warehouse root or connection"),
], ids=["kind", "source", "name-list", "name-empty", "include_rejected", "snapshot-none", "snapshot-int",
        "versions-kind", "versions-blank-root", "lineage-version", "lineage-snapshot"])
def test_an_odd_read_argument_is_a_clear_value_error(wh: Warehouse, read, match: str) -> None:
    register_models(wh, [ModelEntry(**BASE)], source="arith", day=DAY, run_id="r1", writer="test")
    with pytest.raises(ValueError, match=match):
        read(wh.root)
    assert latest_model(wh.root, "prm") == ModelEntry(**BASE)  # the sound read of the same registry still works
