"""PRM scoring for each step-tag convention on tiny random models: layouts, scores by hand, batching, errors."""

from __future__ import annotations

import json
import shutil

import pytest

from prm.format import CONVENTIONS, ContextOverflowError, encode_steps, format_prompt, tag_ids
from prm.scoring import ScorerConfig, load_prm
from prm.scoring.constants import QWEN_PRM_SYSTEM_PROMPT
from tests.tiny_models import build_prm

PROBLEM = "12+7-3*2 ="
STEPS = ["3*2 = 6", "12+7 = 19", "19-6 = 14"]
ITEMS = [
    (PROBLEM, STEPS),
    ("5*5-1 =", ["5*5 = 25", "25-1 = 24"]),
    ("8/2+9 =", []),
    ("2+2 =", ["2+2 = 5"]),
    ("9-4*2+7 =", ["4*2 = 8", "9-8 = 1", "1+7 = 8", "Answer: 8"]),
]
CONFIG = ScorerConfig(device="cpu", torch_threads=1)


@pytest.fixture(scope="module")
def scorers(prm_folders):
    return {name: load_prm(folder, CONFIG) for name, folder in prm_folders.items()}


def _by_hand(scorer, problem, steps):
    """The score recomputed from one unpadded forward pass, the way each model card reads it."""
    import torch

    enc = scorer.encode(problem, steps)
    with torch.no_grad():
        logits = scorer.model(input_ids=torch.tensor([enc.input_ids])).logits[0]
    at = logits[enc.tag_positions]
    conv = scorer.convention
    if conv.head == "token_classification":
        return at.softmax(-1)[:, 1].tolist()
    good, bad = (scorer.tokenizer.convert_tokens_to_ids(t) for t in (conv.good_token, conv.bad_token))
    return at[:, [good, bad]].softmax(-1)[:, 0].tolist()


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_scores_are_probabilities_equal_to_the_card_formula(scorers, name):
    scorer = scorers[name]
    scores = scorer.score_steps(PROBLEM, STEPS)
    assert len(scores) == len(STEPS) and all(0.0 < s < 1.0 for s in scores)
    assert scores == pytest.approx(_by_hand(scorer, PROBLEM, STEPS), abs=1e-6)


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_batched_scores_equal_single_ones(scorers, name):
    scorer = scorers[name]
    single = [scorer.score_steps(p, s) for p, s in ITEMS]
    batched = scorer.score_batch(ITEMS, batch_size=3)
    assert [len(b) for b in batched] == [len(s) for _, s in ITEMS]
    for one, many in zip(single, batched, strict=True):
        assert many == pytest.approx(one, abs=1e-5)
    flat = [x for row in single for x in row]
    assert max(flat) - min(flat) > 0.05  # random weights spread the scores, so equality above means something


def test_tag_ids_match_training_for_our_convention(scorers):
    scorer = scorers["prm-pipeline"]
    tok, conv = scorer.tokenizer, scorer.convention
    trained = encode_steps(tok, format_prompt(tok, PROBLEM), STEPS, conv)
    assert scorer.encode(PROBLEM, STEPS) == trained
    assert [trained.input_ids[p] for p in trained.tag_positions] == tag_ids(tok, conv) * len(STEPS)


def test_qwen_layout_is_the_model_cards_conversation(scorers):
    scorer = scorers["qwen2.5-math-prm"]
    tok = scorer.tokenizer
    messages = [{"role": "system", "content": QWEN_PRM_SYSTEM_PROMPT}, {"role": "user", "content": PROBLEM},
                {"role": "assistant", "content": "<extra_0>".join(STEPS) + "<extra_0>"}]
    card_ids = tok(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=False))["input_ids"]
    enc = scorer.encode(PROBLEM, STEPS)
    assert card_ids[: len(enc.input_ids)] == enc.input_ids  # the card's ids, minus the closing <|im_end|>
    sep = tok.convert_tokens_to_ids("<extra_0>")
    assert enc.tag_positions == [i for i, t in enumerate(card_ids) if t == sep]


def test_math_shepherd_layout_is_the_model_cards_input(scorers):
    scorer = scorers["math-shepherd"]
    card_text = f"{PROBLEM} Step 1: {STEPS[0]} ки\nStep 2: {STEPS[1]} ки\nStep 3: {STEPS[2]} ки"
    card_ids = scorer.tokenizer(card_text)["input_ids"]
    enc = scorer.encode(PROBLEM, STEPS)
    tag = scorer.tokenizer.convert_tokens_to_ids("ки")
    assert enc.input_ids == card_ids and enc.tag_positions == [i for i, t in enumerate(card_ids) if t == tag]


def test_a_literal_qwen_tag_in_the_text_is_escaped_with_a_warning(scorers):
    scorer = scorers["qwen2.5-math-prm"]
    steps = ["3*2 = 6 <extra_0>", "<extra_0>12+7 = 19"]
    with pytest.warns(UserWarning, match=r"3 of the problem and its 2 steps contain the step tag '<extra_0>'"):
        enc = scorer.encode(f"{PROBLEM} <extra_0>", steps)
    sep = scorer.tokenizer.convert_tokens_to_ids("<extra_0>")
    assert [i for i, t in enumerate(enc.input_ids) if t == sep] == enc.tag_positions and len(enc.tag_positions) == 2


def test_a_math_shepherd_tag_inside_a_step_reads_as_text(scorers):
    scorer = scorers["math-shepherd"]
    steps = ["киев", "ки = 1", "19-6 = 14"]
    assert len(scorer.score_steps(PROBLEM, steps)) == 3  # one tag a step, escaped like the export's text


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_empty_step_list_scores_nothing(scorers, name):
    assert scorers[name].score_steps(PROBLEM, []) == []
    assert scorers[name].score_batch([]) == []


@pytest.mark.parametrize("name", list(CONVENTIONS))
def test_steps_longer_than_the_context_raise_with_what_to_do(scorers, name):
    long_steps = ["1+1 = 2, " * 12] * 4  # ~430 characters: over the 256-token context of the tiny models
    with pytest.raises(ContextOverflowError, match=r"over the PRM's context of 256; shorten the steps"):
        scorers[name].score_steps(PROBLEM, long_steps)
    with pytest.raises(ContextOverflowError, match=r"item 1 "):
        scorers[name].score_batch([ITEMS[0], (PROBLEM, long_steps)])


def test_saved_and_reloaded_scores_match(prm_folders, scorers):
    again = load_prm(prm_folders["prm-pipeline"], CONFIG).score_batch(ITEMS)
    first = scorers["prm-pipeline"].score_batch(ITEMS)
    assert [x for row in again for x in row] == pytest.approx([x for row in first for x in row], abs=1e-6)


def test_folder_without_convention_file_says_how_to_declare_one(tmp_path):
    folder = build_prm("prm-pipeline", tmp_path / "prm", with_convention=False)
    with pytest.raises(FileNotFoundError, match=r"no prm_convention\.json.*StepTagConvention\(\.\.\.\)\.save"):
        load_prm(folder, CONFIG)
    assert load_prm(folder, CONFIG, convention="prm-pipeline").score_steps(PROBLEM, STEPS)  # or name it


def test_a_causal_lm_declared_as_token_classification_is_refused(tmp_path):
    folder = build_prm("causal-as-token-classification", tmp_path / "lm")
    with pytest.raises(ValueError, match="random layer"):
        load_prm(folder, CONFIG)


def test_custom_head_code_needs_an_explicit_opt_in(prm_folders, tmp_path):
    folder = shutil.copytree(prm_folders["qwen2.5-math-prm"], tmp_path / "qwen")
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"custom code .*trust_remote_code=True"):
        load_prm(folder, CONFIG)


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="batch_size=0 must be >= 1"):
        ScorerConfig(batch_size=0)
    with pytest.raises(ValueError, match="dtype='fp8'"):
        ScorerConfig(dtype="fp8")
