"""A recipe's dataset file with bad rows or a whole-file fault, staged with ``dataset.fields`` or ``order:
shortest``: a dry run prints the rejected rows' count or one error line, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main

GOOD = json.dumps({"prompt": "What is 1+1?", "target": "2"}).encode()
DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE = b'{"prompt": "How big?", "target": ' + b"9" * 5_000 + b"}"
LATIN1 = b'{"prompt": "caf\xe9?", "target": "1"}'
STAGINGS = {"fields": "fields: {question: prompt, answer: target}",
            "shortest": "fields: {question: prompt, answer: target}, order: shortest"}


def _dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, data: bytes, staging: str):
    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / name).write_bytes(data)
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"dataset: {{path: {tmp_path / name}, source: mine, {STAGINGS[staging]}}}\n")
    return CliRunner().invoke(main, ["run", str(recipe), "--dry-run"])


@pytest.mark.parametrize("staging", sorted(STAGINGS))
def test_bad_rows_are_counted_and_the_good_ones_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     staging: str) -> None:
    data = b"\n".join((GOOD, DEEP, HUGE, LATIN1, b"")) + b"\n"
    result = _dry_run(tmp_path, monkeypatch, "mine.jsonl", data, staging)
    assert result.exit_code == 0, result.output
    assert "1 problems with a gold answer, 3 rows rejected" in result.output


WHOLE_FILE = {
    "latin1_jsonl": ("mine.jsonl", LATIN1 + b"\n", r"mine\.jsonl has no usable row .*not UTF-8"),
    "latin1_array": ("mine.json", b"[" + LATIN1 + b"]", r"mine\.json is not UTF-8 text"),
    "bad_array": ("mine.json", b"[" + GOOD + b",", r"mine\.json is not a valid JSON array"),
    "garbage_parquet": ("mine.parquet", b"PAR1 not really", r"mine\.parquet is not a readable Parquet file"),
}


@pytest.mark.parametrize("staging", sorted(STAGINGS))
@pytest.mark.parametrize("kind", sorted(WHOLE_FILE))
def test_a_file_fault_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str,
                                        staging: str) -> None:
    name, data, expected = WHOLE_FILE[kind]
    result = _dry_run(tmp_path, monkeypatch, name, data, staging)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert re.search(expected, result.output), result.output


ASSET_FAULTS = {  # an inbox file with no good row: each once escaped the asset as a traceback
    "deep_and_huge": ("mine.jsonl", DEEP + b"\n" + HUGE + b"\n", r"mine\.jsonl has no usable row \(2 rejected\)"),
    "bad_array": ("mine.json", b"[" + GOOD + b",", r"mine\.json is not a valid JSON array"),
}


@pytest.mark.parametrize("kind", sorted(ASSET_FAULTS))
def test_the_problems_asset_fails_with_the_files_error(tmp_path: Path, kind: str) -> None:
    import dagster as dg

    from assets.problems import ProblemsConfig, problems
    from assets.resources import WarehouseResource

    name, data, expected = ASSET_FAULTS[kind]
    (tmp_path / "inbox").mkdir()
    (tmp_path / "inbox" / name).write_bytes(data)
    context = dg.build_asset_context(partition_key=dg.MultiPartitionKey({"day": "2026-01-01", "source": "mine"}))
    warehouse = WarehouseResource(data_root=str(tmp_path / "warehouse"), inbox=str(tmp_path / "inbox"))
    with pytest.raises(dg.Failure) as info:
        problems(context, ProblemsConfig(), warehouse)
    assert info.value.description.startswith("cannot load problems of source 'mine' for 2026-01-01: ")
    assert re.search(expected, info.value.description) and "\n" not in info.value.description
