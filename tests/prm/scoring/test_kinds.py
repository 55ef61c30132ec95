"""PRM kinds by name (prm.scoring.PRM_KINDS): one vocabulary for training and scoring, old names read as aliases,
and a kind planted in the two places docs/how-to/add-a-prm-kind.md lists loads and scores with no other change."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from prm.format import CONVENTIONS
from prm.models import SHIPPED_PRM_DIR
from prm.rewards import step_rewards
from prm.scoring import PRM_KINDS, Scorer, ScorerConfig, load_prm, prm_kind
from prm.scoring.kinds import PRMKind, detect_kind

ROOT = Path(__file__).resolve().parents[3]
HOW_TO = ROOT / "docs" / "how-to" / "add-a-prm-kind.md"
CONFIG = ScorerConfig(device="cpu", dtype="float32")

# The kind's module (place 1): a scorer that reads no model, P(good) = 1 / (1 + characters of the step).
TOY_MODULE = '''
from pathlib import Path

MARKER = "toy_prm.json"


class ToyScorer:
    def __init__(self, folder):
        self.folder = folder

    def encode(self, problem, steps):
        return {"input_ids": list(range(len(problem) + sum(map(len, steps))))}

    def score_batch(self, items, batch_size=None):
        return [[1.0 / (1.0 + len(step)) for step in steps] for _, steps in items]

    def score_steps(self, problem, steps):
        return self.score_batch([(problem, steps)])[0]

    def close(self):
        pass


def detect(folder):
    return (Path(folder) / MARKER).is_file()


def load(folder, config, convention):
    return ToyScorer(folder)
'''


def _places() -> list[str]:
    """The files the how-to's numbered list under "The two places" names, in order."""
    section = HOW_TO.read_text(encoding="utf-8").split("## The two places", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. `([^`]+)`", section, flags=re.M)


def test_the_how_to_lists_two_places_and_the_second_is_the_registry() -> None:
    places = _places()
    assert places == ["prm/scoring/<name>.py", "prm/scoring/kinds.py"]
    assert "PRM_KINDS: dict[str, PRMKind] = {" in (ROOT / places[1]).read_text(encoding="utf-8")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "how-to/add-a-prm-kind.md" in nav


def test_a_kind_planted_in_the_two_places_is_detected_loaded_and_scored(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy_prm_kind.py").write_text(textwrap.dedent(TOY_MODULE))  # place 1: the kind's module
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(PRM_KINDS, "toy", PRMKind(  # place 2: one registry line
        "toy", "a step scored by its length", detect="toy_prm_kind:detect", load="toy_prm_kind:load"))
    folder = tmp_path / "prm"
    folder.mkdir()
    assert detect_kind(folder) is None  # nothing marks it yet
    (folder / "toy_prm.json").write_text("{}")

    assert detect_kind(folder).name == "toy"
    scorer = load_prm(folder, CONFIG)
    assert type(scorer).__name__ == "ToyScorer" and isinstance(scorer, Scorer)
    assert scorer.score_steps("q", ["abc", "a"]) == [0.25, 0.5]
    assert scorer.score_batch([("q", ["abcd"]), ("r", [])]) == [[0.2], []]
    # The rewards take any Scorer: the planted kind's scores reach them unchanged.
    assert step_rewards(scorer, "q", "abc\na").scores == [0.25, 0.5]


def test_old_names_are_aliases_of_one_vocabulary() -> None:
    assert prm_kind("token_classification") is PRM_KINDS["classifier"]
    assert prm_kind("implicit") is PRM_KINDS["lm"]
    assert prm_kind("lm_tokens").name == "lm_tokens" and prm_kind("lm").name == "lm"
    with pytest.raises(ValueError, match=r"head='regression' must be one of the PRM kinds \('lm', 'classifier'"):
        prm_kind("regression", "head")
    # Stored values stay: the conventions still write the names existing folders (and their versions) hold.
    assert CONVENTIONS["prm-pipeline"].head == "token_classification"
    assert CONVENTIONS["math-shepherd"].head == "lm_tokens"


def test_shipped_and_tagged_folders_are_detected_as_their_kinds(prm_folders: dict[str, Path]) -> None:
    assert detect_kind(SHIPPED_PRM_DIR).name == "lm"
    assert detect_kind(prm_folders["prm-pipeline"]).name == "classifier"
    assert detect_kind(prm_folders["math-shepherd"]).name == "lm_tokens"


def test_a_convention_naming_the_kind_by_its_registered_name_scores_as_the_old_name(
        prm_folders: dict[str, Path], tmp_path: Path) -> None:
    old = prm_folders["prm-pipeline"]
    new = shutil.copytree(old, tmp_path / "prm")
    convention = json.loads((new / "prm_convention.json").read_text())
    assert convention["head"] == "token_classification"
    (new / "prm_convention.json").write_text(json.dumps({**convention, "head": "classifier"}))
    items = [("2 + 3 = ?", ["2 + 3 = 5", "The answer is 5"])]
    assert load_prm(new, CONFIG).score_batch(items) == load_prm(old, CONFIG).score_batch(items)


def test_training_reads_the_same_vocabulary() -> None:
    from prm.training import PRMTrainConfig

    assert PRMTrainConfig().kind == "lm" and PRMTrainConfig().head == "lm"  # the stored default is unchanged
    assert PRMTrainConfig(head="implicit").kind == "lm"
    assert PRMTrainConfig(head="token_classification").kind == "classifier"
    with pytest.raises(ValueError, match=r"head='lm_tokens' must be one of \('lm', 'classifier'\)"):
        PRMTrainConfig(head="lm_tokens")  # scored, never trained here
