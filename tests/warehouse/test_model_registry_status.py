"""Registry rows carry an accepted/rejected status that "latest" lookups honour, a future ``created_at`` cannot
shadow later registrations, and a re-registration never erases an earlier version (issue 38 items 3, 4, 11)."""

from __future__ import annotations

import datetime as dt

import pytest

from warehouse import Warehouse, connect
from warehouse.model_registry import (
    FutureRegistrationWarning,
    ModelEntry,
    latest_model,
    lineage,
    register_models,
)

DAY = "2026-11-24"
V0, V1, V2 = "000000000000", "111111111111", "222222222222"


def entry(version: str, **kw) -> ModelEntry:
    return ModelEntry(**{"name": "prm", "kind": "prm", "uri": f"/models/{version}", "version": version, **kw})


def register(wh: Warehouse, entries: list[ModelEntry], run_id: str = "r1", **kw):
    return register_models(wh, entries, source="arith", day=DAY, run_id=run_id, writer="test", **kw)


def test_a_future_created_at_does_not_shadow_a_later_registration(wh: Warehouse) -> None:
    future = dt.datetime.now(dt.UTC) + dt.timedelta(days=365)
    wh.write("models", [{**entry(V0).to_row(), "created_at": future}], source="arith", day=DAY, run_id="clock",
             writer="skewed")
    with pytest.warns(FutureRegistrationWarning, match="in the future"):
        register(wh, [entry(V1)], run_id="r2")
    assert latest_model(wh.root, "prm").version == V1
    with pytest.warns(FutureRegistrationWarning):  # said again while the future row is there
        register(wh, [entry(V2)], run_id="r3")
    assert latest_model(wh.root, "prm").version == V2


def test_a_rejected_model_stays_registered_but_latest_skips_it(wh: Warehouse) -> None:
    register(wh, [entry(V0)])
    register(wh, [entry(V1, parent_version=V0, status="rejected", status_note="F1 0.2 vs 0.6")], run_id="r2")
    assert latest_model(wh.root, "prm").version == V0
    newest = latest_model(wh.root, "prm", include_rejected=True)
    assert (newest.version, newest.status, newest.status_note) == (V1, "rejected", "F1 0.2 vs 0.6")
    assert [m.version for m in lineage(wh.root, V1)] == [V1, V0]  # its lineage stays whole
    # The newest registration of a version decides it: rejecting V0 later hides its earlier accepted row too.
    register(wh, [entry(V0, status="rejected")], run_id="r3")
    assert latest_model(wh.root, "prm") is None
    register(wh, [entry(V0)], run_id="r4")  # and accepting it again brings it back
    assert latest_model(wh.root, "prm").version == V0


def test_registering_again_keeps_the_earlier_versions(wh: Warehouse) -> None:
    register(wh, [entry(V0)])
    register(wh, [entry(V1)], run_id="r2")
    register(wh, [entry(V1)], run_id="r2")  # a retried step of the same run: registered once
    versions = sorted(v for (v,) in connect(wh.root).execute("SELECT version FROM models").fetchall())
    assert versions == [V0, V1]


@pytest.mark.parametrize(("fields", "match"), [
    ({"status": "maybe"}, r"status='maybe' is not a registry status; use one of \('accepted', 'rejected'\)"),
    ({"training": {"_registry": 1}}, "'_registry' is reserved"),
    ({"metrics": {"f1": 10**400}}, r"<int of ~401 digits>\} are not finite numbers"),
])
def test_a_bad_status_or_metric_is_one_line(fields: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match) as info:
        entry(V0, **fields)
    assert "\n" not in str(info.value)


def test_status_round_trips_and_an_accepted_row_is_unchanged(wh: Warehouse) -> None:
    assert entry(V0).to_row()["training_json"] is None  # rows written before statuses existed read as accepted
    register(wh, [entry(V0, status="rejected", status_note="why", training={"steps": 3})])
    got = latest_model(wh.root, "prm", include_rejected=True)
    assert (got.status, got.status_note, dict(got.training)) == ("rejected", "why", {"steps": 3})
