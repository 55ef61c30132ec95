"""The adapters under the frameworks' defaults, with their real payload shapes.

- OpenRLHF ``--apply_chat_template`` (openrlhf/datasets/prompts_dataset.py ``preprocess_data``, v0.9-v0.11): the
  prompt is the rendered template and the query is prompt + response decoded with ``skip_special_tokens=False``.
  ChatML is rendered by SmolLM2's own tokenizer where the model cache has it; Llama-3 is the text of
  Meta-Llama-3-8B-Instruct's template (its default system-less form), written out.
- OpenRLHF's ``label = data[label_key]`` is the dataset column as is: a string, a list, a dict.
- verl v0.7 MATH preprocessing (examples/data_preprocess/math_dataset.py): ``prompt`` is chat messages,
  ``reward_model = {"style": "rule", "ground_truth": ...}``, ``extra_info = {"split", "index"}`` (no question);
  the reward loop (verl/experimental/reward_loop, ``use_reward_loop: true``) hands a manager a one-row batch with
  ``raw_prompt`` and looks the manager up in its own registry.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
from pathlib import Path

import pytest

from prm.rewards import UNCONDITIONED, RewardConfig, Rewarder
from prm.rewards.adapters import verl as verl_adapter
from prm.rewards.adapters.chat_template import markers_from_tokenizer, user_message
from prm.rewards.adapters.openrlhf import remote_payload
from tests.prm.rewards.conftest import KeywordScorer
from tests.prm.rewards.test_verl_dense import TOK, verl_batch

QUESTION = "Tom has 3 apples and gets 4 more. How many?"
RESPONSE = "3+4 = 7\nAnswer: 7"
LLAMA3 = ("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{q}<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n")
CHATML = "<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\n{q}<|im_end|>\n" \
         "<|im_start|>assistant\n"


def _smollm2_tokenizer():
    from prm.models import load_tokenizer

    try:
        return load_tokenizer("smollm2-135m-instruct")
    except Exception as err:  # the converted model is not in this machine's cache
        pytest.skip(f"SmolLM2's tokenizer is not available here ({err})")


def _payload(prompts: list[str], queries: list[str], labels: list | None = None, **kwargs) -> tuple[dict, list]:
    scorer = KeywordScorer()
    rewarder = Rewarder(scorer, RewardConfig(outcome_weight=0.5))
    return remote_payload(rewarder, queries, prompts, labels or ["7"] * len(queries), **kwargs), scorer.seen


@pytest.mark.parametrize("template", [CHATML, LLAMA3], ids=["chatml", "llama3"])
def test_chat_templated_openrlhf_queries_score_as_the_plain_ones(template):
    prompt = template.format(q=QUESTION)
    plain, plain_seen = _payload([QUESTION + "\n"], [QUESTION + "\n" + RESPONSE])
    chat, chat_seen = _payload([prompt], [prompt + RESPONSE + "<|im_end|>"])
    assert chat_seen == plain_seen == [(QUESTION, ["3+4 = 7"])]  # the PRM sees the question, not the template
    assert chat["rewards"] == plain["rewards"] and chat["extra_logs"]["reward_error"] == [0.0]


def test_the_real_chatml_template_is_read_back_from_its_tokenizer():
    tok = _smollm2_tokenizer()
    markers = markers_from_tokenizer(tok)
    assert markers is not None and markers.user_open.endswith("user\n")
    messages = [{"role": "system", "content": "Reason step by step."}, {"role": "user", "content": QUESTION}]
    prompt = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert user_message(prompt, (markers,)) == QUESTION
    chat, seen = _payload([prompt], [prompt + RESPONSE + tok.eos_token], markers=(markers,))
    assert seen == [(QUESTION, ["3+4 = 7"])] and chat["extra_logs"]["reward_error"] == [0.0]


def test_a_prompt_missing_from_the_query_is_a_per_sample_error_never_a_silent_reward(caplog):
    before = UNCONDITIONED.count
    with caplog.at_level(logging.DEBUG, logger="prm.rewards.rewarder"):
        out, seen = _payload(["a prompt the tokenizer rewrote", QUESTION + "\n"],
                             ["3+4 = 7\nAnswer: 7", QUESTION + "\n" + RESPONSE])
    assert out["extra_logs"]["reward_error"] == [1.0, 0.0]
    assert out["extra_logs"]["n_steps"][0] == 0.0  # the no-step reward: nothing scored under a wrong question
    assert [x for x in seen if x[1]] == [(QUESTION, ["3+4 = 7"])]  # only the found question's steps reached the PRM
    assert UNCONDITIONED.count == before + 1
    assert any("not scored by the PRM" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("label,outcome,error", [
    ("7", 1.0, 0.0), (["7"], 1.0, 0.0), ({"answer": "7"}, 1.0, 0.0), ({"ground_truth": 7}, 1.0, 0.0),
    (["7", "8"], 0.0, 1.0), ({"note": "x"}, 0.0, 1.0), ("", 0.0, 0.0),
])
def test_openrlhf_labels_in_the_shapes_datasets_hold(label, outcome, error):
    out, _ = _payload([QUESTION + "\n"], [QUESTION + "\n" + RESPONSE], [label])
    assert out["extra_logs"]["outcome_reward"] == [outcome]
    assert out["extra_logs"]["reward_error"] == [error]


def test_verl_math_preprocessed_row_without_a_question_is_flagged_not_silent(monkeypatch):
    scorer = KeywordScorer()
    monkeypatch.setattr(verl_adapter, "load_rewarder", lambda prm_dir, config: Rewarder(scorer, config))
    row = {"data_source": "DigitalLearningGmbH/MATH-lighteval", "reward_model": {"style": "rule", "ground_truth": "7"},
           "extra_info": {"split": "test", "index": 0}}
    result = verl_adapter.compute_score(row["data_source"], RESPONSE, row["reward_model"]["ground_truth"],
                                        row["extra_info"], prm_dir="unused")
    assert result["reward_error"] == 1.0 and result["n_steps"] == 0.0 and all(not steps for _, steps in scorer.seen)
    assert result["outcome_reward"] == 1.0  # the outcome is still graded


def _fake_verl(root: Path) -> None:
    """verl's two reward-manager registries as importable modules (verl does not install here): a dict, a
    ``register(name)`` decorator and ``get_reward_manager_cls`` raising ``Unknown reward manager: <name>``, the
    behaviour of verl v0.7.0's verl/experimental/reward_loop/reward_manager/registry.py and
    verl/workers/reward_manager/registry.py."""
    body = ("TABLE = {}\nALIAS = TABLE\n"
            "def register(name):\n    def deco(cls):\n        TABLE[name] = cls\n        return cls\n    return deco\n"
            "def get_reward_manager_cls(name):\n    if name not in TABLE:\n"
            "        raise ValueError(f'Unknown reward manager: {name}')\n    return TABLE[name]\n")
    for package, alias in (("verl/workers/reward_manager", "REWARD_MANAGER_REGISTRY"),
                           ("verl/experimental/reward_loop/reward_manager", "REWARD_LOOP_MANAGER_REGISTRY")):
        folder = root / package
        folder.mkdir(parents=True, exist_ok=True)
        for part in [*folder.relative_to(root).parents][:-1]:
            (root / part / "__init__.py").touch()
        (folder / "__init__.py").touch()
        (folder / "registry.py").write_text(body.replace("ALIAS", alias))


def test_verl_reward_loop_finds_prm_dense_and_reads_the_question_from_raw_prompt(tmp_path, monkeypatch):
    _fake_verl(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "verl" or m.startswith("verl.")]:
        monkeypatch.delitem(sys.modules, name)
    from prm.rewards.adapters import verl_dense

    spec = importlib.util.spec_from_file_location("custom_reward", verl_dense.__file__)  # as verl loads the path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from verl.experimental.reward_loop.reward_manager.registry import get_reward_manager_cls

    cls = get_reward_manager_cls("prm_dense")  # raised "Unknown reward manager: prm_dense" before
    scorer = KeywordScorer()
    rewarder = Rewarder(scorer, RewardConfig(outcome_weight=0.5))
    loop_manager = cls({"reward_model": {"reward_kwargs": {}}}, TOK, None, None, None, rewarder=rewarder)
    data = verl_batch(["ok 1\nAnswer: 3"], ["3"])
    data["non_tensor_batch"]["extra_info"] = [{"split": "test", "index": 0}]
    data["non_tensor_batch"]["raw_prompt"] = [[{"role": "user", "content": "1+2"}]]
    out = asyncio.run(loop_manager.run_single(data))
    assert scorer.seen == [("1+2", ["ok 1"])]
    assert out["reward_extra_info"]["reward_error"] == 0.0
    assert out["reward_score"] == pytest.approx(out["reward_extra_info"]["score"])


def test_verl_dense_reads_the_question_from_the_prompt_tokens_when_nothing_else_holds_it():
    from prm.rewards.adapters.verl_dense import PRMDenseRewardManager

    scorer = KeywordScorer()
    manager = PRMDenseRewardManager(TOK, rewarder=Rewarder(scorer, RewardConfig(outcome_weight=0.5)))
    data = verl_batch(["ok 1\nAnswer: 3"], ["3"])
    data["non_tensor_batch"]["extra_info"] = [{"split": "test", "index": 0}]
    out = manager(data, return_dict=True)
    assert scorer.seen == [("q", ["ok 1"])]  # verl_batch's prompt tokens spell "q"
    assert out["reward_extra_info"]["reward_error"] == [0.0]
