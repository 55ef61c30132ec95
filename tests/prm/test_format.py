"""The step format: spans cut each step out of the completion, prefixes reproduce the model's own text,
and every producer and consumer of rollout prefixes hashes the same prefix the same way."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from prm.datagen.solutions import solution_rows
from prm.datagen.stored_solutions import solutions_to_label
from prm.format import (
    Prompter,
    StepTagConvention,
    first_error_of,
    from_spans,
    labels_from_first_error,
    segment,
    statuses_from_first_error,
)
from prm.generation import Completion
from prm.labeling import MCConfig, OmegaPRMConfig, get_labeler
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic

COMPLETIONS = {
    "generated": ("5+3 = 8\n8-2 = 6\nAnswer: 6", ["5+3 = 8", "8-2 = 6"]),
    "generated_no_newline_at_end": ("5+3 = 8\n8-2 = 6", ["5+3 = 8", "8-2 = 6"]),
    "gsm8k": ("Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether.\n#### 72",
              ["Natalia sold 48/2 = 24 clips in May.", "Natalia sold 48+24 = 72 clips altogether."]),
    "trailing_spaces": ("a = 1   \n  b = 2\t\nAnswer: 2  ", ["a = 1", "b = 2"]),
    "crlf": ("x = 1\r\ny = 2\r\n\r\nz = 3\r\n", ["x = 1\r\ny = 2", "z = 3"]),
    "crlf_lines": ("x = 1\r\ny = 2\r\n", ["x = 1", "y = 2"]),
    "math_paragraphs": ("We have $x^2 = 4$.\n\nSo\n$$x = \\pm 2.$$\n   \n\nThe answer is $\\boxed{2}$.",
                        ["We have $x^2 = 4$.", "So\n$$x = \\pm 2.$$"]),  # an answer paragraph is no step
    "blank_lines_with_spaces": ("First.\n \t\nSecond.\n\n\n\nThird.\n\n", ["First.", "Second.", "Third."]),
    "unicode": ("π ≈ 3.14159 → 3.14 ✓\nÅngström: 10⁻¹⁰ m 👍\n", ["π ≈ 3.14159 → 3.14 ✓", "Ångström: 10⁻¹⁰ m 👍"]),
    "combining": ("e\u0301 = é\n日本語の答え = 5\n", ["e\u0301 = é", "日本語の答え = 5"]),
    "empty": ("", []),
    "whitespace_only": ("  \n\t\r\n", []),
    "answer_only": ("Answer: 5", []),
}


@pytest.mark.parametrize("name", sorted(COMPLETIONS))
def test_spans_cut_each_step_out_of_the_completion(name: str) -> None:
    text, steps = COMPLETIONS[name]
    seg = segment(text)
    assert list(seg.steps) == steps
    for (start, end), step in zip(seg.spans, steps, strict=True):
        assert text[start:end] == step


@pytest.mark.parametrize("name", sorted(COMPLETIONS))
def test_prefix_k_is_the_models_own_text_up_to_step_k(name: str) -> None:
    text, steps = COMPLETIONS[name]
    seg = segment(text)
    assert seg.prefix(-1) == ""
    for k in range(len(steps)):
        prefix = seg.prefix(k)
        assert text.startswith(prefix)  # never re-joined: exactly what the model wrote
        end = seg.spans[k][1]
        assert prefix[:end] == text[:end] and prefix[end:].strip() == ""  # step k, then only its whitespace
        assert list(segment(prefix).steps) == steps[: k + 1]  # the prefix holds steps 0..k and nothing else
        if k + 1 < len(steps):
            assert len(prefix) == seg.spans[k + 1][0]  # up to where the next step begins


def test_then_appends_a_continuation_after_prefix_k() -> None:
    seg = segment("1+1 = 2\r\n2+2 = 5\r\nAnswer: 5")
    longer = seg.then(0, "2+2 = 4\nAnswer: 4")
    assert longer.text == "1+1 = 2\r\n2+2 = 4\nAnswer: 4"
    assert longer.steps == ("1+1 = 2", "2+2 = 4")
    assert longer.prefix(0) == seg.prefix(0)


@pytest.mark.parametrize("spans", [[(0, 0)], [(3, 2)], [(0, 5), (4, 6)], [(0, 99)], [(-1, 2)]])
def test_from_spans_rejects_spans_that_do_not_fit(spans) -> None:
    with pytest.raises(ValueError, match="span"):
        from_spans("abc = 1\n", spans)


@pytest.mark.parametrize(("n", "first_error", "labels", "statuses"), [
    (3, -1, [True, True, True], ["labeled"] * 3),
    (3, 0, [False, False, False], ["labeled", "by_convention", "by_convention"]),
    (3, 2, [True, True, False], ["labeled"] * 3),
    (2, None, [None, None], ["unverifiable"] * 2),
    (0, -1, [], []),
])
def test_first_error_convention_both_ways(n, first_error, labels, statuses) -> None:
    assert labels_from_first_error(n, first_error) == labels
    assert statuses_from_first_error(n, first_error) == statuses
    if first_error is not None:
        assert first_error_of(labels) == (first_error if n else -1)


class _Plain:
    chat_template = None


class _Recorder:
    """A rollout sampler that records the prefixes it is asked for and answers from a fixed outcome."""

    def __init__(self) -> None:
        self.hashes: set[str] = set()

    def sample(self, targets, n):
        from prm.labeling.types import RolloutOutcome

        self.hashes |= {t.prefix_hash for t in targets}
        wants = [n] * len(targets) if isinstance(n, int) else list(n)
        return [[RolloutOutcome("5+3 = 8\nAnswer: 8", True, 5)] * k for k in wants]

    def drain_new_rows(self):
        return []


def test_the_rollouts_asset_and_every_labeler_hash_the_same_prefixes(wh) -> None:
    """The rollouts asset builds its targets from ``solutions_to_label`` (assets/generation.py); the
    labelers get theirs from the same rows. Both must equal sha1(prompt + completion[:boundary]) computed
    here independently, so a change of rendering on either side fails this test."""
    problems = [r.to_row() for r in generate_arithmetic(ArithmeticSourceConfig(n_ops=(2,), per_level=2), seed=3)]
    texts = ["{a}  \r\n{b}\r\n\r\nAnswer: 1", "{a}\n\n{b}\n"]  # trailing spaces, CRLF, blank lines
    completions = []
    for p in problems:
        a, b = p["gold_solution"].split("\n")[:2]
        completions.append(Completion(texts=tuple(t.format(a=a, b=b) for t in texts),
                                      finish_reasons=("stop", "stop"), prompt_tokens=3, completion_tokens=(9, 9)))
    prompter = Prompter(_Plain())
    sols, steps, _ = solution_rows(problems, completions, model="m", n=2, temperature=1.0, seed=0,
                                   prompt_version=prompter.version)
    kw = {"source": "arith", "day": "2026-11-20", "run_id": "r"}
    wh.write("problems", problems, **kw)
    wh.write("solutions", sols, **kw)
    wh.write("steps", steps, **kw)

    question = {p["problem_id"]: p["question"] for p in problems}
    expected = set()
    for s in sols:
        for r in (r for r in steps if r["solution_id"] == s["solution_id"]):
            end = r["char_end"]
            end += len(s["text"][end:]) - len(s["text"][end:].lstrip())  # the whitespace the model wrote after it
            expected.add(hashlib.sha1((question[s["problem_id"]] + "\n" + s["text"][:end]).encode()).hexdigest()[:16])

    to_label = solutions_to_label(wh, "arith", "2026-11-20", prompter)
    asset_side = {s.target(k).prefix_hash for s in to_label for k in range(len(s.steps))}
    assert asset_side == expected
    for method, config in (("mc", MCConfig(n_rollouts=2)), ("omegaprm", OmegaPRMConfig(k=2, screen=False))):
        recorder = _Recorder()
        get_labeler(method, config).label(to_label, recorder)
        step_hashes = recorder.hashes - {to_label[0].target(-1).prefix_hash}  # OmegaPRM may ask for the root
        assert step_hashes <= expected and step_hashes, method
    assert all(s["prompt_version"] == "p1-plain" for s in sols)


def test_a_folder_without_a_convention_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"has no prm_convention\.json.*math-shepherd"):
        StepTagConvention.load(tmp_path)


def test_default_template_keeps_the_embedded_policys_prompt_and_version() -> None:
    """The char-level policy was trained on ``question + "\\n"``: the default template must not change a byte."""
    from prm.format import DEFAULT_TEMPLATE, PromptTemplate
    from prm.models import load_tokenizer

    policy = load_tokenizer("arith-policy")
    assert Prompter(policy)("12+7 =") == Prompter(policy, PromptTemplate())("12+7 =") == "12+7 =\n"
    assert Prompter(policy, DEFAULT_TEMPLATE).version == "p1-plain"


def test_a_template_goes_through_the_chat_template_and_into_the_version() -> None:
    from prm.format import PromptTemplate
    from prm.format.prompts import SEARCH_AND_LEARN_SYSTEM_PROMPT
    from prm.models import load_tokenizer

    smol = load_tokenizer("smollm2-135m-instruct")
    bare = Prompter(smol)
    template = PromptTemplate(system_prompt=SEARCH_AND_LEARN_SYSTEM_PROMPT, instruction="Answer with a number.")
    templated = Prompter(smol, template)
    text = templated("What is 2+3?")
    assert text.startswith("<|im_start|>system\nSolve the following math problem efficiently and clearly")
    assert "You are a helpful AI assistant named SmolLM" not in text  # the recipe's system turn replaces the default
    assert "<|im_start|>user\nWhat is 2+3?\n\nAnswer with a number.<|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    # the version names the chat template and the template: rows sampled under another prompt never mix
    assert templated.version.startswith(bare.version + "-t") and templated.version != bare.version
    other = Prompter(smol, PromptTemplate(instruction="Answer with a number!")).version
    assert other != templated.version
    with pytest.raises(ValueError, match="instruction is empty"):
        PromptTemplate(instruction="  ")


def test_the_solutions_asset_config_exposes_prompt_and_sampling_knobs() -> None:
    """The names a recipe sets: generation sampling ``top_p``/``stop``, prompt ``system_prompt``/``instruction``."""
    from assets.generation import SolutionsConfig

    config = SolutionsConfig(top_p=0.9, stop=["\n\n\n"], system_prompt="Be brief.", instruction="End with 'X'.")
    assert config.template().system_prompt == "Be brief." and config.template().instruction == "End with 'X'."
    default = SolutionsConfig()
    assert (default.top_p, default.stop, default.system_prompt, default.instruction) == (1.0, [], None, None)
    assert default.template().is_default


def test_rollouts_and_labelers_rebuild_the_solutions_prompt_from_the_materialization() -> None:
    """A template set on `solutions` only: the later assets read it back from that partition's materialization."""
    import json

    import dagster as dg

    from assets.generation import partition_prompter
    from assets.partitions import partition_key
    from prm.format import PromptTemplate

    class Plain:
        chat_template = None

    key = partition_key("2026-11-20", "gsm8k")
    template = {"system_prompt": None, "instruction": "End with: The answer is: <number>"}
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("source", ["gsm8k", "other"])
        for pk, meta in ((key, template), (partition_key("2026-11-20", "other"), {"system_prompt": "x",
                                                                                   "instruction": None})):
            instance.report_runless_asset_event(dg.AssetMaterialization(
                asset_key="solutions", partition=str(pk), metadata={"prompt_template": json.dumps(meta)}))
        context = dg.build_asset_context(instance=instance, partition_key=key)
        prompter = partition_prompter(context, Plain())
        fresh = dg.build_asset_context(instance=instance, partition_key=partition_key("2026-11-21", "gsm8k"))
        default = partition_prompter(fresh, Plain())
    assert prompter.template == PromptTemplate(**template)
    assert prompter("2+3?") == "2+3?\n\nEnd with: The answer is: <number>\n"
    assert default.version == "p1-plain"  # no solutions materialized for that partition: the bare prompt
