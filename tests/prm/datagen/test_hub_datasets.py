"""Datasets named as on the Hugging Face hub: loaded through ``datasets`` (a local dataset folder stands in for the hub,
as nothing may be downloaded here), written once as JSONL and reused; offline with no cache, one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.datagen import hub_file


def test_a_dataset_folder_loads_through_datasets_and_is_written_once(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # datasets resolves "owner/name" to a local folder of that name before the hub
    folder = tmp_path / "someone" / "tiny-gsm8k"
    folder.mkdir(parents=True)
    rows = [{"question": "1+1?", "answer": "1+1 = 2\n#### 2"}, {"question": "2+3?", "answer": "2+3 = 5\n#### 5"}]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    out = hub_file("someone/tiny-gsm8k", None, "test", cache=tmp_path / "cache")
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows
    (folder / "test.jsonl").unlink()  # the written file is reused: no second load
    assert hub_file("someone/tiny-gsm8k", None, "test", cache=tmp_path / "cache") == out


def test_offline_without_a_cached_copy_is_one_line_that_says_what_to_do(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets
    import huggingface_hub

    # HF_HUB_OFFLINE=1 as the libraries read it at import (they are imported already in this process)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    with pytest.raises(ValueError, match=r"cannot load the hub dataset 'openai/gsm8k' .*set dataset.path") as err:
        hub_file("openai/gsm8k", "main", "test", cache=tmp_path / "cache")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "cache").exists()  # nothing half-written


@pytest.mark.parametrize("name,config,split", [
    ("../etc", None, "test"), ("/abs/path", None, "test"), ("a/b/c", None, "test"), ("openai/gsm8k", "../x", "test"),
    ("openai/gsm8k", "main", "te st"), ("", None, "test"),
])
def test_ids_configs_and_splits_that_could_name_a_path_are_refused(tmp_path: Path, name, config, split):
    with pytest.raises(ValueError, match="is not a"):
        hub_file(name, config, split, cache=tmp_path)
