"""Per-step rewards: spans into the completion, padding, no steps, batches, and completions past the context."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from prm.format import ContextOverflowError, segment
from prm.rewards import step_rewards, step_rewards_batch
from prm.rewards.constants import NO_STEP_SCORE, PAD_TEXTS
from prm.rewards.steps import strip_padding
from prm.scoring import load_prm


@pytest.mark.parametrize("text,kept", [
    ("1+1 = 2\nAnswer: 2", "1+1 = 2\nAnswer: 2"),
    ("1+1 = 2\nAnswer: 2</s>", "1+1 = 2\nAnswer: 2"),
    ("<s>1+1 = 2<|im_end|>\n<pad><pad>\n", "1+1 = 2"),
    ("  <pad> x <pad>  ", "x"),
    ("<pad><pad>", ""),
    ("", ""),
    ("a <pad> b", "a <pad> b"),  # only the ends are padding
])
def test_strip_padding(text, kept):
    start, end = strip_padding(text)
    assert text[start:end] == kept


def _strip_one_pad_at_a_time(text: str, pads: tuple[str, ...]) -> tuple[int, int]:
    """The rule as first written (whitespace, then one pad, repeated; quadratic): the reference for the regex."""
    pads = tuple(sorted(pads, key=len, reverse=True))
    end = len(text)
    while True:
        stripped = text[:end].rstrip()
        stripped = next((stripped[: -len(p)] for p in pads if stripped.endswith(p)), stripped)
        if len(stripped) == end:
            break
        end = len(stripped)
    start = 0
    while start < end:
        stripped = text[start:end].lstrip()
        stripped = next((stripped[len(p):] for p in pads if stripped.startswith(p)), stripped)
        if end - len(stripped) == start:
            break
        start = end - len(stripped)
    return start, end


def test_strip_padding_matches_the_one_pad_at_a_time_rule():
    rng = random.Random(0)
    pieces = ["<pad>", "</s>", "<s>", "<|im_end|>", " ", "\n", "\u00a0", "a", "s>", "<", "/", "pad>"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        assert strip_padding(text) == _strip_one_pad_at_a_time(text, PAD_TEXTS), repr(text)


@pytest.mark.parametrize("text,kept", [("1+1 = 2" + "<pad>" * 200_000, "1+1 = 2"),
                                       ("\n<pad>" * 100_000 + "1+1 = 2</s>", "1+1 = 2")])
def test_strip_padding_is_linear_in_a_megabyte_of_padding(text, kept):
    started = time.process_time()
    start, end = strip_padding(text)
    spent = time.process_time() - started
    assert text[start:end] == kept
    assert spent < 1.0, f"{spent:.2f} s of CPU to strip {len(text)} characters"  # one pad at a time: ~5 s


def test_spans_index_the_completion_as_passed(keyword_scorer):
    completion = "<pad>3+4 = 7\n7*2 = 14 bad\nAnswer: 14</s><pad>"
    r = step_rewards(keyword_scorer, "3+4 then double", completion)
    assert r.steps == ["3+4 = 7", "7*2 = 14 bad"]
    assert [completion[s:e] for s, e in r.spans] == r.steps
    assert r.scores == [0.9, 0.1]
    assert keyword_scorer.seen == [("3+4 then double", ["3+4 = 7", "7*2 = 14 bad"])]


def test_segmentation_is_the_shared_one(keyword_scorer):
    completion = "First we add.\n\nThen\nwe double.\n\n#### 14"
    r = step_rewards(keyword_scorer, "q", completion)
    assert r.steps == list(segment(completion).steps)
    assert r.spans == list(segment(completion).spans)


@pytest.mark.parametrize("completion", ["", "   \n ", "<pad><pad>", "Answer: 14", "</s>"])
def test_no_steps_gives_empty_lists(keyword_scorer, completion):
    r = step_rewards(keyword_scorer, "q", completion)
    assert (r.scores, r.spans, r.steps, r.unread) == ([], [], [], 0)


def test_batch_matches_one_at_a_time(keyword_scorer):
    items = [("q1", "1+1 = 2\nbad 2+2 = 5"), ("q2", ""), ("q3", "x = 1\nAnswer: 1")]
    assert step_rewards_batch(keyword_scorer, items) == [step_rewards(keyword_scorer, p, c) for p, c in items]


def test_real_prm_scores_match_the_scorer(tiny_prm: Path):
    scorer = load_prm(tiny_prm)
    completion = "1 plus 1\nok\nno\nAnswer: 2"
    r = step_rewards(scorer, "1 plus 1", completion)
    assert r.scores == pytest.approx(scorer.score_steps("1 plus 1", ["1 plus 1", "ok", "no"]))
    assert all(0.0 < s < 1.0 for s in r.scores)


def test_completion_past_the_context_scores_the_prefix_that_fits(tiny_prm: Path):
    """A completion too long for the PRM: the steps it can read are scored, the rest earn NO_STEP_SCORE."""
    scorer = load_prm(tiny_prm)
    steps = [f"{k}+1 = {k + 1}" for k in range(40)]  # ~9 tokens per tagged step: ~360 tokens, context 160
    completion = "\n".join(steps) + "\nAnswer: 40"
    with pytest.raises(ContextOverflowError):
        scorer.score_steps("count", steps)
    r = step_rewards(scorer, "count", completion)
    fits = len(steps) - r.unread
    assert 0 < fits < len(steps)
    assert len(r.scores) == len(r.spans) == len(steps)
    assert r.scores[:fits] == pytest.approx(scorer.score_steps("count", steps[:fits]))
    assert r.scores[fits:] == [NO_STEP_SCORE] * r.unread
    with pytest.raises(ContextOverflowError):  # the prefix is the longest that fits
        scorer.encode("count", steps[: fits + 1])
    batch = step_rewards_batch(scorer, [("count", completion), ("count", "1+1 = 2")])
    assert batch[0] == r and batch[1].unread == 0
