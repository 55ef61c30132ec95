"""RLRunConfig validation and the problems of a run."""

from __future__ import annotations

import pytest

from prm.rl import ARMS, RLRunConfig
from prm.rl.data import eval_problems, train_problems


@pytest.mark.parametrize("overrides,message", [
    ({"arms": ()}, r"arms \(\) are unknown"),
    ({"arms": ("outcome", "outcome")}, "repeats an arm"),
    ({"arms": ("prm_mean",)}, r"arms \('prm_mean',\) are unknown"),
    ({"steps": 0}, r"steps=0 must be in \[1, "),
    ({"num_generations": 1, "batch_size": 4}, "a group of one has none"),
    ({"batch_size": 12, "num_generations": 8}, "must be a multiple of num_generations=8"),
    ({"train_ops": (40,)}, r"train_ops=\(40,\) must hold operation counts in 1..32"),
    ({"eval_ops": ()}, "need at least one difficulty"),
    ({"anchor_share": 1.0}, r"anchor_share=1.0 must be in \[0, 1\)"),
    ({"anchor_share": 0.3, "anchor_ops": ()}, "needs anchor_ops"),
    ({"operators": "/"}, "operators='/' must be a non-empty subset"),
    ({"style": "essay"}, "style='essay' must be one of"),
    ({"temperature": 0}, "GRPO needs varied samples"),
    ({"beta": -0.1}, r"beta=-0.1 must be in \[0, 10\] \(a KL coefficient"),
    ({"generation": "sglang"}, "generation='sglang' must be one of"),
])
def test_bad_configs_say_what_to_set(overrides, message):
    with pytest.raises(ValueError, match=message):
        RLRunConfig(**overrides)


def test_lists_from_json_are_one_config_with_tuples():
    config = RLRunConfig(**{**RLRunConfig().to_dict(), "arms": ["outcome"], "learning_rate": 1})
    assert config.arms == ("outcome",) and config.learning_rate == 1.0
    assert RLRunConfig(**config.to_dict()) == config  # the JSON form round-trips


def test_the_arms_differ_only_in_the_reward():
    assert RLRunConfig().arms == ("outcome", "prm_min", "prm_sum")
    assert ARMS["outcome"].outcome_weight == 1.0
    assert (ARMS["prm_min"].shaping, ARMS["prm_sum"].shaping) == ("min", "sum")
    assert ARMS["prm_min"].outcome_weight == ARMS["prm_sum"].outcome_weight == 0.5


def test_training_problems_avoid_the_held_out_ones_and_follow_the_mix():
    config = RLRunConfig(steps=30, batch_size=8, num_generations=4, train_ops=(2,), anchor_ops=(1,), anchor_share=0.25,
                         eval_ops=(1, 2), eval_problems=20, max_value=3)
    held = eval_problems(config)
    train = train_problems(config, exclude={p.problem_id for p in held})
    assert len(train) == 30 * 2  # one problem per prompt slot, each seen once
    assert sum(p.n_ops == 1 for p in train) == 15  # anchor_share of the slots
    assert not {p.problem_id for p in train} & {p.problem_id for p in held}
    assert [p.n_ops for p in held] == [1] * 20 + [2] * 20


def test_a_tiny_space_that_cannot_avoid_the_held_out_set_fails_with_advice():
    config = RLRunConfig(steps=50, batch_size=8, num_generations=4, train_ops=(1,), anchor_share=0.0, eval_ops=(1,),
                         eval_problems=64, max_value=1, operators="+")
    with pytest.raises(ValueError, match="avoid the held-out set; raise max_value"):
        train_problems(config, exclude={p.problem_id for p in eval_problems(config)})
