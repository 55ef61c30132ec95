"""Sample the policy on arithmetic problems and measure what Monte-Carlo labeling needs from it.

Three numbers per difficulty: final-answer accuracy, the per-step error rate (the chance that a step is
wrong given that every earlier step was right, from :func:`prm.tasks.arithmetic.step_truth`), and the
"mixed" share: problems whose samples include both a right and a wrong final answer. Rollout labels are
only informative on mixed problems.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from prm.format import first_error_of, format_prompt, markdown_table, split_steps
from prm.policy.constants import MAX_NEW_TOKENS_FACTOR, MAX_NEW_TOKENS_MARGIN, MAX_POSITIONS
from prm.tasks import ArithmeticProblem, step_truth
from verifiers import extract_answer

# Sequences decoded together by ``generate``: large enough to keep a CPU busy, small enough that one
# rambling sample does not hold up many others.
GENERATE_BATCH = 128


@dataclass(frozen=True)
class EvalRow:
    """Sampling outcomes of the problems with ``n_ops`` operations."""

    n_ops: int
    n_problems: int
    n_samples: int  # total samples (n_problems x samples per problem)
    answer_accuracy: float  # share of samples whose final answer is exactly right
    step_error_rate: float  # first wrong steps / steps checked up to and including the first wrong one
    mixed_share: float  # share of problems with both a right and a wrong sample
    mean_steps: float  # mean number of steps per sample (gold: n_ops)


@dataclass(frozen=True)
class EvalTable:
    """One :class:`EvalRow` per difficulty, plus the pooled row ``n_ops=0``."""

    rows: tuple[EvalRow, ...]
    temperature: float
    samples_per_problem: int
    # Each problem's share of right samples, in the order the problems were scored (all difficulties): what a
    # bootstrap over problems resamples. Empty in tables written before it was kept (older policy cards).
    problem_accuracy: tuple[float, ...] = ()

    def row(self, n_ops: int) -> EvalRow:
        """The row of one difficulty (0: all problems pooled)."""
        for row in self.rows:
            if row.n_ops == n_ops:
                return row
        raise KeyError(f"no problems with n_ops={n_ops}; evaluated {[r.n_ops for r in self.rows]}")

    def to_dict(self) -> dict:
        """JSON-ready form (used in ``policy_card.json``); :meth:`from_dict` reads it back."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalTable:
        """The table :meth:`to_dict` wrote, also from cards written before ``problem_accuracy`` was kept.

        >>> t = EvalTable((EvalRow(0, 1, 2, 0.5, 0.25, 1.0, 3.0),), 1.0, 2, (0.5,))
        >>> old_card = {k: v for k, v in t.to_dict().items() if k != "problem_accuracy"}
        >>> EvalTable.from_dict(t.to_dict()) == t, EvalTable.from_dict(old_card).problem_accuracy
        (True, ())
        """
        return cls(rows=tuple(EvalRow(**row) for row in data["rows"]), temperature=data["temperature"],
                   samples_per_problem=data["samples_per_problem"],
                   problem_accuracy=tuple(data.get("problem_accuracy") or ()))

    def to_markdown(self) -> str:
        """The table as Markdown, one line per difficulty (``all`` for the pooled row)."""
        rows = [{"n_ops": "all" if r.n_ops == 0 else r.n_ops, "problems": r.n_problems, "samples": r.n_samples,
                 "answer acc": r.answer_accuracy, "step error": r.step_error_rate, "mixed": r.mixed_share,
                 "mean steps": f"{r.mean_steps:.2f}"} for r in self.rows]
        return markdown_table(rows, ["n_ops", "problems", "samples", "answer acc", "step error", "mixed",
                                     "mean steps"])


def _is_right(problem: ArithmeticProblem, text: str) -> bool:
    answer = extract_answer(text)
    return answer is not None and answer.lstrip("-").isdigit() and int(answer) == problem.answer


def _row(n_ops: int, problems: Sequence[ArithmeticProblem], samples: Sequence[Sequence[str]]) -> EvalRow:
    right = wrong_steps = checked_steps = total_steps = mixed = 0
    n_samples = 0
    for problem, texts in zip(problems, samples, strict=True):
        outcomes = [_is_right(problem, t) for t in texts]
        mixed += any(outcomes) and not all(outcomes)
        right += sum(outcomes)
        n_samples += len(texts)
        for text in texts:
            truth = step_truth(problem, split_steps(text))
            total_steps += len(truth)
            first = first_error_of(truth)
            wrong_steps += first >= 0
            checked_steps += first + 1 if first >= 0 else len(truth)
    return EvalRow(
        n_ops=n_ops,
        n_problems=len(problems),
        n_samples=n_samples,
        answer_accuracy=right / max(n_samples, 1),
        step_error_rate=wrong_steps / max(checked_steps, 1),
        mixed_share=mixed / max(len(problems), 1),
        mean_steps=total_steps / max(n_samples, 1),
    )


def score_samples(
    problems: Sequence[ArithmeticProblem], samples: Sequence[Sequence[str]], temperature: float = 1.0
) -> EvalTable:
    """Score sampled solutions (``samples[i]`` answers ``problems[i]``) per difficulty and pooled.

    >>> from prm.tasks.arithmetic import ArithmeticConfig, generate_problems
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2), seed=0)[0]
    >>> table = score_samples([p], [[p.gold_solution(), "oops\\nAnswer: 0"]])
    >>> r = table.row(2)
    >>> r.answer_accuracy, round(r.step_error_rate, 3), r.mixed_share, table.problem_accuracy
    (0.5, 0.333, 1.0, (0.5,))
    """
    by_ops: dict[int, list[int]] = defaultdict(list)
    for i, problem in enumerate(problems):
        by_ops[problem.n_ops].append(i)
    rows = [_row(ops, [problems[i] for i in idx], [samples[i] for i in idx]) for ops, idx in sorted(by_ops.items())]
    pooled = _row(0, problems, samples)
    per_problem = len(samples[0]) if samples else 0
    accuracy = tuple(sum(_is_right(p, t) for t in texts) / max(len(texts), 1)
                     for p, texts in zip(problems, samples, strict=True))
    return EvalTable(rows=(pooled, *rows), temperature=temperature, samples_per_problem=per_problem,
                     problem_accuracy=accuracy)


def default_device() -> torch.device:
    """``cuda`` when available, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@torch.no_grad()
def sample_solutions(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    problems: Sequence[ArithmeticProblem],
    n_samples: int,
    temperature: float,
    seed: int,
) -> list[list[str]]:
    """``n_samples`` completions per problem with batched ``generate`` (greedy when temperature is 0)."""
    torch.manual_seed(seed)
    was_training, side = model.training, tokenizer.padding_side
    model.eval()
    tokenizer.padding_side = "left"  # decoder-only batching: prompts end where generation starts
    device = next(model.parameters()).device
    order = sorted(range(len(problems)), key=lambda i: len(problems[i].gold_solution()))
    per_batch = max(1, GENERATE_BATCH // n_samples)
    out: list[list[str]] = [[] for _ in problems]
    try:
        for start in range(0, len(order), per_batch):
            chunk = order[start : start + per_batch]
            prompts = [format_prompt(tokenizer, problems[i].question) for i in chunk]
            enc = tokenizer(prompts, return_tensors="pt", padding=True)
            longest = max(len(problems[i].gold_solution()) for i in chunk)
            budget = int(longest * MAX_NEW_TOKENS_FACTOR) + MAX_NEW_TOKENS_MARGIN
            budget = max(1, min(budget, MAX_POSITIONS - enc.input_ids.shape[1]))
            # top_k=0: sample from the full distribution (generate's default top_k=50 would truncate it).
            sampling = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
            greedy = temperature <= 0  # greedy decodes once per prompt and repeats the text
            generated = model.generate(
                **enc.to(device),
                max_new_tokens=budget,
                num_return_sequences=1 if greedy else n_samples,
                pad_token_id=tokenizer.pad_token_id,
                eos_token_id=tokenizer.eos_token_id,
                **({"do_sample": False} if greedy else sampling),
            )
            texts = tokenizer.batch_decode(generated[:, enc.input_ids.shape[1] :], skip_special_tokens=True)
            if greedy:
                texts = [t for t in texts for _ in range(n_samples)]
            for j, i in enumerate(chunk):
                out[i] = texts[j * n_samples : (j + 1) * n_samples]
    finally:
        tokenizer.padding_side = side
        model.train(was_training)
    return out


def evaluate_model(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    problems: Sequence[ArithmeticProblem],
    n_samples: int = 8,
    temperature: float = 1.0,
    seed: int = 0,
) -> EvalTable:
    """Sample an in-memory model and score it (see :func:`evaluate_policy`)."""
    samples = sample_solutions(model, tokenizer, problems, n_samples, temperature, seed)
    return score_samples(problems, samples, temperature)


def evaluate_policy(
    model_dir: str | Path,
    problems: Sequence[ArithmeticProblem],
    n_samples: int = 8,
    temperature: float = 1.0,
    seed: int = 0,
) -> EvalTable:
    """Load a saved policy folder and measure accuracy by steps, per-step error rate and mixed share.

    Example (needs a trained folder, see :func:`prm.policy.build_policy`)::

        table = evaluate_policy("models/arith-policy", generate_problems(50, ArithmeticConfig(n_ops=8), 1))
        print(table.to_markdown())
    """
    if n_samples < 1:
        raise ValueError(f"n_samples={n_samples} must be >= 1 (samples per problem)")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForCausalLM.from_pretrained(str(model_dir)).to(default_device())
    return evaluate_model(model, tokenizer, problems, n_samples, temperature, seed)
