"""The process arm on the tiny models: two real TRL optimizer steps with per-token advantages, and the
advantages of one generation batch recomputed from the step scores the PRM gave it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from prm.rl.config import ARMS, PROCESS_ARMS
from prm.rl.constants import PROCESS
from prm.rl.data import dataset_rows, train_problems
from prm.rl.grpo import arm_trainer, grpo_args, load_result, run_grpo, run_key
from prm.rl.process_grpo import ProcessConfig, completion_step_scores, process_advantage_matrix
from tests.prm.rl.conftest import TINY_RUN


def test_process_is_an_arm_with_the_shared_budget():
    assert PROCESS in ARMS and PROCESS in PROCESS_ARMS
    assert ARMS[PROCESS].outcome_weight == 1.0  # its reward is the outcome; the PRM enters through advantages
    assert 0.0 <= PROCESS_ARMS[PROCESS].outcome_weight <= 1.0


def test_process_arm_trains_two_steps_through_run_grpo(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    result = run_grpo(tiny_lm, tiny_prm, PROCESS, TINY_RUN, tmp_path)
    assert result.arm == PROCESS and result.steps == 2
    assert [p.step for p in result.curve] == [1, 2]
    assert all(p.n_steps is not None and p.min_step_score is not None for p in result.curve)
    # the arm's ProcessConfig is part of its result's key: a changed mix weight reruns it
    assert load_result(tmp_path, run_key(tiny_lm, tiny_prm, TINY_RUN, PROCESS)) == result
    assert load_result(tmp_path, run_key(tiny_lm, tiny_prm, TINY_RUN)) is None


def test_trainer_feeds_per_token_advantages_to_the_loss(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_lm))
    before = [p.detach().clone() for p in model.parameters()]
    reward, trainer_cls, kwargs = arm_trainer(PROCESS, tiny_prm, tokenizer)
    kwargs["process"] = ProcessConfig(outcome_weight=0.0)  # pure process advantages, checked below
    trainer = trainer_cls(model=model, reward_funcs=[reward], processing_class=tokenizer,
                          args=grpo_args(TINY_RUN, tmp_path, cuda=False, vllm=False),
                          train_dataset=Dataset.from_list(dataset_rows(train_problems(TINY_RUN), tokenizer)),
                          **kwargs)
    trainer.train()
    assert trainer.state.global_step == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    logged = [h for h in trainer.state.log_history if "token_advantage/steps_per_completion" in h]
    assert len(logged) == 2

    batch = next(iter(trainer.get_train_dataloader()))
    out = trainer._generate_and_score_completions(batch)
    ids, mask, adv = out["completion_ids"], out["completion_mask"], out["advantages"]
    assert adv.shape == ids.shape == mask.shape and adv.shape[0] == TINY_RUN.batch_size
    recorder = kwargs["recorder"]
    rows = [completion_step_scores(tokenizer, ids[i, : int(n)].tolist(), text, scored)
            for i, (n, text, scored) in enumerate(zip(mask.sum(1).tolist(), recorder.texts, recorder.scored,
                                                      strict=True))]
    expected = process_advantage_matrix([s for s, _ in rows], [e for _, e in rows], mask.sum(1).tolist(),
                                        TINY_RUN.num_generations, ids.shape[1])
    assert torch.allclose(adv, expected)
    assert sum(len(s) for s, _ in rows) > 0  # the random policy writes lines, so the PRM scored steps
    for i, (_, ends) in enumerate(rows):  # tokens after the last step's end carry no process advantage
        last = max((e for e in ends if e is not None), default=-1)
        assert torch.all(adv[i, last + 1:] == 0)


def test_recorder_must_sit_behind_the_reward(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.rl.grpo import arm_reward

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_lm))
    _, trainer_cls, kwargs = arm_trainer(PROCESS, tiny_prm, tokenizer)
    trainer = trainer_cls(model=AutoModelForCausalLM.from_pretrained(str(tiny_lm)),
                          reward_funcs=[arm_reward("outcome", tiny_prm, tokenizer)], processing_class=tokenizer,
                          args=grpo_args(TINY_RUN, tmp_path, cuda=False, vllm=False),
                          train_dataset=Dataset.from_list(dataset_rows(train_problems(TINY_RUN), tokenizer)),
                          **kwargs)
    with pytest.raises(RuntimeError, match="recorder behind the reward"):
        trainer._generate_and_score_completions(next(iter(trainer.get_train_dataloader())))
