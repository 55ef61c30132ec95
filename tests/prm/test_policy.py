"""The warm-start policy: tokenizer, demonstrations, a tiny real training run, caching and evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from prm.format import format_prompt
from prm.models import resolve_model
from prm.policy import (
    EvalTable,
    PolicyTrainConfig,
    build_char_tokenizer,
    build_policy,
    card_problems,
    evaluate_policy,
    read_card,
    verify_weights,
)
from prm.policy.card import weight_digests
from prm.policy.data import IGNORE_INDEX, PadCollator, encode_example, training_problems
from prm.policy.evaluate import sample_solutions, score_samples
from prm.policy.train import CARD_EVAL_SAMPLES, card_eval_problems
from prm.tasks.arithmetic import ArithmeticConfig, generate_problems

# A model small enough that a few dozen steps take seconds; the stop rule never fires in that time.
TINY = PolicyTrainConfig(
    max_steps=30,
    hidden_size=64,
    num_heads=1,
    intermediate_size=128,
    num_layers=2,
    min_ops=1,
    max_ops=2,
    n_train_problems=300,
    eval_every_steps=10_000,
    logging_steps=10,
)

# --- tokenizer ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "12+7-3*2 = 12+7-6\n12+7-6 = 19-6\n19-6 = 13\nAnswer: 13",
        "Mia starts with 12 points. She wins 7. How many points does Mia have?\n",
        "3-7 = -4",
        "  leading and trailing spaces  ",
        "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
    ],
)
def test_tokenizer_round_trip_one_token_per_character(text: str, tmp_path: Path) -> None:
    build_char_tokenizer().save_pretrained(str(tmp_path))
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))
    ids = tokenizer(text).input_ids
    assert ids[0] == tokenizer.bos_token_id
    assert len(ids) == len(text) + 1
    assert tokenizer.decode(ids, skip_special_tokens=True) == text
    assert tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(ids[1:])) == text


def test_tokenizer_specials_are_distinct_and_unknown_characters_map_to_unk() -> None:
    tokenizer = build_char_tokenizer()
    specials = {tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id}
    assert len(specials) == 4
    assert tokenizer("é", add_special_tokens=False).input_ids == [tokenizer.unk_token_id]
    assert len(tokenizer) == 100


# --- demonstrations ------------------------------------------------------------------------------------


def test_encode_example_trains_on_the_solution_and_eos_only() -> None:
    tokenizer = build_char_tokenizer()
    problem = generate_problems(1, ArithmeticConfig(n_ops=3), seed=5)[0]
    example = encode_example(problem, tokenizer)
    n_prompt = 1 + len(format_prompt(tokenizer, problem.question))
    assert example["labels"][:n_prompt] == [IGNORE_INDEX] * n_prompt
    assert example["labels"][n_prompt:] == example["input_ids"][n_prompt:]
    assert example["input_ids"][-1] == tokenizer.eos_token_id
    assert tokenizer.decode(example["input_ids"][n_prompt:-1]) == problem.gold_solution()


@pytest.mark.parametrize("ops_mix, per_bucket", [("uniform", {2: 10, 3: 10, 4: 10}),
                                                  ("proportional", {2: 6, 3: 9, 4: 12})])
def test_training_problems_mix_difficulties_and_styles(ops_mix, per_bucket) -> None:
    config = PolicyTrainConfig(min_ops=2, max_ops=4, styles=("chain", "word"), ops_mix=ops_mix)
    n = 60 if ops_mix == "uniform" else 54  # proportional: weights 2:3:4 in each style, 54 * 2/18 = 6
    problems = training_problems(config, n=n, seed=0)
    counts = {(ops, style): 0 for ops in (2, 3, 4) for style in ("chain", "word")}
    for p in problems:
        counts[(p.n_ops, p.style)] += 1
    assert len(problems) == n
    assert {ops: counts[(ops, "chain")] for ops in (2, 3, 4)} == per_bucket
    assert training_problems(config, n=n, seed=0) == problems


def test_pad_collator_masks_padding() -> None:
    batch = PadCollator(pad_token_id=0)(
        [{"input_ids": [1, 5, 6], "labels": [-100, 5, 6]}, {"input_ids": [1, 7], "labels": [-100, 7]}]
    )
    assert batch["input_ids"].tolist() == [[1, 5, 6], [1, 7, 0]]
    assert batch["labels"].tolist() == [[-100, 5, 6], [-100, 7, -100]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]


# --- config ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"min_ops": 3, "max_ops": 2}, "min_ops <= max_ops"),
        ({"styles": ("latex",)}, "styles="),
        ({"hidden_size": 100, "num_heads": 3}, "divisible"),
        ({"max_steps": 0}, "max_steps"),
        ({"torch_threads": 0}, "torch_threads"),
        ({"stop_accuracy_above": 1.5}, "rates in"),
    ],
)
def test_train_config_rejects_bad_values(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        PolicyTrainConfig(**kwargs)


# --- scoring ------------------------------------------------------------------------------------------


def test_score_samples_counts_accuracy_step_errors_and_mixed_outcomes() -> None:
    p2 = generate_problems(2, ArithmeticConfig(n_ops=2), seed=1)
    p3 = generate_problems(1, ArithmeticConfig(n_ops=3), seed=1)
    problems = [*p2, *p3]
    first_wrong = p2[0].gold_steps[0].split(" = ")[0] + " = 0"
    samples = [
        [p2[0].gold_solution(), first_wrong + f"\nAnswer: {p2[0].answer + 1}"],  # mixed
        [p2[1].gold_solution(), p2[1].gold_solution()],  # all right
        ["no steps at all", "Answer: x"],  # all wrong
    ]
    table = score_samples(problems, samples)
    two = table.row(2)
    assert (two.n_problems, two.n_samples) == (2, 4)
    assert two.answer_accuracy == 0.75
    assert two.mixed_share == 0.5
    assert two.step_error_rate == pytest.approx(1 / 7)  # 6 gold steps + 1 wrong first step
    three = table.row(3)
    assert (three.answer_accuracy, three.mixed_share, three.step_error_rate) == (0.0, 0.0, 1.0)
    assert table.row(0).n_problems == 3
    with pytest.raises(KeyError, match="n_ops=5"):
        table.row(5)
    assert table.to_markdown().count("\n") == 2 + 2


def test_score_samples_keeps_each_problems_accuracy_in_problem_order() -> None:
    """The pooled table keeps every problem's share of right samples (what a bootstrap over problems resamples);
    a card written before it was kept reads back with none."""
    p1 = generate_problems(1, ArithmeticConfig(n_ops=1), seed=3)[0]
    p2 = generate_problems(1, ArithmeticConfig(n_ops=2), seed=3)[0]
    wrong1, wrong2 = f"Answer: {p1.answer + 1}", f"Answer: {p2.answer + 1}"
    samples = [[wrong1, wrong1, wrong1, p1.gold_solution()], [p2.gold_solution()] * 3 + [wrong2]]
    table = score_samples([p2, p1], samples[::-1])  # not sorted by difficulty: the order given is kept
    assert table.problem_accuracy == (0.75, 0.25)
    assert sum(table.problem_accuracy) / 2 == table.row(0).answer_accuracy
    assert EvalTable.from_dict(table.to_dict()) == table
    old_card = {k: v for k, v in table.to_dict().items() if k != "problem_accuracy"}
    assert EvalTable.from_dict(old_card).problem_accuracy == ()


# --- a real (tiny) training run ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_policy(tmp_path_factory.mktemp("policy") / "tiny", TINY)


@pytest.mark.slow
def test_build_policy_saves_a_loadable_hf_folder(tiny_policy: Path) -> None:
    for name in ("config.json", "model.safetensors", "tokenizer.json", "generation_config.json"):
        assert (tiny_policy / name).is_file(), name
    card = read_card(tiny_policy)
    assert card["config_hash"] == TINY.config_hash()
    assert card["weights_sha256"] == weight_digests(tiny_policy)
    assert card["train_steps"] == TINY.max_steps
    assert card["stopped_by"] == "max_steps"
    assert {row["n_ops"] for row in card["eval"]["rows"]} == {0, 1, 2}
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_policy))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_policy))
    assert model.config.model_type == "llama"
    assert model.config.max_position_embeddings >= 1024
    with torch.no_grad():
        logits = model(**tokenizer(["3+4\n"], return_tensors="pt")).logits
    assert logits.shape == (1, 5, len(tokenizer))


@pytest.mark.slow
def test_card_numbers_are_regenerated_by_the_same_code(tiny_policy: Path) -> None:
    """The card's held-out table is what evaluate_policy computes again on the saved folder."""
    threads = torch.get_num_threads()
    torch.set_num_threads(TINY.torch_threads)
    try:
        again = evaluate_policy(tiny_policy, card_eval_problems(TINY), CARD_EVAL_SAMPLES, 1.0, TINY.seed)
    finally:
        torch.set_num_threads(threads)
    assert again.to_dict() == read_card(tiny_policy)["eval"]


@pytest.mark.slow
def test_rebuilding_the_same_config_gives_the_same_weights(tiny_policy: Path, tmp_path: Path) -> None:
    """Training stops on steps, not time, so a rebuild (on an idle or a busy machine) is bit-identical."""
    again = build_policy(tmp_path / "again", TINY)
    assert weight_digests(again) == weight_digests(tiny_policy)


@pytest.mark.slow
def test_build_policy_reuses_a_folder_with_the_same_config(tiny_policy: Path) -> None:
    weights = tiny_policy / "model.safetensors"
    before = weights.stat().st_mtime_ns
    assert build_policy(tiny_policy, TINY) == tiny_policy
    assert weights.stat().st_mtime_ns == before


@pytest.mark.slow
def test_build_policy_retrains_when_the_config_changes(tmp_path: Path) -> None:
    out = tmp_path / "pol"
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "policy_card.json").write_text(json.dumps({"config_hash": "stale"}))
    changed = PolicyTrainConfig(**{**TINY.to_dict(), "styles": ("chain",), "max_steps": 2, "max_ops": 1})
    build_policy(out, changed)
    assert read_card(out)["config_hash"] == changed.config_hash()
    assert (out / "model.safetensors").is_file()


@pytest.mark.slow
def test_evaluate_policy_returns_rows_per_difficulty(tiny_policy: Path) -> None:
    problems = [
        *generate_problems(3, ArithmeticConfig(n_ops=1), seed=9),
        *generate_problems(2, ArithmeticConfig(n_ops=2), seed=9),
    ]
    table = evaluate_policy(tiny_policy, problems, n_samples=2, temperature=1.0, seed=0)
    assert isinstance(table, EvalTable)
    assert [r.n_ops for r in table.rows] == [0, 1, 2]
    assert [r.n_samples for r in table.rows] == [10, 6, 4]
    for row in table.rows:
        assert 0.0 <= row.answer_accuracy <= 1.0
        assert 0.0 <= row.step_error_rate <= 1.0
        assert 0.0 <= row.mixed_share <= 1.0
    assert json.loads(json.dumps(table.to_dict()))["samples_per_problem"] == 2


@pytest.mark.slow
def test_greedy_sampling_repeats_one_decode_per_problem(tiny_policy: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_policy))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_policy))
    problems = generate_problems(2, ArithmeticConfig(n_ops=1), seed=4)
    samples = sample_solutions(model, tokenizer, problems, n_samples=3, temperature=0.0, seed=0)
    assert [len(s) for s in samples] == [3, 3]
    assert all(len(set(s)) == 1 for s in samples)
    assert tokenizer.padding_side == "right" and model.training is False


# --- the shipped checkpoint -------------------------------------------------------------------------------


def test_shipped_policy_matches_its_card_and_lies_in_the_labelers_band() -> None:
    shipped = Path(resolve_model("arith-policy"))
    verify_weights(shipped)  # raises on a digest mismatch
    card = read_card(shipped)
    assert card_problems(card) == [], card_problems(card)
    assert card["stopped_by"] in ("max_steps", "step_error_below", "accuracy_above")
    assert card["config_hash"] == PolicyTrainConfig().config_hash()  # built by the default recipe


def test_a_tampered_checkpoint_is_refused(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "policy"
    shutil.copytree(resolve_model("arith-policy"), copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="do not match the digests"):
        verify_weights(copy)


def test_a_card_outside_the_band_is_reported_with_both_numbers() -> None:
    card = {"config": {"eval_ops": 8}, "eval": {"rows": [{"n_ops": 8, "answer_accuracy": 0.09,
                                                         "step_error_rate": 0.94, "mixed_share": 0.25}]}}
    problems = card_problems(card)
    assert len(problems) == 2 and "0.09" in problems[0] and "0.94" in problems[1]
    assert card_problems(None) and card_problems({"config": {"eval_ops": 8}, "eval": {"rows": []}})
