"""Training a tiny classification-head PRM: loss falls, save/reload, tag ids shared with scoring, resume, inputs,
adapters."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

from prm.format import CONVENTIONS, StepTagConvention, encode_steps, format_prompt, tag_ids
from prm.training import PRMTrainConfig, TrainingSetConfig, build_training_set, read_prm_card, train_prm
from prm.training.constants import IGNORE_INDEX
from prm.training.model import encode_row, prm_loss
from tests.prm.training.conftest import TINY_CONTEXT
from warehouse import Warehouse

STEPS = 20  # optimizer steps of the shared run: the loss of a full-batch tiny model falls well within them


def tiny(base: Path, **overrides) -> PRMTrainConfig:
    """A config that trains the tiny base in about a second: full batches, a high rate, no warmup."""
    kw = {"base_model": str(base), "head": "classifier", "max_steps": STEPS, "batch_size": 16, "learning_rate": 1e-2,
          "warmup_steps": 0, "logging_steps": 1, "eval_steps": 10, "save_steps": 10}
    return PRMTrainConfig(**{**kw, **overrides})


def learnable_rows(n: int, split: str, seed: int) -> list[dict]:
    """Steps "ok" are good and "no" bad: a pattern one layer learns in a few full-batch steps."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        labels = [rng.random() < 0.5 for _ in range(rng.randint(1, 3))]
        rows.append({"prompt": f"{i} plus 1", "completions": ["ok" if g else "no" for g in labels],
                     "labels": labels, "split": split, "solution_id": f"{split}{i}"})
    return rows


@pytest.fixture(scope="module")
def trl_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TRL stepwise-supervision rows in a JSONL file, 16 train and 8 val."""
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    rows = learnable_rows(16, "train", 0) + learnable_rows(8, "val", 1)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def trained(tiny_base: Path, trl_rows: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PRM trained for STEPS steps from the JSONL rows; checkpoints at steps 10 and 20."""
    return train_prm(trl_rows, tmp_path_factory.mktemp("prm") / "prm", tiny(tiny_base))


def _logits(folder: Path, input_ids: list[int]) -> torch.Tensor:
    model = AutoModelForTokenClassification.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        return model(input_ids=torch.tensor([input_ids])).logits[0]


def test_loss_falls_training_from_trl_jsonl_rows(trained: Path) -> None:
    card = read_prm_card(trained)
    losses = [loss for _, loss in card["loss_history"]]
    assert len(losses) == STEPS
    assert sum(losses[-3:]) / 3 < 0.7 * sum(losses[:3]) / 3, losses
    assert card["rows"] == {"train": 16, "val": 8}
    assert card["label_method"] is None  # rows of unknown origin
    assert card["final_metrics"]["eval_step_accuracy"] >= 0.75  # held-out rows: it learned "no" is bad
    assert [e["step"] for e in card["eval_history"]][:2] == [10, 20]
    assert card["global_step"] == STEPS and card["train_tokens"] > 0


def test_saved_folder_reproduces_the_trained_logits(trained: Path) -> None:
    """The last checkpoint is the Trainer's own copy of the final weights; the saved folder must match it."""
    tokenizer = AutoTokenizer.from_pretrained(str(trained))
    ids = encode_row(tokenizer, {"prompt": "3 plus 1", "completions": ["ok", "no"], "labels": [1, 0]}, "hard")
    saved = _logits(trained, ids["input_ids"])
    in_training = _logits(trained / "checkpoints" / f"checkpoint-{STEPS}", ids["input_ids"])
    assert torch.allclose(saved, in_training, atol=1e-6, rtol=0)
    assert not torch.allclose(saved, torch.zeros_like(saved))
    assert StepTagConvention.load(trained) == CONVENTIONS["prm-pipeline"]


def test_training_reads_the_head_at_the_scorers_tag_tokens(trained: Path, tiny_base: Path) -> None:
    row = {"prompt": "12 plus 3", "completions": ["12+3 = 15", "15-1 = 14"], "labels": [True, False]}
    encoded = encode_row(AutoTokenizer.from_pretrained(str(tiny_base)), row, "hard")
    scorer_tokenizer = AutoTokenizer.from_pretrained(str(trained))  # what a scorer loads from the PRM folder
    tag = tag_ids(scorer_tokenizer, CONVENTIONS["prm-pipeline"])
    positions = [i for i, label in enumerate(encoded["labels"]) if label != IGNORE_INDEX]
    assert len(positions) == 2
    for p in positions:
        assert encoded["input_ids"][p - len(tag) + 1: p + 1] == tag
    scored = encode_steps(scorer_tokenizer, format_prompt(scorer_tokenizer, row["prompt"]), row["completions"],
                          CONVENTIONS["prm-pipeline"])
    assert (scored.input_ids, scored.tag_positions) == (encoded["input_ids"], positions)


def test_resume_continues_the_step_count(trained: Path, trl_rows: Path, tiny_base: Path, tmp_path: Path) -> None:
    folder = shutil.copytree(trained, tmp_path / "prm")
    train_prm(trl_rows, folder, tiny(tiny_base, max_steps=STEPS + 4), resume=True)
    card = read_prm_card(folder)
    assert card["resumed_from"] == f"checkpoint-{STEPS}"
    assert card["global_step"] == STEPS + 4
    assert [step for step, _ in card["loss_history"]] == list(range(1, STEPS + 5))  # no step run twice


def test_resume_without_a_checkpoint_says_what_to_do(trl_rows: Path, tiny_base: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="holds no checkpoint; train with resume=False first"):
        train_prm(trl_rows, tmp_path / "prm", tiny(tiny_base), resume=True)


def test_trains_from_the_warehouse_training_set(labeled_wh: Warehouse, tiny_base: Path, tmp_path: Path) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc", label_kind="soft", balance="weight",
                                                               val_share=0.3, test_share=0.2))
    folder = train_prm(ts, tmp_path / "prm", tiny(tiny_base, label_kind="soft", max_steps=3))
    card = read_prm_card(folder)
    assert card["label_method"] == "mc" and card["label_kind"] == "soft"
    assert card["class_weights"] == list(ts.stats.class_weights)
    assert card["rows"] == {"train": ts.stats.solutions["train"], "val": ts.stats.solutions["val"]}
    assert card["test_rows_unused"] == ts.stats.solutions["test"]
    assert card["training_set"]["method"] == "mc"
    assert card["warehouse_versions"] == labeled_wh.versions()  # the PRM names the exact data it was trained on


def test_trains_from_a_saved_training_set_and_a_datasets_folder(labeled_wh: Warehouse, tiny_base: Path,
                                                                  tmp_path: Path) -> None:
    import datasets

    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="truth", val_share=0.3, test_share=0.2))
    saved = read_prm_card(train_prm(ts.save(tmp_path / "ts"), tmp_path / "a", tiny(tiny_base, max_steps=2)))
    assert saved["label_method"] == "truth" and saved["rows"]["train"] == ts.stats.solutions["train"]
    assert saved["warehouse_versions"] == ts.warehouse_versions  # kept through save and load

    columns = ("prompt", "completions", "labels")
    export = datasets.DatasetDict({
        name: datasets.Dataset.from_list([{k: r[k] for k in columns} for r in ts.split(split)])
        for name, split in (("train", "train"), ("validation", "val"))})
    export.save_to_disk(str(tmp_path / "hf"))
    card = read_prm_card(train_prm(tmp_path / "hf", tmp_path / "b", tiny(tiny_base, max_steps=2)))
    assert card["rows"] == saved["rows"]


def test_rows_over_the_context_are_skipped_and_counted(tiny_base: Path, tmp_path: Path) -> None:
    rows = learnable_rows(6, "train", 2)
    rows.append({"prompt": "long", "completions": ["1+1 = 2"] * 30, "labels": [True] * 30})  # > TINY_CONTEXT
    card = read_prm_card(train_prm(rows, tmp_path / "prm", tiny(tiny_base, max_steps=1)))
    assert card["skipped_context_overflow"] == {"train": 1, "val": 0}
    assert card["rows"]["train"] == 6 and card["max_length"] == TINY_CONTEXT
    with pytest.raises(ValueError, match="no train rows fit the 160-token context"):
        train_prm(rows[-1:], tmp_path / "none", tiny(tiny_base, max_steps=1))


def _state(folder: Path) -> dict[str, torch.Tensor]:
    return AutoModelForTokenClassification.from_pretrained(str(folder)).state_dict()


@pytest.mark.parametrize("adapter", [{"freeze_backbone": True}, {"lora_r": 4}], ids=["frozen", "lora"])
def test_frozen_backbone_and_lora(adapter: dict, tiny_base: Path, tmp_path: Path) -> None:
    folder = train_prm(learnable_rows(8, "train", 3), tmp_path / "prm", tiny(tiny_base, max_steps=3, **adapter))
    trained = _state(folder)
    assert not any("lora" in k for k in trained), "adapters are merged: a plain HF folder"
    base = AutoModelForTokenClassification.from_pretrained(str(tiny_base), num_labels=2).state_dict()
    q = "model.layers.0.self_attn.q_proj.weight"
    mlp = "model.layers.0.mlp.up_proj.weight"
    assert torch.equal(trained[mlp], base[mlp])  # frozen, and not a LoRA target (peft's Llama default: q, v)
    assert torch.equal(trained[q], base[q]) == ("freeze_backbone" in adapter)


@pytest.mark.parametrize("rows,config,match", [
    ([{"prompt": "q", "completions": ["a"], "labels": [True]}], {}, "all 1 step labels are good"),
    ([{"prompt": "q", "completions": ["a", "b"], "labels": [0.3, 0.9]}], {}, "use label_kind='soft'"),
    ([{"prompt": "q", "completions": [], "labels": []}], {}, "empty step list"),
])
def test_bad_rows_stop_training_with_a_clear_error(rows: list, config: dict, match: str, tiny_base: Path,
                                                   tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=match):
        train_prm(rows, tmp_path / "prm", tiny(tiny_base, **config))


def test_label_kind_must_match_the_training_set(labeled_wh: Warehouse, tiny_base: Path, tmp_path: Path) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc", label_kind="soft"))
    with pytest.raises(ValueError, match=r"holds soft labels but PRMTrainConfig\.label_kind='hard'"):
        train_prm(ts, tmp_path / "prm", tiny(tiny_base))


def test_soft_loss_is_bce_of_the_logit_margin_and_weights_scale_each_class() -> None:
    logits = torch.tensor([[[0.0, 2.0], [1.0, 0.0], [5.0, 5.0]]])
    labels = torch.tensor([[0.8, 0.2, IGNORE_INDEX]])
    margin = torch.tensor([2.0, -1.0])
    expected = torch.nn.functional.binary_cross_entropy_with_logits(margin, torch.tensor([0.8, 0.2]))
    assert prm_loss(logits, labels, "soft").item() == pytest.approx(expected.item())
    hard = torch.tensor([[1, 0, IGNORE_INDEX]])
    plain = torch.nn.functional.cross_entropy(logits[0, :2], torch.tensor([1, 0]), reduction="none")
    weighted = prm_loss(logits, hard, "hard", class_weights=(3.0, 0.5))
    assert weighted.item() == pytest.approx(((plain[0] * 0.5 + plain[1] * 3.0) / 2).item())


def test_config_refuses_contradictions() -> None:
    with pytest.raises(ValueError, match="choose one"):
        PRMTrainConfig(head="classifier", freeze_backbone=True, lora_r=4)
    with pytest.raises(ValueError, match="head='lm' fine-tunes the whole backbone"):
        PRMTrainConfig(lora_r=4)
    with pytest.raises(ValueError, match="head='value' must be one of"):
        PRMTrainConfig(head="value")
    with pytest.raises(ValueError, match="label_kind='probability' must be one of"):
        PRMTrainConfig(label_kind="probability")
