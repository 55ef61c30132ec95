"""Which uncertainty estimate finds the PRM's mistakes: the choice behind the `active` method's default (issue 50).

Run: ``.venv/bin/python benchmarks/uncertainty.py [--prm arith-prm] [--per-level 60] [--seeds 0 1 2]`` (CPU, one
thread: a few minutes).

`active` labels the solutions its PRM is unsure of and skips (or pseudo-labels) the rest, so an estimate is as good
as the mistakes it sends to the labeler and the ones it lets through. Per seed: the shipped policy samples word
problems of the PRM's own lengths (4-8 operations, drawn with problem seeds :data:`PROBLEM_SEED` + ..., apart from
every training and RL draw), the PRM scores every step, exact truth labels them (:func:`prm.tasks.step_truth`), and
the problems are split in half: the *fit* half is the seed set whose labels were already bought, the *eval* half is
what `active` chooses from. Estimates (:mod:`prm.labeling.uncertainty`, :mod:`prm.labeling.head_ensemble`):

* ``band``: the PRM's own probabilities, no spread (one scoring pass);
* ``calibrated``: the PRM's logit Platt-scaled on the fit half (:class:`CalibratedUncertainty`, no spread; `active`'s
  default): band with the PRM's probabilities made to mean what the trust rule's 0.1 / 0.5 / 0.9 assume;
* ``ensemble``: ActPRM's 32 heads on the frozen PRM's hidden states and logit, each fit on a bootstrap of the fit
  half (exact labels: the best case for fitted estimates, a backing labeler's are noisier);
* ``dropout`` where the PRM has dropout layers (the log says why not otherwise).

A solution is an estimate's *mistake* when its predicted first error (the first step whose mean P(good) is below
0.5; -1 when none is) is not the true one: what a pseudo-label of it would get wrong. On the eval half, per
estimate: first-error accuracy; ROC-AUC of the unsure score (:meth:`StepBelief.unsure`) for its mistakes; ActPRM's
trust rule at its thresholds (the share trusted, the mistake rate among them, the share of mistakes sent to the
labeler); for the most unsure ``--shares`` labeled, the share of mistakes caught and the mistake rate of the rest;
each with a 95% interval over (seed, problem), and differences between estimates paired per solution. Progress
lines on stderr; the last stdout line is one JSON object: ``estimates`` (name -> metrics), ``differences``,
``per_seed``, ``counts``, ``config``, ``wall_s``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, this folder heads sys.path: the project root goes first.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm.format import first_error_of, labels_from_first_error
from prm.labeling.active import ACTPRM_HIGH, ACTPRM_LOW, ACTPRM_MAX_STD
from prm.labeling.uncertainty import StepBelief, is_trusted
from prm.metrics import problem_bootstrap_ci, roc_auc
from prm.tasks import ArithmeticConfig, ArithmeticProblem, ArithmeticSourceConfig, generate_problems, step_truth

# Problem seeds PROBLEM_SEED + 10 * ops + style: apart from benchmarks/prm_quality.py's (seed * 1_000 + level * 10 +
# style for seeds below 9), prm.rl.data's (1_000 / 2_000 + 100 * seed + ops) and rl_threshold's (8_000 + ops).
PROBLEM_SEED = 9_000
SHARES = (0.1, 0.25, 0.5)


@dataclass(frozen=True)
class Judged:
    """One eval solution under one estimate: its problem (the bootstrap's cluster), the estimate's belief and
    whether the estimate's predicted first error is wrong."""

    cluster: str
    solution_id: str
    belief: StepBelief
    mistake: bool


def problems(levels: Sequence[int], per_level: int) -> list[ArithmeticProblem]:
    """``per_level`` word problems per length, the source's operators and values (the PRM's training task)."""
    source = ArithmeticSourceConfig()
    return [p for ops in levels for k, style in enumerate(source.styles) for p in generate_problems(
        per_level, ArithmeticConfig(n_ops=ops, operators=source.operators, max_value=source.max_value, style=style),
        seed=PROBLEM_SEED + 10 * ops + k)]


def in_fit_half(problem_id: str, seed: int) -> bool:
    """The seeded half of the problems whose labels were bought before `active` chooses (the seed set).

    >>> sum(in_fit_half(f"p{i}", 0) for i in range(1000)) in range(450, 551)
    True
    """
    return hashlib.sha256(f"{seed}:{problem_id}".encode()).digest()[0] < 128


def _order_key(j: Judged) -> tuple[float, str]:
    return (-j.belief.unsure(), hashlib.sha256(j.solution_id.encode()).hexdigest())


def caught_at(judged: Sequence[Judged], share: float) -> float | None:
    """The share of mistakes among the most unsure ``share`` of solutions (ties by a hash of the id).

    >>> b = lambda p: StepBelief((p,), (0.0,))
    >>> js = [Judged("a", "1", b(0.5), True), Judged("a", "2", b(0.99), False), Judged("b", "3", b(0.6), False),
    ...       Judged("b", "4", b(0.97), True)]
    >>> caught_at(js, 0.5), caught_at(js, 1.0)
    (0.5, 1.0)
    """
    mistakes = sum(j.mistake for j in judged)
    if not mistakes:
        return None
    picked = sorted(judged, key=_order_key)[: round(share * len(judged))]
    return sum(j.mistake for j in picked) / mistakes


def left_error(judged: Sequence[Judged], share: float) -> float | None:
    """The mistake rate among the solutions left unlabeled when the most unsure ``share`` are labeled.

    >>> b = lambda p: StepBelief((p,), (0.0,))
    >>> js = [Judged("a", "1", b(0.5), True), Judged("a", "2", b(0.99), False), Judged("b", "3", b(0.6), False),
    ...       Judged("b", "4", b(0.97), True)]
    >>> left_error(js, 0.5), left_error(js, 1.0)
    (0.5, None)
    """
    rest = sorted(judged, key=_order_key)[round(share * len(judged)):]
    return sum(j.mistake for j in rest) / len(rest) if rest else None


def accuracy(judged: Sequence[Judged]) -> float | None:
    """The share of solutions whose predicted first error is the true one."""
    return 1 - sum(j.mistake for j in judged) / len(judged) if judged else None


def trust_rule(judged: Sequence[Judged]) -> dict[str, float | None]:
    """ActPRM's rule at its thresholds: the share trusted (skipped), the mistake rate among them, and the share of
    all mistakes sent to the labeler.

    >>> b = lambda p: StepBelief((p,), (0.0,))
    >>> trust_rule([Judged("a", "1", b(0.95), False), Judged("a", "2", b(0.5), True), Judged("b", "3", b(0.05), True)])
    {'trusted_share': 0.6666666666666666, 'mistakes_among_trusted': 0.5, 'mistakes_sent': 0.5}
    """
    trusted = [is_trusted(j.belief, low=ACTPRM_LOW, high=ACTPRM_HIGH, max_std=ACTPRM_MAX_STD) for j in judged]
    n_trusted, mistakes = sum(trusted), sum(j.mistake for j in judged)
    return {"trusted_share": n_trusted / len(judged) if judged else None,
            "mistakes_among_trusted": (sum(j.mistake for j, t in zip(judged, trusted, strict=True) if t) / n_trusted
                                       if n_trusted else None),
            "mistakes_sent": (sum(j.mistake for j, t in zip(judged, trusted, strict=True) if not t) / mistakes
                              if mistakes else None)}


def _auroc(judged: Sequence[Judged]) -> float | None:
    return roc_auc([j.mistake for j in judged], [j.belief.unsure() for j in judged])


def _clusters(judged: Sequence[Judged]) -> list[list[Judged]]:
    by: dict[str, list[Judged]] = {}
    for j in judged:
        by.setdefault(j.cluster, []).append(j)
    return list(by.values())


def _with_ci(judged: Sequence[Judged], stat: Callable[[Sequence[Judged]], float | None]) -> dict[str, Any]:
    ci = problem_bootstrap_ci(_clusters(judged), lambda cs: stat([j for c in cs for j in c]))
    return {"value": stat(judged), "ci": ci}


def metrics(judged: Sequence[Judged], shares: Sequence[float] = SHARES) -> dict[str, Any]:
    """ROC-AUC, the trust rule and mistakes caught at ``shares``, each with a 95% interval over clusters."""
    rule = trust_rule(judged)
    return {"first_error_acc": _with_ci(judged, accuracy), "auroc": _with_ci(judged, _auroc),
            **{k: _with_ci(judged, lambda js, k=k: trust_rule(js)[k]) for k in rule},
            "caught": {str(s): _with_ci(judged, lambda js, s=s: caught_at(js, s)) for s in shares},
            "left_error": {str(s): _with_ci(judged, lambda js, s=s: left_error(js, s)) for s in shares},
            "n": len(judged)}


# The statistics compared between estimates, paired per solution.
COMPARED: dict[str, Callable[[Sequence[Judged]], float | None]] = {
    "first_error_acc": accuracy, "auroc": lambda js: _auroc(js),
    "caught_0.25": lambda js: caught_at(js, 0.25), "left_error_0.25": lambda js: left_error(js, 0.25),
    "trusted_share": lambda js: trust_rule(js)["trusted_share"],
    "mistakes_among_trusted": lambda js: trust_rule(js)["mistakes_among_trusted"]}
PAIRS = (("calibrated", "band"), ("ensemble", "band"), ("ensemble", "calibrated"))


def paired(a: Sequence[Judged], b: Sequence[Judged], stat: Callable[[Sequence[Judged]], float | None]
           ) -> dict[str, Any]:
    """``stat(a) - stat(b)`` where ``a[i]`` and ``b[i]`` are the same solution under two estimates, with a 95%
    interval resampling clusters (each keeping both estimates' solutions)."""
    pairs = list(zip(a, b, strict=True))
    by: dict[str, list[tuple[Judged, Judged]]] = {}
    for x, y in pairs:
        by.setdefault(x.cluster, []).append((x, y))

    def diff(groups: Sequence[Sequence[tuple[Judged, Judged]]]) -> float | None:
        xs, ys = [x for g in groups for x, _ in g], [y for g in groups for _, y in g]
        u, v = stat(xs), stat(ys)
        return None if u is None or v is None else u - v

    return {"delta": diff([pairs]), "ci": problem_bootstrap_ci(list(by.values()), diff)}


def _log(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), file=sys.stderr, flush=True)


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="arith-policy", help="policy name or folder (writes the samples)")
    p.add_argument("--prm", default="arith-prm", help="the scoring PRM (name or folder)")
    p.add_argument("--levels", type=int, nargs="+", default=[4, 5, 6, 7, 8], help="operations per problem")
    p.add_argument("--per-level", type=int, default=60, help="problems per length")
    p.add_argument("--samples", type=int, default=4, help="policy samples per problem")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                   help="each seed samples, splits the problems and fits the ensemble anew")
    p.add_argument("--heads", type=int, default=32, help="ensemble heads (ActPRM's 32)")
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


def main() -> None:
    args = _args()
    started = time.perf_counter()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.labeling.head_ensemble import HeadEnsemble, step_features
    from prm.labeling.uncertainty import BandUncertainty, CalibratedUncertainty, DropoutUncertainty
    from prm.models import local_model, model_version, resolve_model
    from prm.policy import sample_solutions
    from prm.rewards import step_rewards_batch
    from prm.scoring import load_prm

    torch.set_num_threads(args.threads)
    policy, prm = Path(resolve_model(args.policy)), local_model(args.prm)
    drawn = problems(args.levels, args.per_level)
    tokenizer = AutoTokenizer.from_pretrained(str(policy))
    model = AutoModelForCausalLM.from_pretrained(str(policy))
    scorer = load_prm(prm)
    try:
        DropoutUncertainty(2, 0).beliefs(scorer, [(drawn[0].question, ["1 + 1 = 2"])])
        dropout = "applicable (not run)"
    except (TypeError, ValueError) as exc:
        dropout = f"not applicable: {exc}"
    names = ("band", "calibrated", "ensemble")
    pooled: dict[str, list[Judged]] = {n: [] for n in names}
    per_seed, counts = [], {"samples": 0, "fit_solutions": 0, "eval_solutions": 0}
    for seed in args.seeds:
        t0 = time.perf_counter()
        texts = sample_solutions(model, tokenizer, drawn, n_samples=args.samples, temperature=args.temperature,
                                 seed=seed)
        flat = [(p, j, t) for p, group in zip(drawn, texts, strict=True) for j, t in enumerate(group)]
        rewards = step_rewards_batch(scorer, [(p.question, t) for p, _, t in flat])
        rows = [(p, j, r) for (p, j, _), r in zip(flat, rewards, strict=True) if r.steps]
        items = [(p.question, r.steps) for p, _, r in rows]
        truth = [first_error_of(step_truth(p, r.steps)) for p, _, r in rows]
        features = step_features(scorer, items)
        fit = [in_fit_half(p.problem_id, seed) for p, _, _ in rows]
        fit_x = [f for f, k in zip(features, fit, strict=True) if k]
        fit_y = [labels_from_first_error(len(r.steps), t) for (_, _, r), t, k in zip(rows, truth, fit, strict=True)
                 if k]
        held = [i for i, k in enumerate(fit) if not k]
        held_x = [features[i] for i in held]
        band = BandUncertainty().beliefs(scorer, [items[i] for i in held])
        fit_items = [items[i] for i, k in enumerate(fit) if k]
        calibrated = CalibratedUncertainty(fit_items, fit_y)
        beliefs = {"band": band, "calibrated": calibrated.beliefs(scorer, [items[i] for i in held]),
                   "ensemble": HeadEnsemble(heads=args.heads, seed=seed).fit(fit_x, fit_y).beliefs_of(held_x)}
        judged: dict[str, list[Judged]] = {n: [] for n in names}
        for n in names:
            for i, belief in zip(held, beliefs[n], strict=True):
                p, j, _ = rows[i]
                judged[n].append(Judged(f"{seed}/{p.problem_id}", f"{seed}/{p.problem_id}/{j}", belief,
                                        belief.first_error != truth[i]))
            pooled[n] += judged[n]
        counts["samples"] += len(flat)
        counts["fit_solutions"] += sum(fit)
        counts["eval_solutions"] += len(held)
        seed_row = {"seed": seed, "eval": len(held), "wrong_by_truth": sum(truth[i] >= 0 for i in held),
                    **{f"{stat}_{n}": COMPARED[stat](judged[n]) for stat in ("first_error_acc", "auroc",
                                                                              "caught_0.25") for n in names},
                    "calibration": calibrated.fitted, "s": round(time.perf_counter() - t0, 1)}
        per_seed.append(seed_row)
        _log(seed_row)
    result = {
        "estimates": {n: metrics(pooled[n]) for n in names} | {"dropout": dropout},
        "differences": {f"{a}-{b}": {stat: paired(pooled[a], pooled[b], fn) for stat, fn in COMPARED.items()}
                        for a, b in PAIRS},
        "per_seed": per_seed, "counts": counts,
        "config": {**vars(args), "prm_version": model_version(prm), "policy_version": model_version(policy),
                   "problem_seed": PROBLEM_SEED, "actprm": [ACTPRM_LOW, ACTPRM_HIGH, ACTPRM_MAX_STD]},
        "wall_s": round(time.perf_counter() - started, 1)}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
