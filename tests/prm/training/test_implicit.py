"""The implicit-PRM baseline (PRIME): outcome-only training that moves per-step rewards, on the tiny LM."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from prm.implicit_recipe import IMPLICIT_CONFIG_FILE
from prm.scoring import load_prm
from prm.scoring.implicit_scorer import ImplicitPRMScorer, implicit_scores, implicit_step_rewards
from prm.scoring.reading import encode_solution
from prm.training.implicit import ImplicitPRMConfig, train_implicit_prm

from .conftest import solution_steps


def _rows() -> list[tuple[str, list[str], bool]]:
    rows = []
    for p in range(8):
        for s in range(2):
            steps, truth = solution_steps(p, s)
            rows.append((f"Add up problem {p}.", steps, all(truth)))
    return rows


def test_outcome_training_rewards_right_solutions_above_wrong_ones(tiny_base: Path, tmp_path: Path) -> None:
    rows = _rows()
    config = ImplicitPRMConfig(base_model=str(tiny_base), max_steps=40, batch_size=8, learning_rate=3e-3, beta=0.5)
    out = train_implicit_prm(rows, tmp_path / "implicit", config)
    model = AutoModelForCausalLM.from_pretrained(out).eval()
    ref = AutoModelForCausalLM.from_pretrained(tiny_base).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    rewards = implicit_step_rewards(model, ref, tokenizer, [(q, steps) for q, steps, _ in rows], beta=config.beta)
    totals = [sum(r) for r in rewards]
    right = [t for t, (_, _, ok) in zip(totals, rows, strict=True) if ok]
    wrong = [t for t, (_, _, ok) in zip(totals, rows, strict=True) if not ok]
    assert sum(right) / len(right) > sum(wrong) / len(wrong)  # before training both are exactly 0
    scores = implicit_scores(rewards, "prefix")
    assert all(0.0 < x < 1.0 for s in scores for x in s)


def test_every_step_owns_its_tokens(tiny_base: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    e = encode_solution(tokenizer, "Q", ["1+1 = 2", "2+2 = 4"])
    (a, b), (c, d) = e.spans
    assert a < b <= c < d == len(e.input_ids)


def test_outcome_training_needs_both_outcomes(tiny_base: Path, tmp_path: Path) -> None:
    rows = [r for r in _rows() if r[2]]
    with pytest.raises(ValueError, match="both right and wrong"):
        train_implicit_prm(rows, tmp_path / "x", ImplicitPRMConfig(base_model=str(tiny_base), max_steps=1))


def test_step_labels_train_each_steps_own_reward(tiny_base: Path, tmp_path: Path) -> None:
    rows = []
    for p in range(8):
        for s in range(2):
            steps, truth = solution_steps(p, s)
            rows.append((f"Add up problem {p}.", steps, truth))
    config = ImplicitPRMConfig(base_model=str(tiny_base), labels="step", max_steps=40, batch_size=8,
                               learning_rate=3e-3, beta=0.5)
    out = train_implicit_prm(rows, tmp_path / "step", config)
    model = AutoModelForCausalLM.from_pretrained(out).eval()
    ref = AutoModelForCausalLM.from_pretrained(tiny_base).eval()
    tokenizer = AutoTokenizer.from_pretrained(out)
    rewards = implicit_step_rewards(model, ref, tokenizer, [(q, steps) for q, steps, _ in rows], beta=config.beta)
    right = [r for rs, (_, _, truth) in zip(rewards, rows, strict=True) for r, ok in zip(rs, truth, strict=True) if ok]
    wrong = [r for rs, (_, _, truth) in zip(rewards, rows, strict=True) for r, ok in zip(rs, truth, strict=True)
             if not ok]
    assert sum(right) / len(right) > sum(wrong) / len(wrong)
    # load_prm knows the folder as an LM-head PRM: each step scored by the sigmoid of its own reward
    scorer = load_prm(out)
    assert isinstance(scorer, ImplicitPRMScorer) and scorer.how == "step"
    scores = scorer.score_batch([(q, steps) for q, steps, _ in rows[:3]] + [("empty", [])])
    assert scores[-1] == [] and [len(s) for s in scores[:3]] == [len(r) for r in rewards[:3]]
    assert [x for s in scores[:3] for x in s] == pytest.approx(
        [1 / (1 + math.exp(-r)) for rs in rewards[:3] for r in rs], abs=1e-5)
    assert scorer.score_steps(rows[0][0], rows[0][1]) == pytest.approx(scores[0], abs=1e-5)
    with pytest.raises(ValueError, match="use the transformers engine"):
        load_prm(out, engine="vllm")
    (out / IMPLICIT_CONFIG_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not a readable implicit-PRM config"):
        load_prm(out)


def test_labels_must_be_outcome_or_step() -> None:
    with pytest.raises(ValueError, match="labels='token'"):
        ImplicitPRMConfig(labels="token")


@pytest.mark.parametrize("labels", ["outcome", "step"])
def test_micro_batches_give_the_whole_batchs_gradient(tiny_base: Path, labels: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch split to bound the logits held at once (a big vocabulary) trains as one pass over it."""
    import torch

    from prm.training import implicit

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    model = AutoModelForCausalLM.from_pretrained(tiny_base, dtype=torch.float32)
    ref = AutoModelForCausalLM.from_pretrained(tiny_base, dtype=torch.float32).eval()
    batch = []
    for p in range(3):
        for s in range(2):
            steps, truth = solution_steps(p, s)
            batch.append((encode_solution(tokenizer, f"Add up problem {p}.", steps),
                          all(truth) if labels == "outcome" else [None, *truth[1:]]))
    config = ImplicitPRMConfig(base_model=str(tiny_base), labels=labels, beta=0.5)
    grads, losses = [], []
    for budget in (10**12, 1):  # one pass; one solution per pass
        monkeypatch.setattr(implicit, "LOGITS_PER_PASS", budget)
        model.zero_grad()
        losses.append(implicit._accumulate(model, ref, batch, config, vocab=int(model.config.vocab_size)).item())
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-7)
