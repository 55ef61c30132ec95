"""The full RL comparison: TRL GRPO on the default policy, one arm per reward, the same budget per arm.

Run: ``.venv/bin/python benchmarks/rl.py [--prm DIR] [--steps 100]`` (CPU: ~40 min on a shared 2-core box: ~18 for the
truth PRM, ~7 per arm; on a GPU machine the same script trains in bf16 and generates with vLLM where it imports).

Arms (prm.rl.ARMS; default the issue's five): outcome only (Math-Verify), PRM min-form + outcome, ``process``:
DeepSeekMath's process-supervised GRPO (per-token advantages from the group-normalised step scores, mixed with
the outcome advantage; prm.rl.process_grpo), ``prime``: PRIME's online implicit PRM started from the LM-head PRM,
and ``prime_plain``: the same started from the policy (prm.rl.prime), with the same steps, problems and held-out
set. ``--arms`` picks others: ``prm_sum`` (the naive summed form), ``prm_min_prof`` (PROF-filtered),
``prm_soft_min`` (PURE's soft min), ``process_pure`` (PURE's soft min-form credit with a per-token baseline),
``process_clip_delta`` (Clip-Delta credit), and the arms that use the PRM only where it can be checked
(prm.rl.verified_arms): ``first_error`` (VPPO: the PRM's first error splits each completion, the verified prefix
rewarded, the rest penalised), ``progrs`` (PROGRS: wrong answers' PRM scores centred among themselves and added to
the outcome advantage) and ``flawed_penalty`` (FAPO: a right answer with a wrong step earns ``1 - --flawed-penalty``).
``--error-threshold T``: the P(good) below which first_error and flawed_penalty read a step as the PRM's error
(default RLRunConfig's, the PRM's class boundary 0.5; benchmarks/rl_threshold.py chooses one on validation problems;
a run at another threshold gets its own key, so it never reuses a result of the default's).
Training problems have 9-10 operations (the policy was trained on
1-8) plus an equal share of 6-8; held-out problems are 6-10, measured before, after and every ``--eval-every``
steps; a run is marked ``hacked`` when its steps per completion move > 30% while held-out accuracy falls, when
held-out accuracy falls below its start's 95% interval while the training reward rises, or when the held-out
step-error rate rises more than 0.05 (prm.rl.curve.hacked_at). Every held-out point also measures flawed positives
(right answers with a wrong step by exact truth).

Three seeds for benchmarks/rl_seeds.py: ``for s in 0 1 2; do .venv/bin/python benchmarks/rl.py --seed $s --out
models/rl/benchmark-seed$s; done``.

The PRM: ``--prm DIR`` (e.g. ``models/prm``, the ``prm_model`` asset's), else one trained here on exact
step truth of the policy's own samples (``--truth-prm-steps`` optimizer steps, kept under ``<out>/truth-prm``
and reused while its card matches): the best labels this task allows, so the comparison is about the reward's
form, not label noise, and does not change when the pipeline retrains its PRM on a small demo set.

Each stage prints a line; the last stdout line is one JSON object: ``arms`` (per arm, ``ArmResult.summary()``:
held-out accuracy before and after with 95% intervals ``acc_before_ci``/``acc_after_ci`` and the paired
``acc_gain_ci`` of after minus before, all bootstrapped over held-out problems; per-step error, steps per
completion and length before and after, the PRM's lowest step score, the training reward at the start and end,
train and wall seconds, ``hacked``/``hacked_at`` and the held-out ``curve`` of [step, accuracy]),
``steps_per_arm``, ``prm``, ``policy``, ``plot``, ``wall_s``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from prm.format import first_error_of, labels_from_first_error, split_steps
from prm.models import local_model, model_cache_dir, model_version, resolve_model
from prm.rl import ARMS, OUTCOME, PRIME, PRIME_PLAIN, PRM_MIN, PROCESS, RLRunConfig, compare_arms
from prm.tasks import ArithmeticConfig, generate_problems, step_truth

TRUTH_PRM_SEED = 7_000  # problem seeds of the truth PRM's data, apart from prm.rl.data's train/eval seeds
VAL = "val"  # every fifth problem's samples: the truth PRM's validation rows (step AUC in its card)
POLICY_STAMP = "policy_version.txt"  # the policy a truth PRM was trained from (its reuse key, with the config)


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="arith-policy", help="policy name or folder")
    p.add_argument("--prm", default=None, help="PRM: arith-prm, models/prm or a folder (default: a PRM trained here "
                   "on exact step truth)")
    p.add_argument("--out", default=str(model_cache_dir() / "rl" / "benchmark"), help="output folder")
    p.add_argument("--arms", nargs="+", default=[OUTCOME, PRM_MIN, PROCESS, PRIME, PRIME_PLAIN], choices=tuple(ARMS))
    p.add_argument("--steps", type=int, default=RLRunConfig().steps, help="GRPO steps per arm (same for all)")
    p.add_argument("--learning-rate", type=float, default=RLRunConfig().learning_rate)
    p.add_argument("--eval-problems", type=int, default=RLRunConfig().eval_problems, help="per difficulty")
    p.add_argument("--eval-samples", type=int, default=RLRunConfig().eval_samples)
    p.add_argument("--eval-every", type=int, default=20, help="held-out accuracy every N steps (0: before and "
                   "after only): the learning curve and the hack rule")
    p.add_argument("--truth-prm-steps", type=int, default=None,
                   help="optimizer steps of the fallback truth PRM (default: PRMTrainConfig's, the LM head's 400)")
    p.add_argument("--flawed-penalty", type=float, default=RLRunConfig().flawed_penalty,
                   help="flawed_penalty arm: a right answer with a wrong step earns 1 - this (FAPO's 0.5 by default)")
    p.add_argument("--error-threshold", type=float, default=RLRunConfig().error_threshold,
                   help="first_error and flawed_penalty arms: a step the PRM scores below this P(good) is an error "
                   "(default the PRM's class boundary; choose one with benchmarks/rl_threshold.py)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fresh", action="store_true", help="rerun arms already finished in --out under the same "
                   "policy, PRM and config (by default they are read back, so a killed run continues)")
    return p.parse_args()


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def truth_prm(policy: Path, out: Path, steps: int | None, seed: int) -> Path:
    """A PRM trained on exact step truth (first-error convention) of the policy's samples on 6-10 operations;
    an earlier one in ``out`` is reused when its card holds the same training config and base policy."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.policy import sample_solutions
    from prm.training import PRMTrainConfig, read_prm_card, train_prm

    config = PRMTrainConfig(base_model=str(policy), eval_steps=10_000, save_steps=10_000, seed=seed,
                            **({} if steps is None else {"max_steps": steps}))
    if (out / "config.json").is_file() and (out / POLICY_STAMP).is_file():
        same_policy = (out / POLICY_STAMP).read_text() == model_version(policy)
        if same_policy and read_prm_card(out).get("config") == json.loads(json.dumps(asdict(config))):
            _emit({"truth_prm": str(out), "reused": True})
            return out

    problems = [p for ops in range(6, 11) for p in generate_problems(
        48, ArithmeticConfig(n_ops=ops, operators="+-", max_value=9, style="word"), seed=TRUTH_PRM_SEED + seed + ops)]
    tokenizer = AutoTokenizer.from_pretrained(str(policy))
    model = AutoModelForCausalLM.from_pretrained(str(policy))
    samples = sample_solutions(model, tokenizer, problems, n_samples=4, temperature=1.0, seed=seed)
    rows = []
    for i, (problem, texts) in enumerate(zip(problems, samples, strict=True)):
        for text in texts:
            steps_ = split_steps(text)
            if steps_:
                first = first_error_of(step_truth(problem, steps_))
                rows.append({"prompt": problem.question, "completions": steps_, "split": VAL if i % 5 == 0 else "train",
                             "labels": labels_from_first_error(len(steps_), first)})
    bad = sum(not all(r["labels"]) for r in rows)
    _emit({"truth_prm_rows": len(rows), "with_a_wrong_step": bad})
    folder = train_prm(rows, out, config)
    (folder / POLICY_STAMP).write_text(model_version(policy))
    final = read_prm_card(folder).get("final_metrics") or {}
    _emit({"truth_prm_val_step_auc": final.get("eval_step_auc"), "truth_prm_val_step_accuracy":
           final.get("eval_step_accuracy")})
    return folder


def main() -> None:
    args = _args()
    started = time.perf_counter()
    policy = Path(resolve_model(args.policy))
    out = Path(args.out)
    if args.prm:
        prm = local_model(args.prm)
        if not (prm / "config.json").is_file():
            sys.exit(f"Error: no PRM at {args.prm} - pass arith-prm, models/prm or a folder prm.training.train_prm "
                     "wrote")
    else:
        prm = truth_prm(policy, out / "truth-prm", args.truth_prm_steps, args.seed)
    _emit({"policy": model_version(policy), "prm": model_version(prm)})
    config = RLRunConfig(arms=tuple(args.arms), steps=args.steps, learning_rate=args.learning_rate,
                         eval_problems=args.eval_problems, eval_samples=args.eval_samples, seed=args.seed,
                         eval_every=args.eval_every, flawed_penalty=args.flawed_penalty,
                         error_threshold=args.error_threshold)
    comparison = compare_arms(policy, prm, config, out, resume=not args.fresh,
                              progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(comparison.markdown, flush=True)
    _emit({"arms": {row.pop("arm"): row for row in comparison.table()}, "steps_per_arm": config.steps,
           "prm": model_version(prm), "policy": model_version(policy), "plot": str(comparison.plot),
           "config": config.to_dict(), "wall_s": round(time.perf_counter() - started, 1)})


if __name__ == "__main__":
    main()
