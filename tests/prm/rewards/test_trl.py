"""The TRL adapter called the way GRPOTrainer calls reward functions, and a real GRPOTrainer run on CPU."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from prm.rewards import RewardConfig, Rewarder
from prm.rewards.adapters.trl import make_trl_reward, reward_function
from prm.scoring import load_prm

PROMPTS = ["2+2 =\n", "3+3 =\n"]
COMPLETIONS = ["2+2 = 4\nAnswer: 4", "bad 3+3 = 7\nAnswer: 7"]


class Recorder:
    """Collects what a reward function logs through TRL's ``log_metric`` / ``log_extra`` callbacks."""

    def __init__(self) -> None:
        self.metrics: dict[str, float] = {}
        self.columns: dict[str, list] = {}

    def log_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value

    def log_extra(self, column: str, values: list) -> None:
        self.columns[column] = values


def trl_kwargs(recorder: Recorder, **columns) -> dict:
    """What TRL adds to the dataset columns (trl/trainer/grpo_trainer.py, _calculate_rewards)."""
    return {"trainer_state": None, "log_metric": recorder.log_metric, "log_extra": recorder.log_extra, **columns}


def test_standard_format_as_grpo_calls_it(keyword_scorer):
    fn = reward_function(Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5)))
    recorder = Recorder()
    rewards = fn(prompts=PROMPTS, completions=COMPLETIONS, completion_ids=[[5, 6, 2], [7, 2]],
                 **trl_kwargs(recorder, answer=["4", "6"], question=["2+2", "3+3"]))
    assert rewards == pytest.approx([0.95, 0.05])  # 0.5 * 0.9 + 0.5 * 1; 0.5 * 0.1 + 0.5 * 0
    assert all(isinstance(r, float) for r in rewards)
    assert [p for p, _ in keyword_scorer.seen] == ["2+2", "3+3"]  # the question column, not the prompt
    assert fn.__name__ == "prm_min"
    assert recorder.metrics["prm_min/outcome_reward"] == pytest.approx(0.5)
    assert recorder.metrics["prm_min/process_reward"] == pytest.approx(0.5)
    assert recorder.columns["prm_min/n_steps"] == [1.0, 1.0]


def test_conversational_format_gives_the_same_rewards(keyword_scorer):
    fn = reward_function(Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5)), name="prm")
    prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": p.strip()}] for p in PROMPTS]
    completions = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    rewards = fn(prompts=prompts, completions=completions, completion_ids=None, answer=["4", "6"])
    assert rewards == pytest.approx([0.95, 0.05])
    assert [p for p, _ in keyword_scorer.seen] == ["2+2 =", "3+3 ="]  # the last user turn
    assert fn.__name__ == "prm"


def test_problem_falls_back_to_the_plain_prompt(keyword_scorer):
    fn = reward_function(Rewarder(keyword_scorer, RewardConfig(outcome_weight=0.0)), problem_key="question")
    fn(prompts=PROMPTS, completions=COMPLETIONS)
    assert [p for p, _ in keyword_scorer.seen] == ["2+2 =", "3+3 ="]  # format_prompt's "\n" taken off


def test_missing_gold_column_names_the_columns(keyword_scorer):
    fn = reward_function(Rewarder(keyword_scorer, RewardConfig(outcome_weight=0.5)))
    with pytest.raises(ValueError, match=r"dataset column 'answer'.*\['solution'\].*gold_key="):
        fn(prompts=PROMPTS, completions=COMPLETIONS, solution=["4", "6"], log_metric=print)


def test_gold_key_and_eos_truncation(keyword_scorer):
    fn = reward_function(Rewarder(keyword_scorer, RewardConfig(outcome_weight=1.0)), gold_key="solution",
                         eos_token_ids=[2, 0])
    right = ["2+2 = 4\nAnswer: 4"] * 3
    rewards = fn(prompts=PROMPTS[:1] * 3, completions=right, completion_ids=[[5, 2], [5, 0], [5, 9]],
                 solution=["4"] * 3)
    assert rewards == [1.0, 1.0, 0.0]  # the last one ended on a non-EOS id: cut by the length limit


def test_make_trl_reward_on_a_real_prm(tiny_prm: Path):
    config = RewardConfig(shaping="mean", outcome_weight=0.5)
    fn = make_trl_reward(tiny_prm, config)
    completions = ["1 plus 1\nok\nAnswer: 2", "1 plus 1\nno\nAnswer: 3"]
    rewards = fn(prompts=["1 plus 1\n"] * 2, completions=completions, completion_ids=[[1], [1]], answer=["2", "2"])
    expected = Rewarder(load_prm(tiny_prm), config).score(["1 plus 1"] * 2, completions, ["2", "2"])
    assert rewards == pytest.approx([s.reward for s in expected])
    assert [s.shaped.outcome for s in expected] == [1.0, 0.0]


def test_grpo_trainer_runs_with_the_prm_reward(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    """TRL's real GRPOTrainer, CPU, no vLLM: the reward function is called every step and its rewards logged.

    ~16 s on a busy 2-core box (mostly importing TRL), so it runs with the fast tests."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_lm)
    policy = AutoModelForCausalLM.from_pretrained(tiny_lm)
    rows = [{"prompt": f"{a}+{b} =\n", "question": f"{a}+{b} =", "answer": str(a + b)} for a, b in
            [(1, 2), (3, 4), (5, 1), (2, 2)]]
    reward = make_trl_reward(tiny_prm, RewardConfig(shaping="min", outcome_weight=0.5),
                             eos_token_ids=[tokenizer.eos_token_id, tokenizer.pad_token_id])
    calls = []

    def counted(*args, **kwargs):
        out = reward(*args, **kwargs)
        calls.append(len(out))
        return out

    counted.__name__ = reward.__name__
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=12, max_steps=2, learning_rate=1e-3, logging_steps=1, use_cpu=True,
                      bf16=False, report_to="none", save_strategy="no", use_vllm=False, seed=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=policy, reward_funcs=[counted], args=args, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer)
    start = time.perf_counter()
    trainer.train()
    elapsed = time.perf_counter() - start
    logged = [h for h in trainer.state.log_history if "rewards/prm_min/mean" in h]
    assert trainer.state.global_step == 2
    assert calls == [4, 4]  # one call per generation batch of 4 completions
    assert len(logged) == 2
    assert all(-1e-9 <= h["rewards/prm_min/mean"] <= 1.0 for h in logged)
    assert all("prm_min/process_reward" in h for h in logged)  # our log_metric calls reached TRL's logs
    print(f"GRPOTrainer: 2 steps in {elapsed:.1f} s")
