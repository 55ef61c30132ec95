"""The PRM's wrong-step threshold of the first_error and flawed_penalty RL arms, chosen on validation problems only.

Run: ``.venv/bin/python benchmarks/rl_threshold.py [--prm arith-prm] [--problems 48] [--samples 4]`` (CPU, one
thread: ~80 s for the default 960 samples on a shared 2-core box).

The arms read a step the PRM scores below ``RLRunConfig.error_threshold`` as an error (default 0.5, the PRM's class
boundary). The shipped LM-head PRM scores held-out 6-10-operation samples at a mean lowest step of 0.13, so at 0.5
nearly every right answer reads flawed. This script draws *validation* word problems at the RL training lengths
(``RLRunConfig().train_ops`` and ``anchor_ops``, the config's operators, operands and style) with a problem seed
apart from every other draw (:data:`VALIDATION_SEED`), samples the policy at the RL eval temperature, scores every
step as the RL reward does (:func:`prm.rewards.step_rewards_batch`: the same segmentation and scores), labels the
steps with exact truth (:func:`prm.tasks.step_truth`) and chooses the threshold with the best ProcessBench F1
(:func:`prm.first_error.evaluate_processbench` on the validation samples: its ``choose_threshold``).

Reported at the chosen threshold and at the default: ProcessBench F1; among right answers, the share the PRM flags
flawed (a step below the threshold: what flawed_penalty penalises) against the share exact truth marks flawed, and
the precision and recall of that flag; the same on a small grid (``by_threshold``). Each arm gets the threshold
chosen for its own job, passed to ``benchmarks/rl.py --error-threshold``: first_error, which locates the first
error, the ProcessBench choice (``threshold``); flawed_penalty, which penalises right answers, the one that best finds
flawed positives among right answers (``flawed_threshold``, :func:`choose_flawed`).

Progress lines on stderr; the last stdout line is one JSON object: ``threshold``, ``chosen_on``,
``f1_at_threshold``, ``flawed_threshold``, ``flawed_at_flawed_threshold``, ``f1_at_default``,
``default_threshold``, ``flawed_at_threshold``, ``flawed_at_default``,
``by_threshold``, ``counts`` (``wrong_steps``: samples with a wrong step by truth), ``ops``, ``problems``,
``samples``, ``temperature``, ``prm``, ``policy``, ``problem_seed``, ``wall_s``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prm.first_error import ScoredSolution, evaluate_processbench
from prm.format import first_error_of
from prm.rl import RLRunConfig, first_error
from prm.tasks import ArithmeticConfig, ArithmeticProblem, generate_problems, step_truth
from verifiers import extract_answer

# Problem seeds of the validation draw: VALIDATION_SEED + ops. Apart from prm.rl.data's training (1_000 + 100 * seed
# + ops) and held-out (2_000 + 100 * seed + ops) draws for any RL seed below 10, and from benchmarks/rl.py's truth
# PRM data (TRUTH_PRM_SEED 7_000 + seed + ops), so the threshold is never chosen on a problem RL trains or is
# measured on.
VALIDATION_SEED = 8_000
GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)  # the by_threshold table's thresholds


@dataclass(frozen=True)
class ValSample:
    """One validation sample: the PRM's P(good) per step, the first wrong step by exact truth (-1: none) and whether
    its final answer is right."""

    solution_id: str
    problem_id: str
    scores: tuple[float, ...]
    first_error: int
    right: bool


def validation_problems(config: RLRunConfig, n: int, seed: int = VALIDATION_SEED) -> list[ArithmeticProblem]:
    """``n`` problems per RL training length (``config.train_ops`` then ``config.anchor_ops``, each once) of the
    config's task, drawn with problem seed ``seed + ops``.

    >>> ps = validation_problems(RLRunConfig(train_ops=(9,), anchor_ops=(6,)), 2)
    >>> [p.n_ops for p in ps], ps[0].problem_id == validation_problems(RLRunConfig(), 2)[0].problem_id
    ([9, 9, 6, 6], True)
    """
    ops = list(dict.fromkeys((*config.train_ops, *config.anchor_ops)))
    return [p for n_ops in ops for p in generate_problems(
        n, ArithmeticConfig(n_ops=n_ops, operators=config.operators, max_value=config.max_value, style=config.style),
        seed=seed + n_ops)]


def is_right(problem: ArithmeticProblem, text: str) -> bool:
    """The held-out table's grading (as :mod:`prm.rl.flawed`): the extracted answer is the exact integer answer."""
    answer = extract_answer(text)
    return answer is not None and answer.lstrip("-").isdigit() and int(answer) == problem.answer


def flagged(scores: Sequence[float], threshold: float) -> bool:
    """Whether the PRM finds an error: the arms' own rule, :func:`prm.rl.first_error` (a finite step score below
    ``threshold``).

    >>> flagged([0.9, 0.3], 0.5), flagged([0.9, 0.3], 0.2), flagged([float("nan")], 0.5), flagged([], 0.5)
    (True, False, False, False)
    """
    return first_error(scores, threshold) < len(scores)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def flawed_detection(samples: Sequence[ValSample], threshold: float) -> dict[str, float | int | None]:
    """Among right answers: the share the PRM flags flawed at ``threshold`` (flawed_penalty's penalised share), the
    share exact truth marks flawed, and the flag's precision and recall (None where undefined).

    >>> s = [ValSample("a", "p", (0.9, 0.1), 1, True), ValSample("b", "p", (0.9, 0.3), -1, True),
    ...      ValSample("c", "p", (0.8, 0.9), 0, True), ValSample("d", "p", (0.05,), 0, False)]
    >>> flawed_detection(s, 0.2)
    {'right': 3, 'flagged_share': 0.3333333333333333, 'true_share': 0.6666666666666666, 'precision': 1.0, 'recall': 0.5}
    >>> flawed_detection(s, 0.5)["precision"], flawed_detection(s, 0.0)["precision"]
    (0.5, None)
    """
    right = [s for s in samples if s.right]
    flag = [flagged(s.scores, threshold) for s in right]
    flawed = [s.first_error >= 0 for s in right]
    hits = sum(f and t for f, t in zip(flag, flawed, strict=True))
    return {"right": len(right), "flagged_share": _ratio(sum(flag), len(right)),
            "true_share": _ratio(sum(flawed), len(right)), "precision": _ratio(hits, sum(flag)),
            "recall": _ratio(hits, sum(flawed))}


def flawed_f1(detection: dict[str, float | int | None]) -> float:
    """F1 of the flawed-positive flag among right answers (0 where precision or recall is undefined or 0).

    >>> flawed_f1({"precision": 0.5, "recall": 1.0}), flawed_f1({"precision": None, "recall": 0.0})
    (0.6666666666666666, 0.0)
    """
    p, r = detection.get("precision"), detection.get("recall")
    return 2 * p * r / (p + r) if p and r else 0.0


def choose_flawed(samples: Sequence[ValSample]) -> float | None:
    """flawed_penalty's threshold: the one that best finds flawed positives (:func:`flawed_f1` among right answers;
    candidates: midpoints between the right answers' distinct lowest step scores; the lowest wins a tie). FAPO
    penalises right answers, so its threshold is chosen on right answers, where ProcessBench F1 (wrong answers'
    first errors) says little. None when no right answer is flawed.

    >>> s = [ValSample("a", "p", (0.9, 0.1), 1, True), ValSample("b", "p", (0.9, 0.3), -1, True),
    ...      ValSample("c", "q", (0.8, 0.6), -1, True), ValSample("d", "q", (0.05,), 0, False)]
    >>> choose_flawed(s)  # 0.2 flags a alone: precision and recall 1
    0.2
    """
    right = [s for s in samples if s.right and s.scores]
    if not any(s.first_error >= 0 for s in right):
        return None
    lows = sorted({min(s.scores) for s in right})
    grid = [(a + b) / 2 for a, b in itertools.pairwise(lows)] + [math.nextafter(lows[-1], math.inf)]
    best = max(flawed_f1(flawed_detection(samples, t)) for t in grid)
    return next(t for t in grid if flawed_f1(flawed_detection(samples, t)) == best)


def solutions(samples: Sequence[ValSample]) -> list[ScoredSolution]:
    """The samples ProcessBench can read: at least one step, every score a finite P(good) (the others are counted
    by :func:`choose`'s caller as unscored)."""
    return [ScoredSolution(s.solution_id, s.problem_id, s.scores, s.first_error, is_correct=s.right)
            for s in samples if s.scores and all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in s.scores)]


def choose(samples: Sequence[ValSample], default: float) -> dict:
    """The threshold with the best ProcessBench F1 on ``samples`` (``choose_threshold``; ``default`` when they lack
    a wrong or a correct solution, and ``chosen_on`` says so) and the numbers at it, at ``default`` and on
    :data:`GRID`.

    >>> s = [ValSample("a", "p", (0.9, 0.1), 1, True), ValSample("b", "p", (0.9, 0.3), -1, True),
    ...      ValSample("c", "q", (0.2, 0.1), 0, False), ValSample("d", "q", (0.8, 0.6), -1, True)]
    >>> r = choose(s, 0.5)
    >>> r["threshold"], r["chosen_on"], r["f1_at_threshold"], r["f1_at_default"]
    (0.25, 'validation', 1.0, 0.6666666666666666)
    >>> r["flawed_at_threshold"]["flagged_share"], r["flawed_at_default"]["flagged_share"]
    (0.3333333333333333, 0.6666666666666666)
    """
    val = solutions(samples)
    chosen = evaluate_processbench(val, val)
    threshold = chosen.threshold

    def f1(t: float) -> float | None:
        return evaluate_processbench(val, val, threshold=t).val_f1

    flawed_threshold = choose_flawed(samples)
    return {"threshold": threshold, "chosen_on": chosen.chosen_on, "f1_at_threshold": chosen.val_f1,
            "flawed_threshold": flawed_threshold,
            "flawed_at_flawed_threshold": None if flawed_threshold is None else {
                **flawed_detection(samples, flawed_threshold), "f1": f1(flawed_threshold)},
            "f1_at_default": f1(default), "default_threshold": default,
            "flawed_at_threshold": flawed_detection(samples, threshold),
            "flawed_at_default": flawed_detection(samples, default),
            "by_threshold": [{"threshold": t, "f1": f1(t), **flawed_detection(samples, t)} for t in GRID],
            "counts": {"samples": len(samples), "scored": len(val), "wrong_steps": sum(s.first_error >= 0 for s in val),
                       "right_answers": sum(s.right for s in samples)}}


def label(problems: Sequence[ArithmeticProblem], texts: Sequence[Sequence[str]],
          steps: Sequence[Sequence[str]], scores: Sequence[Sequence[float]]) -> list[ValSample]:
    """One :class:`ValSample` per sample: ``steps`` and ``scores`` are the flattened samples' (problem by problem,
    sample by sample), as the RL reward segments and scores them; truth from :func:`prm.tasks.step_truth`.

    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, operators="+-", style="chain"), seed=1)[0]
    >>> good = "\\n".join(p.gold_steps) + f"\\nAnswer: {p.answer}"
    >>> out = label([p], [[good, "Answer: 0"]], [list(p.gold_steps), []], [[0.9, 0.8], []])
    >>> [(s.first_error, s.right, s.scores) for s in out]
    [(-1, True, (0.9, 0.8)), (-1, False, ())]
    """
    n = sum(len(group) for group in texts)
    if n != len(steps) or n != len(scores):
        raise ValueError(f"{n} samples but {len(steps)} step lists and {len(scores)} score lists")
    out, k = [], 0
    for problem, group in zip(problems, texts, strict=True):
        for j, text in enumerate(group):
            first = first_error_of(step_truth(problem, list(steps[k]))) if steps[k] else -1
            out.append(ValSample(f"{problem.problem_id}/{j}", problem.problem_id, tuple(float(x) for x in scores[k]),
                                 first, is_right(problem, text)))
            k += 1
    return out


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="arith-policy", help="policy name or folder (the RL arms' start)")
    p.add_argument("--prm", default="arith-prm", help="PRM name or folder (the RL reward's)")
    p.add_argument("--problems", type=int, default=48, help="validation problems per RL training length")
    p.add_argument("--samples", type=int, default=4, help="policy samples per problem")
    p.add_argument("--temperature", type=float, default=RLRunConfig().eval_temperature,
                   help="sampling temperature (default the RL eval temperature)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (the problems' seed is VALIDATION_SEED)")
    args = p.parse_args()
    if args.problems < 1 or args.samples < 1:
        p.error("--problems and --samples must be >= 1")
    return args


def _log(obj: dict) -> None:
    print(json.dumps(obj), file=sys.stderr, flush=True)


def main() -> None:
    args = _args()
    started = time.perf_counter()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import local_model, model_version, resolve_model
    from prm.policy import sample_solutions
    from prm.rewards import step_rewards_batch
    from prm.scoring import load_prm

    torch.set_num_threads(RLRunConfig().torch_threads)
    config = RLRunConfig()
    policy, prm = Path(resolve_model(args.policy)), local_model(args.prm)
    problems = validation_problems(config, args.problems)
    _log({"stage": "sample", "problems": len(problems), "samples": args.samples, "policy": model_version(policy)})
    tokenizer = AutoTokenizer.from_pretrained(str(policy))
    model = AutoModelForCausalLM.from_pretrained(str(policy))
    texts = sample_solutions(model, tokenizer, problems, n_samples=args.samples, temperature=args.temperature,
                             seed=args.seed)
    del model
    _log({"stage": "score", "prm": model_version(prm), "s": round(time.perf_counter() - started, 1)})
    scorer = load_prm(prm)
    rewards = step_rewards_batch(scorer, [(p.question, t) for p, group in zip(problems, texts, strict=True)
                                          for t in group])
    samples = label(problems, texts, [r.steps for r in rewards], [r.scores for r in rewards])
    _log({"stage": "choose", "samples": len(samples), "s": round(time.perf_counter() - started, 1)})
    result = choose(samples, config.error_threshold)
    print(json.dumps({**result, "ops": sorted({p.n_ops for p in problems}), "problems": args.problems,
                      "samples": args.samples, "temperature": args.temperature, "prm": model_version(prm),
                      "policy": model_version(policy), "problem_seed": VALIDATION_SEED,
                      "wall_s": round(time.perf_counter() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
