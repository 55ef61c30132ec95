"""The reading baselines of the label-source comparison, scored like its PRMs: the policy's log-likelihood of
each step (no training; mean or min token log-prob, chosen on validation) and an implicit PRM (PRIME) trained on
the train split's outcomes. Each gives, per test set, the runs :func:`prm.experiments.pooled.pooled_row` takes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.best_of_n import evaluate_best_of_n
from prm.evaluation import perturbation_run
from prm.first_error import ScoredSolution, evaluate_processbench
from prm.format import labels_from_first_error
from prm.metrics import score_pairs, sibling_pairs
from prm.scoring import (
    IMPLICIT_SCORES,
    LOGLIK_AGGREGATIONS,
    implicit_scores,
    implicit_step_rewards,
    loglik_scores,
    step_logliks,
)
from prm.training import ImplicitPRMConfig, train_implicit_prm

ScoreFn = Callable[[Sequence[tuple[str, Sequence[str]]]], list[list[float]]]
POLICY_LOGLIK, IMPLICIT_PRM = "baseline:policy_loglik", "baseline:implicit_prm"
STEP_IMPLICIT_PRM = "truth:implicit_prm"  # the implicit PRM trained on step truth: a PRM, not a baseline


def _scored(solutions: Sequence[dict], scores: Sequence[Sequence[float]]) -> list[ScoredSolution]:
    return [ScoredSolution(s["solution_id"], s["problem_id"], tuple(min(1.0, max(0.0, x)) for x in sc),
                           s["first_error"], s.get("final_answer"), s.get("is_correct"))
            for s, sc in zip(solutions, scores, strict=True)]


def _items(solutions: Sequence[dict]) -> list[tuple[str, list[str]]]:
    return [(s["question"], s["steps"]) for s in solutions]


def scorer_runs(score: ScoreFn, val: Sequence[dict], test_sets: Mapping[str, Sequence[dict]], bon_n: int
                ) -> dict[str, tuple[list[ScoredSolution], float, str, Any, Any]]:
    """Per test set, one run of a step scorer: its test solutions, the threshold and the best-of-N aggregation
    chosen on ``val``, its sibling pairs' scores and its off-policy perturbation pairs' scores."""
    val_scored = _scored(val, score(_items(val)))
    out = {}
    for name, test in test_sets.items():
        scored = _scored(test, score(_items(test)))
        pairs = sibling_pairs(test)
        right, wrong = score_pairs(score, {s["problem_id"]: s["question"] for s in test}, pairs)
        threshold = evaluate_processbench(val_scored, scored).threshold
        out[name] = (scored, threshold, evaluate_best_of_n(val_scored, scored, bon_n).chosen, (pairs, right, wrong),
                     perturbation_run(score, test, threshold))
    return out


def _choose(make: Callable[[str], ScoreFn], choices: Sequence[str], val: Sequence[dict]) -> str:
    """The choice whose scores give the best ProcessBench F1 on ``val`` at the threshold ``val`` chooses."""
    def f1(how: str) -> float:
        scored = _scored(val, make(how)(_items(val)))
        return evaluate_processbench(scored, scored).f1 or 0.0
    return max(choices, key=f1)


def policy_loglik_runs(policy: str, val: Sequence[dict], test_sets: Mapping[str, Sequence[dict]], bon_n: int,
                       ) -> dict[str, list]:
    """The policy's log-likelihood baseline (deterministic: one run per test set)."""
    model, tokenizer = _causal_lm(policy)

    def make(how: str) -> ScoreFn:
        return lambda items: loglik_scores(step_logliks(model, tokenizer, items), how)

    how = _choose(make, LOGLIK_AGGREGATIONS, val)
    return {name: [run] for name, run in scorer_runs(make(how), val, test_sets, bon_n).items()}


def implicit_prm_runs(train: Sequence[dict], val: Sequence[dict], test_sets: Mapping[str, Sequence[dict]],
                      bon_n: int, out_root: str | Path, seeds: Sequence[int], config: ImplicitPRMConfig,
                      progress: Callable[[str], None] = print) -> dict[str, list]:
    """An implicit PRM per seed, fine-tuned on ``train`` solutions' outcomes (``is_correct``) or, with
    ``config.labels == "step"``, on their exact step truth (``first_error``)."""
    from dataclasses import replace

    if config.labels == "outcome":
        rows = [(s["question"], s["steps"], bool(s["is_correct"])) for s in train]
    else:
        rows = [(s["question"], s["steps"], labels_from_first_error(len(s["steps"]), s["first_error"]))
                for s in train]
    runs: dict[str, list] = {name: [] for name in test_sets}
    for seed in seeds:
        folder = train_implicit_prm(rows, Path(out_root) / f"seed{seed}" / f"implicit_prm_{config.labels}",
                                    replace(config, seed=seed), progress)
        model, tokenizer = _causal_lm(str(folder))
        ref, _ = _causal_lm(config.base_model)

        def make(how: str, model: Any = model, ref: Any = ref, tokenizer: Any = tokenizer) -> ScoreFn:
            return lambda items: implicit_scores(implicit_step_rewards(model, ref, tokenizer, items,
                                                                       beta=config.beta), how)

        how = _choose(make, IMPLICIT_SCORES, val)
        for name, run in scorer_runs(make(how), val, test_sets, bon_n).items():
            runs[name].append(run)
    return runs


def _causal_lm(name: str) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import resolve_model

    path = str(resolve_model(name))
    return AutoModelForCausalLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
