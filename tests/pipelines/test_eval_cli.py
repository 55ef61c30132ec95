"""``prm-pipeline eval processbench``: its JSON line with a tiny PRM on the 20-row fixtures, --out rows that
recompute the printed F1 exactly, a hub id (a dry run without network, and the fetch path with the hub stubbed),
the critic path with a scripted backend, and the errors that say what to pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from prm.evaluation import SLICES
from prm.files import read_jsonl
from prm.generation import BackendInfo, Completion
from prm.metrics.processbench import score_rows
from tests.tiny_models import TinyModels

FIXTURES = SLICES
CONTEXT = 1024  # the char tokenizer's own limit: about two thirds of the fixture rows are read in part
KEYS = {"split", "rows", "error_acc", "correct_acc", "f1", "f1_ci", "threshold", "threshold_from"}


def _fixture(name: str, tmp_path: Path) -> Path:
    """A fixture file, or a 4-row stand-in when the fixtures are absent."""
    path = FIXTURES / name
    if path.is_file():
        return path
    rows = [{"id": f"x-{i}", "generator": "g", "problem": f"What is {i} + 1?", "steps": [f"{i} + 1 = {i + 1 + i % 2}"],
             "final_answer_correct": i % 2 == 0, "label": 0 if i % 2 else -1} for i in range(4)]
    stand_in = tmp_path / name
    stand_in.write_text(json.dumps(rows))
    return stand_in


def _invoke(*args: str) -> tuple[int, str, dict | None]:
    result = CliRunner().invoke(main, ["eval", "processbench", *args], catch_exceptions=False)
    lines = result.stdout.strip().splitlines()
    last = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
    return result.exit_code, result.stdout + result.stderr, last


def test_a_tiny_prm_on_one_split_prints_one_row_and_the_json_line(tmp_path: Path, tiny_models: TinyModels) -> None:
    path, out = _fixture("gsm8k.json", tmp_path), tmp_path / "preds.jsonl"
    code, text, last = _invoke("--prm", str(tiny_models.prm(CONTEXT)), "--data", str(path), "--split", "gsm8k",
                               "--out", str(out))
    assert code == 0, text
    assert set(last) == {"splits", "prm"} and last["prm"].startswith(str(tiny_models.prm(CONTEXT)) + "@")
    (split,) = last["splits"]
    assert set(split) == KEYS and split["split"] == "gsm8k" and split["threshold_from"] == "fixed"
    assert split["threshold"] == 0.5 and split["rows"] == len(json.loads(path.read_text()))
    assert "only the fixed threshold" in text and text.count("\ngsm8k ") + text.startswith("gsm8k ") == 1
    rows = read_jsonl(out)
    assert len(rows) == split["rows"] and set(rows[0]) == {"id", "split", "label", "predicted"}
    again = score_rows(rows)
    assert (again.f1, again.error_acc, again.correct_acc) == (split["f1"], split["error_acc"], split["correct_acc"])


def test_two_splits_from_a_folder_each_get_a_threshold_chosen_on_the_other(tmp_path: Path,
                                                                           tiny_models: TinyModels) -> None:
    folder = tmp_path / "pb"
    folder.mkdir()
    for name in ("gsm8k.json", "math.json"):
        (folder / name).write_bytes(_fixture(name, tmp_path).read_bytes())
    out = tmp_path / "preds.jsonl"
    code, text, last = _invoke("--prm", str(tiny_models.prm(CONTEXT)), "--data", str(folder), "--split", "gsm8k",
                               "math", "--limit", "12", "--out", str(out))
    assert code == 0, text
    rules = [(s["split"], s["threshold_from"]) for s in last["splits"]]
    assert rules == [("gsm8k", "fixed"), ("gsm8k", "math"), ("math", "fixed"), ("math", "gsm8k")]
    assert all(set(s) == KEYS for s in last["splits"]) and {s["rows"] for s in last["splits"]} <= {4, 12}
    rows = read_jsonl(out)
    for fixed in (s for s in last["splits"] if s["threshold_from"] == "fixed"):
        assert score_rows([r for r in rows if r["split"] == fixed["split"]]).f1 == fixed["f1"]


def test_a_hub_id_dry_run_resolves_without_the_network(tmp_path: Path) -> None:
    path = _fixture("gsm8k.json", tmp_path)
    code, text, last = _invoke("--prm", "Qwen/Qwen2.5-Math-PRM-7B", "--data", str(path), "--dry-run")
    assert code == 0, text
    assert last["dry_run"] is True and "hub id 'Qwen/Qwen2.5-Math-PRM-7B'" in last["resolves_to"]
    assert last["splits"] == {"gsm8k": {"path": str(path), "rows": len(json.loads(path.read_text()))}}


def test_a_hub_id_is_fetched_into_the_cache_then_scored(tmp_path: Path, tiny_models: TinyModels,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    asked = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda repo_id, **kw: asked.append(repo_id) or str(tiny_models.prm(CONTEXT)))
    code, text, last = _invoke("--prm", "org/tiny-prm", "--data", str(_fixture("gsm8k.json", tmp_path)),
                               "--limit", "3")
    assert code == 0, text
    assert asked == ["org/tiny-prm"] and last["prm"] == "org/tiny-prm"


def test_an_unreachable_hub_id_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    def offline(repo_id: str, **kw: object) -> str:
        raise OSError("hub unreachable")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    code, text, _ = _invoke("--prm", "org/absent-prm", "--data", str(_fixture("gsm8k.json", tmp_path)))
    assert code == 1 and "hub id 'org/absent-prm' could not be fetched" in text and "huggingface-cli download" in text


class ScriptedBackend:
    """Every request answered with the first paragraph flagged (``\\boxed{0}``); the third one fails."""

    def __init__(self) -> None:
        self.info = BackendInfo("openai", "scripted", 0)
        self.requests: list = []

    def generate(self, requests):
        self.requests += list(requests)
        return [Completion.failed(i, "server error") if i == 2 else Completion(("\\boxed{0}",), ("stop",), 1, (1,),
                                                                               index=i) for i in range(len(requests))]

    def close(self) -> None:
        pass


def test_the_critic_path_with_a_scripted_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import prm.generation
    import prm.models

    class Plain:
        chat_template = None

    backend = ScriptedBackend()
    monkeypatch.setattr(prm.generation, "make_backend", lambda config: backend)
    monkeypatch.setattr(prm.models, "load_tokenizer", lambda name: Plain())
    path, out = _fixture("gsm8k.json", tmp_path), tmp_path / "critic.jsonl"
    code, text, last = _invoke("--judge", "some-judge", "--base-url", "http://127.0.0.1:9/v1", "--data", str(path),
                               "--limit", "6", "--max-tokens", "32", "--out", str(out))
    assert code == 0, text
    (split,) = last["splits"]
    assert split["threshold"] is None and split["threshold_from"] == "critic" and split["rows"] == 6
    assert last["prm"] == "some-judge via http://127.0.0.1:9/v1"
    assert {(r.temperature, r.max_tokens, r.n) for r in backend.requests} == {(0.0, 32, 1)}
    assert "[Math Problem]" in backend.requests[0].prompt and "1 requests failed" in text
    rows = read_jsonl(out)
    assert [r["predicted"] for r in rows] == [0, 0, None, 0, 0, 0]
    assert score_rows(rows).f1 == split["f1"]


@pytest.mark.parametrize("args, message", [
    ((), "pass exactly one of --prm"),
    (("--prm", "x", "--judge", "y"), "pass exactly one of --prm"),
    (("--prm", "x", "--base-url", "http://h/v1"), "--base-url serves a critic"),
    (("--prm", "x", "--data", "{fixture}", "--split", "a", "b"), "is one file, one split"),
    (("--prm", "x", "--data", "{folder}", "--split", "olympiadbench"), "no olympiadbench.json"),
    (("--prm", "x", "--data", "{folder}/absent"), "does not exist"),
])
def test_bad_arguments_say_what_to_pass(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    fixture = _fixture("gsm8k.json", tmp_path)
    args = tuple(a.format(fixture=fixture, folder=fixture.parent) for a in args)
    code, text, _ = _invoke(*args)
    assert code != 0 and message in text


def test_without_data_and_without_shared_it_says_to_pass_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import prm.evaluation

    monkeypatch.setattr(prm.evaluation, "SHARED_PROCESSBENCH", tmp_path / "absent")
    code, text, _ = _invoke("--prm", "x")
    assert code == 1 and "no --data given" in text and "pass --data" in text
