"""The warehouse on an ``s3://`` root, against a real S3-compatible server (moto) on 127.0.0.1."""

from __future__ import annotations

import pytest

from warehouse import Warehouse, connect
from warehouse.db import snapshot_versions
from warehouse.maintenance import maintain

DAY = "2026-11-20"


def _problems(tag: str, n: int = 3) -> list[dict]:
    return [{"problem_id": f"{tag}{i}", "task": "t", "split": "s", "question": tag, "gold_answer": "1"}
            for i in range(n)]


def test_writes_replaces_deletes_and_time_travel_on_s3(s3_root: str) -> None:
    wh = Warehouse(s3_root)
    assert wh.root == s3_root and wh.version("problems") is None
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    wh.write("problems", _problems("b"), source="arith", day=DAY, writer="other")
    result = wh.write("problems", _problems("c", 2), source="arith", day=DAY, replace=True)
    assert (result.replaced, result.version) == (3, 2)
    assert wh.delete_partition("problems", "arith", DAY, writer="other") == 3
    con = connect(s3_root)
    assert con.execute("SELECT question, count(*) FROM problems GROUP BY 1").fetchall() == [("c", 2)]
    assert snapshot_versions(con)["problems"] == 3
    past = connect(s3_root, versions={"problems": 1})
    assert past.execute("SELECT count(*) FROM problems").fetchone() == (6,)
    assert [c["version"] for c in wh.history("problems")] == [3, 2, 1, 0]
    assert Warehouse(s3_root).read_partition("problems", "arith", DAY).num_rows == 2


def test_maintenance_compacts_and_vacuums_on_s3(s3_root: str) -> None:
    wh = Warehouse(s3_root)
    for i in range(4):
        wh.write("problems", _problems(f"x{i}"), source="arith", day=DAY)
    wh.write("problems", _problems("y"), source="arith", day=DAY, replace=True)  # 4 files replaced by 1
    (done,) = maintain(wh, retention_hours=0, force=True, tables=["problems"])
    assert done.files_before == 1 and done.files_vacuumed == 4
    assert connect(s3_root).execute("SELECT count(*) FROM problems").fetchone() == (3,)


def test_an_unreachable_bucket_fails_with_the_uri(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    for key, value in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    wh = Warehouse("s3://no-such-bucket-prm/x")
    with pytest.raises(Exception, match="no-such-bucket-prm"):
        wh.write("problems", _problems("a"), source="arith", day=DAY)
