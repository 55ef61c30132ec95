"""The incremental scorer against full rescoring: random trees of steps on tiny random Llamas (fp32) as LM-head
PRMs, with and without a ref floor and an off-policy rule, under a byte cap that forces eviction, with no cache at
all, and with a tokenizer that merges tokens across a step boundary; and the tiny classification-head PRM of each
step-tag convention."""

from __future__ import annotations

import random

import pytest
import torch

from prm.scoring import IncrementalScorer
from prm.scoring.implicit_scorer import ImplicitPRMScorer
from tests.tiny_models import char_tokenizer

TOL = 1e-5
PIECES = ["1+2 = 3", "3*4 = 12", "12-5 = 7", "7/7 = 1", "9+9 = 18", "hello", "Answer: 7", "x", "44*2 = 88"]


def _llama(tok, seed: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         initializer_range=0.3, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


def _full(tok, how: str, floor: float | None, limit: float | None) -> ImplicitPRMScorer:
    return ImplicitPRMScorer(_llama(tok, 0), _llama(tok, 1), tok, beta=0.5, how=how, ref_floor=floor,
                             ood_ref_logprob=limit)


@pytest.fixture(scope="module")
def tok():
    return char_tokenizer(bos=True)


def _random_tree_rounds(rng: random.Random, questions: list[str], depth: int, width: int, m: int):
    """Per round, the candidates (question, steps) of a beam search over random steps, and the beams it keeps."""
    live = [(q, ()) for q in questions for _ in range(width)]
    for _ in range(depth):
        kids = [(q, (*steps, rng.choice(PIECES) + str(rng.randint(0, 99)))) for q, steps in live for _ in range(m)]
        kept = rng.sample(kids, k=min(len(kids), width * len(questions)))
        yield kids, kept
        live = kept


def _assert_equal(full: ImplicitPRMScorer, inc: IncrementalScorer, items) -> None:
    want, got = full.assess_batch(items), inc.assess_batch(items)
    assert len(want) == len(got)
    for w_row, g_row in zip(want, got, strict=True):
        assert [a.off_policy for a in w_row] == [a.off_policy for a in g_row]
        assert max((abs(a.score - b.score) for a, b in zip(w_row, g_row, strict=True)), default=0.0) < TOL


@pytest.mark.parametrize(("how", "floor", "limit"), [("step", 0.05, -6.3), ("prefix", None, None)])
def test_random_trees_score_as_full_rescoring_and_run_fewer_tokens(tok, how, floor, limit) -> None:
    full = _full(tok, how, floor, limit)
    inc = IncrementalScorer(full)
    rng = random.Random(0)
    flags = set()
    for kids, kept in _random_tree_rounds(rng, ["12+7-3*2 =", "5*5-1 ="], depth=5, width=3, m=2):
        _assert_equal(full, inc, kids)
        flags |= {a.off_policy for row in full.assess_batch(kids) for a in row}
        inc.keep(kept)
    stats = inc.stats()
    assert stats["from_scratch"] == 0 and stats["mismatches"] == 0
    assert stats["full_tokens"] > 3 * stats["tokens"]  # five rounds deep: the prefixes dominate full rescoring
    if limit is not None:
        assert flags == {True, False}  # the rule flagged some steps and passed others: the flags were compared
    assert stats["nodes"] == 2 + 6  # keep() left only the last kept beams and the two prompts


def test_a_cache_hit_and_a_duplicate_cost_nothing(tok) -> None:
    full = _full(tok, "step", 0.05, -6.3)
    inc = IncrementalScorer(full)
    items = [("2+2 =", ["2+2 = 4"]), ("2+2 =", ["2+2 = 4"])]
    _assert_equal(full, inc, items)
    # the prompt, then the step from the prompt's last token (read again: its logits predict the step's first)
    assert inc.last_tokens == [len(full.encode(*items[0]).input_ids) + 1, 0]
    inc.assess_batch(items)
    assert inc.last_tokens == [0, 0] and inc.stats()["cache_hits"] == 2


def test_a_small_cap_evicts_and_falls_back_to_full_rescoring(tok) -> None:
    full = _full(tok, "step", 0.05, None)
    roomy = IncrementalScorer(full)
    rounds = list(_random_tree_rounds(random.Random(1), ["9-4*2+7 ="], depth=4, width=3, m=3))
    for kids, kept in rounds:
        roomy.assess_batch(kids)
        roomy.keep(kept)
    cap = roomy.stats()["peak_bytes"] // 3
    tight, none = IncrementalScorer(full, cap_bytes=cap), IncrementalScorer(full, cap_bytes=0)
    for kids, _ in rounds:
        _assert_equal(full, tight, kids)
        _assert_equal(full, none, kids)
    assert tight.stats()["peak_bytes"] <= cap and tight.stats()["evicted"] > 0
    # children of evicted parents were rescored from a shallower ancestor: more tokens, still fewer than full
    assert roomy.stats()["tokens"] < tight.stats()["tokens"] < tight.stats()["full_tokens"]
    assert none.stats()["tokens"] == none.stats()["full_tokens"] and none.stats()["nodes"] == 0


def test_a_token_across_a_step_boundary_is_detected_and_rescored(tok) -> None:
    merging = char_tokenizer(bos=True, added=["3\n4"])  # "...= 3" then a step "4..." tokenizes as one piece
    full = _full(merging, "prefix", 0.05, -6.3)
    inc = IncrementalScorer(full)
    _assert_equal(full, inc, [("q", ["1+2 = 3"])])
    _assert_equal(full, inc, [("q", ["1+2 = 3", "4*1 = 4"]), ("q", ["1+2 = 3", "5*1 = 5"])])
    stats = inc.stats()
    # the "4..." child's parent did not tokenize as its prefix: it was scored from the prompt instead
    assert stats["mismatches"] == 1 and stats["from_scratch"] == 0


def test_a_sliding_window_model_is_refused_with_what_to_do(tok) -> None:
    full = _full(tok, "step", None, None)
    full.model.config.sliding_window, full.model.config.use_sliding_window = 16, True
    with pytest.raises(ValueError, match=r"sliding window.*full scorer"):
        IncrementalScorer(full)


def test_an_item_past_the_context_raises_as_the_full_scorer_does(tok) -> None:
    from prm.format import ContextOverflowError

    full = _full(tok, "step", None, None)
    inc = IncrementalScorer(full)
    items = [("q", ["1+1 = 2"]), ("q", ["9" * 300])]
    for scorer in (full, inc):
        with pytest.raises(ContextOverflowError, match=r"item 1 .*context"):
            scorer.assess_batch(items)
    assert inc.stats()["tokens"] == 0  # refused before any forward pass


@pytest.mark.parametrize("name", ["prm-pipeline", "qwen2.5-math-prm", "math-shepherd"])
def test_classification_heads_score_as_full_rescoring(prm_folders, name) -> None:
    """Each convention's head (token classification, Qwen's chat layout, Math-Shepherd's two tokens read from a
    text tokenized whole) read at each new tag from the parent's cache."""
    from prm.scoring import ScorerConfig, load_prm

    full = load_prm(prm_folders[name], ScorerConfig(device="cpu", torch_threads=1))
    inc = IncrementalScorer(full)
    for kids, kept in _random_tree_rounds(random.Random(2), ["12+7-3*2 =", "5*5-1 ="], depth=4, width=2, m=2):
        want, got = full.score_batch(kids), inc.score_batch(kids)
        assert max(abs(a - b) for w, g in zip(want, got, strict=True) for a, b in zip(w, g, strict=True)) < TOL
        assert [len(g) for g in got] == [len(steps) for _, steps in kids]
        inc.keep(kept)
    stats = inc.stats()
    assert stats["mismatches"] == 0 and stats["full_tokens"] > 2 * stats["tokens"]
    assert {a.off_policy for row in inc.assess_batch(kids) for a in row} == {None}  # a head has no OOD rule


def test_a_cap_smaller_than_one_node_runs_each_prompt_once_a_call_not_more_than_no_cache(tok) -> None:
    """Issue 53: a prompt node the cap could not keep was scored, dropped, and every item then ran from scratch,
    prompt included: more PRM tokens than no cache at all. Now the prompt serves its call's items."""
    from prm.format import format_prompt

    full = _full(tok, "step", 0.05, None)
    questions = ["9-4*2+7 =", "5*5-1 ="]
    rounds = list(_random_tree_rounds(random.Random(1), questions, depth=3, width=3, m=3))
    tiny, none = IncrementalScorer(full, cap_bytes=1), IncrementalScorer(full, cap_bytes=0)
    for kids, _ in rounds:
        _assert_equal(full, tiny, kids)
        none.assess_batch(kids)
    prompt = {q: len(tok(format_prompt(tok, q))["input_ids"]) for q in questions}
    # per call and question: the prompt once, then each item from the prompt's last token (read again)
    want = sum(prompt[q] + sum(len(full.encode(q, steps).input_ids) - prompt[q] + 1 for qq, steps in set(kids)
                                if qq == q)
               for kids, _ in rounds for q in questions)
    stats = tiny.stats()
    assert stats["tokens"] == want and stats["from_scratch"] == 0 and stats["nodes"] == 0
    assert none.stats()["tokens"] == none.stats()["full_tokens"] == stats["full_tokens"]
    assert stats["tokens"] < stats["full_tokens"]
