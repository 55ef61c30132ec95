"""RLRunConfig.error_threshold: the first_error (VPPO) and flawed_penalty (FAPO) arms read it, the other arms do not,
and a run's key holds it only where it differs from the default, so results run at the default keep their key."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from prm.rewards import reward_for
from prm.rl.config import PROCESS_ARMS, RLRunConfig
from prm.rl.grpo import load_result, run_key
from prm.rl.process_grpo import process_advantage_matrix

# The key of a default run (RLRunConfig(eval_every=20), benchmarks/rl.py's default) without the model versions,
# as the committed runs under benchmarks/results/rl_verified_arms hold it and as run_key gave it before the field.
DEFAULT_CONFIG_KEY = {
    "steps": 100, "train_ops": [9, 10], "anchor_ops": [6, 7, 8], "anchor_share": 0.5, "operators": "+-",
    "max_value": 9, "style": "word", "num_generations": 8, "batch_size": 32, "learning_rate": 0.0001, "beta": 0.0,
    "max_completion_length": 200, "temperature": 1.0, "seed": 0, "torch_threads": 1, "generation": "auto",
    "eval_ops": [6, 7, 8, 9, 10], "eval_problems": 24, "eval_samples": 4, "eval_temperature": 1.0, "eval_every": 20,
    "logging_steps": 1, "save_policy": True}
DEFAULT_ARM_KEYS = {
    "first_error": {"config": DEFAULT_CONFIG_KEY, "process": {"outcome_weight": 0.5, "credit": "first_error"}},
    "flawed_penalty": {"config": DEFAULT_CONFIG_KEY, "flawed_penalty": 0.5},
    "progrs": {"config": DEFAULT_CONFIG_KEY, "process": {"outcome_weight": 0.5, "credit": "progrs"}},
    "outcome": {"config": DEFAULT_CONFIG_KEY},
}


@pytest.fixture
def models(tmp_path: Path) -> tuple[Path, Path]:
    for folder in ("policy", "prm"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.json").write_text("{}")
    return tmp_path / "policy", tmp_path / "prm"


def _key(models: tuple[Path, Path], arm: str, **fields: float) -> dict:
    key = json.loads(json.dumps(run_key(*models, RLRunConfig(eval_every=20, **fields), arm)))
    return {k: v for k, v in key.items() if k not in ("policy", "prm")}


def test_first_error_advantages_move_with_the_threshold() -> None:
    # two completions of two steps (tokens 0-1 step 0, 2-3 step 1, token 4 the answer line)
    scores, ends = [[0.9, 0.05], [0.3, 0.7]], [[1, 3], [1, 3]]

    def matrix(threshold: float) -> list[float]:
        process = RLRunConfig(error_threshold=threshold).process_config("first_error")
        assert process.threshold == threshold and process.credit == "first_error"
        return process_advantage_matrix(scores, ends, [5, 5], 2, 5, process).flatten().tolist()

    # 0.5: the first errs at step 1 and the second at step 0 -> one verified step of four, normalised over the group
    hi, lo = math.sqrt(3), -1 / math.sqrt(3)
    assert matrix(0.5) == pytest.approx([hi, hi, lo, lo, 0.0] + [lo] * 4 + [0.0])
    # 0.1: only the 0.05 step is an error -> three verified steps of four; the second completion is verified whole
    hi, lo = 1 / math.sqrt(3), -math.sqrt(3)
    assert matrix(0.1) == pytest.approx([hi, hi, lo, lo, 0.0] + [hi] * 4 + [0.0])
    # the default threshold is the arm's registered config, and the other process arms ignore the field
    assert RLRunConfig().process_config("first_error") == PROCESS_ARMS["first_error"]
    for arm in ("process", "progrs", "process_pure"):
        assert RLRunConfig(error_threshold=0.1).process_config(arm) is PROCESS_ARMS[arm]


@pytest.mark.parametrize(("scores", "outcome", "at_default", "at_low"), [
    ([0.9, 0.3], 1.0, 0.5, 1.0),  # a low-but-not-lowest step: flawed at 0.5, clean at 0.1
    ([0.9, 0.05], 1.0, 0.5, 0.5),  # below both thresholds: flawed at either
    ([0.9, 0.8], 1.0, 1.0, 1.0),  # clean at either
    ([0.9, 0.05], 0.0, 0.0, 0.0),  # a wrong answer earns 0 whatever its steps
])
def test_flawed_penalty_reward_reads_the_threshold(scores: list[float], outcome: float, at_default: float,
                                                   at_low: float) -> None:
    for threshold, expected in ((0.5, at_default), (0.1, at_low)):
        config = RLRunConfig(error_threshold=threshold).reward_config("flawed_penalty")
        assert config.prof_low == threshold
        assert reward_for(config, scores, outcome).reward == pytest.approx(expected)
    assert RLRunConfig(error_threshold=0.1).reward_config("prm_min") is RLRunConfig().reward_config("prm_min")


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan")])
def test_error_threshold_is_a_probability(threshold: float) -> None:
    with pytest.raises(ValueError, match="error_threshold"):
        RLRunConfig(error_threshold=threshold)


def test_the_default_key_is_unchanged_and_another_threshold_gets_its_own(models: tuple[Path, Path]) -> None:
    for arm, expected in DEFAULT_ARM_KEYS.items():
        assert _key(models, arm) == expected, arm
        assert _key(models, arm, error_threshold=0.5) == expected, arm  # the default given explicitly
    assert _key(models, "first_error", error_threshold=0.1)["process"]["threshold"] == 0.1
    low = _key(models, "flawed_penalty", error_threshold=0.1)
    assert low["error_threshold"] == 0.1 and low["config"] == DEFAULT_CONFIG_KEY
    for arm in ("outcome", "progrs", "prm_min"):  # arms that never read the threshold keep their results
        assert _key(models, arm, error_threshold=0.1) == _key(models, arm), arm


def test_a_result_run_at_the_default_is_not_reused_at_another_threshold(models: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    committed = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "rl_verified_arms" / "seed0"
    for arm in ("first_error", "flawed_penalty"):  # the committed runs were keyed as the default is now
        key = json.loads((committed / arm / "result.json").read_text())["key"]
        assert {k: v for k, v in key.items() if k not in ("policy", "prm")} == DEFAULT_ARM_KEYS[arm], arm
    record = json.loads((committed / "first_error" / "result.json").read_text())
    record["key"] = run_key(*models, RLRunConfig(eval_every=20), "first_error")
    (out / "result.json").write_text(json.dumps(record))
    assert load_result(out, run_key(*models, RLRunConfig(eval_every=20), "first_error")) is not None
    assert load_result(out, run_key(*models, RLRunConfig(eval_every=20, error_threshold=0.1), "first_error")) is None


def test_arm_trainer_hands_the_run_s_threshold_to_the_first_error_trainer(tiny_lm: Path, tiny_prm: Path) -> None:
    from transformers import AutoTokenizer

    from prm.rl.grpo import arm_trainer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm))
    process = RLRunConfig(error_threshold=0.1).process_config("first_error")
    assert arm_trainer("first_error", tiny_prm, tokenizer, process=process)[2]["process"].threshold == 0.1
    assert arm_trainer("first_error", tiny_prm, tokenizer)[2]["process"] is PROCESS_ARMS["first_error"]
