"""``--out`` never deletes what it did not write: a save lists its files in prm_files.json, and the next save into
the folder deletes those and nothing else; any other file makes the run refuse, naming the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.training.__main__ import main
from prm.training.constants import CARD_FILE, MANIFEST_FILE
from prm.training.out_folder import check_out, clear_checkpoints, clear_model_files, write_manifest

SHIPPED_PRM = Path(__file__).resolve().parents[3] / "prm" / "shipped" / "arith-prm"


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}


def _user_folder(tmp_path: Path) -> Path:
    """The issue's folder: a config.json beside a user's notes and results."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("config.json", "notes.txt", "results.csv"):
        (folder / name).write_text(f"the user's {name}")
    return folder


def test_a_folder_with_a_config_json_and_other_files_is_refused_and_kept(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path)
    before = _files(folder)
    for step in (check_out, clear_model_files):
        with pytest.raises(ValueError, match=r"holds a model with no prm_files\.json \(config\.json, notes\.txt, "
                                             r"results\.csv\)"):
            step(folder)
    assert _files(folder) == before


def test_the_cli_refuses_it_in_one_line_before_training(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = _user_folder(tmp_path)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"prompt": "q", "completions": ["a"], "labels": [True]}) + "\n")
    assert main(["train", "--data", str(rows), "--out", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: the output") and "notes.txt" in err and err.count("\n") == 1
    assert sorted(_files(folder)) == ["config.json", "notes.txt", "results.csv"]


def test_a_save_lists_its_files_and_the_next_save_deletes_only_those(tmp_path: Path) -> None:
    out = tmp_path / "prm"
    clear_model_files(out)  # a new folder
    for name in ("config.json", "model.safetensors", "chat_template.jinja"):
        (out / name).write_text("weights")
    write_manifest(out)
    (out / CARD_FILE).write_text("{}")
    listed = json.loads((out / MANIFEST_FILE).read_text())["files"]
    assert listed == sorted(["chat_template.jinja", "config.json", "model.safetensors", CARD_FILE])
    check_out(out)  # our own earlier files: replaced, not refused
    clear_model_files(out)
    assert _files(out) == {}


def test_a_file_added_after_the_save_is_never_deleted(tmp_path: Path) -> None:
    out = tmp_path / "prm"
    clear_model_files(out)
    (out / "config.json").write_text("{}")
    write_manifest(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files train_prm did not write \(notes\.txt\)"):
        clear_model_files(out)
    assert _files(out) == {"config.json": "{}", "notes.txt": "mine",
                           MANIFEST_FILE: (out / MANIFEST_FILE).read_text()}


@pytest.mark.parametrize("manifest", [
    '{"files": ["../victim.txt"]}',
    '{"files": ["/etc/hostname"]}',
    '{"files": "config.json"}',
    '{"files": [".."]}',
    "not json",
])
def test_a_manifest_that_names_anything_but_its_own_files_is_refused(tmp_path: Path, manifest: str) -> None:
    out = tmp_path / "prm"
    out.mkdir()
    (tmp_path / "victim.txt").write_text("outside")
    (out / MANIFEST_FILE).write_text(manifest)
    with pytest.raises(ValueError, match=r"prm_files\.json (is not a manifest|lists something other)"):
        clear_model_files(out)
    assert (tmp_path / "victim.txt").read_text() == "outside" and (out / MANIFEST_FILE).is_file()


def test_a_prm_saved_before_manifests_is_refused_not_wiped(tmp_path: Path) -> None:
    # The shipped PRM (and every PRM folder written before manifests) looks like ours but lists nothing.
    assert SHIPPED_PRM.is_dir() and not (SHIPPED_PRM / MANIFEST_FILE).exists()
    with pytest.raises(ValueError, match=rf"holds a model with no prm_files\.json \(config\.json, .*{CARD_FILE}"):
        check_out(SHIPPED_PRM)


def test_checkpoints_are_cleared_only_when_they_are_the_trainers(tmp_path: Path) -> None:
    out = tmp_path / "prm"
    (out / "checkpoints" / "checkpoint-10").mkdir(parents=True)
    check_out(out)
    clear_checkpoints(out)
    assert not (out / "checkpoints").exists()
    (out / "checkpoints" / "checkpoint-10").mkdir(parents=True)
    (out / "checkpoints" / "my-run").mkdir()
    with pytest.raises(ValueError, match=r"entries that are not training checkpoints \(my-run\)"):
        check_out(out)
