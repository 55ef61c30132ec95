"""Bad input on the way to the process arm's per-token advantages, with the real tiny PRM: a completion past the
PRM's context, one with no step, and one the PRM did not score all get defined, finite advantages."""

from __future__ import annotations

import math
from pathlib import Path

from prm.policy import build_char_tokenizer
from prm.rewards import RewardConfig
from prm.rewards.constants import NO_STEP_SCORE
from prm.rewards.rewarder import load_rewarder
from prm.rl.process_grpo import completion_step_scores, process_advantage_matrix

TOK = build_char_tokenizer()


def test_steps_past_the_context_no_steps_and_missing_scores_give_finite_advantages(tiny_prm: Path):
    long = "\n".join(f"{k}+1 = {k + 1}" for k in range(40)) + "\nAnswer: 40"  # ~360 PRM tokens, context 160
    texts = [long, "", "1+1 = 2\nAnswer: 2"]
    scored = load_rewarder(tiny_prm, RewardConfig(outcome_weight=1.0)).score(["q"] * 3, texts, ["40", "2", "2"])
    assert scored[0].steps.unread > 0
    assert scored[0].steps.scores[-scored[0].steps.unread:] == [NO_STEP_SCORE] * scored[0].steps.unread
    unscored = type(scored[2].steps)([], scored[2].steps.spans, scored[2].steps.steps)  # a server limit's result
    items = [*scored[:2], type(scored[2])(scored[2].shaped, unscored)]
    ids = [[*TOK(t, add_special_tokens=False).input_ids, TOK.eos_token_id] for t in texts]
    rows = [completion_step_scores(TOK, i, t, s) for i, t, s in zip(ids, texts, items, strict=True)]
    assert [len(s) for s, _ in rows] == [40, 0, 1] and math.isnan(rows[2][0][0])
    width = max(map(len, ids))
    adv = process_advantage_matrix([s for s, _ in rows], [e for _, e in rows], [len(i) for i in ids], 3, width)
    assert adv.shape == (3, width) and bool(adv.isfinite().all())
    assert adv[1].abs().sum() == 0 and adv[2].abs().sum() == 0  # no step, and an unscored step: nothing moves
    assert adv[0].abs().sum() > 0  # the readable steps and the unread ones (score 0) differ
