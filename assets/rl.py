"""The RL asset: a short GRPO comparison of the reward arms on the latest PRM (the full one is benchmarks/rl.py)."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
from pathlib import Path

import dagster as dg

from assets.config_base import Mirror, derive
from assets.prm import trained_prm
from assets.resources import WarehouseResource
from prm.models import ARITH_PRM_NAME, local_model, model_cache_dir, model_version, resolve_model
from prm.rl import RLRunConfig, compare_arms, latest_hacked, latest_run_metrics, split_pool, warehouse_problems
from prm.training import SHIPPED_PRM_DIR, PRMArtifacts, verify_shipped_prm
from warehouse import today


class RLAssetConfig(derive(Mirror(
        RLRunConfig,
        # A short run: a minute or two on a CPU, enough to see every arm move (the library's defaults are the full
        # run of benchmarks/rl.py). The difficulties are those of the built-in arith source (2, 4 and 8 gold steps).
        defaults={
            "steps": 6,  # GRPO steps per arm, the same for every arm
            "batch_size": 16,  # completions per step (4 prompts x 4)
            "num_generations": 4,
            "train_ops": [8],  # the longest the arith source writes, where the policy is right about half the time
            "anchor_ops": [4],
            "eval_ops": [2, 4, 8],
            "eval_problems": 4,  # per difficulty, held out of training (a day of the arith source has 8 per difficulty)
            "eval_samples": 2,
        },
        fixed={"save_policy": False},  # the asset reports the arms' metrics; their policies are not kept
))):
    """A short run of prm.rl.RLRunConfig (its fields) on the warehouse's problems."""

    policy: str = "arith-policy"  # the warm-started policy (prm.models.resolve_model)
    # The warehouse source of the problems (generated arithmetic, GSM8K, MATH, a user's file: any with a gold
    # answer, which the reward and the held-out accuracy grade against); None = every source. The difficulties
    # (train_ops, anchor_ops, eval_ops) are gold step counts (problems.n_gold_steps): set them to ones it holds.
    source: str | None = None
    # The reward PRM: "trained" (the prm_model asset's), "shipped" or "arith-prm" (prm/shipped/arith-prm,
    # digest-checked with its reference policy), or anything prm.models.local_model resolves (a folder, a hub id).
    prm: str = "trained"


def _reward_prm(choice: str) -> Path:
    """The PRM folder ``choice`` names; a Failure that says what to do when it is missing or fails its check."""
    if choice == "trained":
        return trained_prm(PRMArtifacts.default())
    if choice in ("shipped", ARITH_PRM_NAME):
        try:
            verify_shipped_prm(SHIPPED_PRM_DIR)
        except ValueError as exc:
            raise dg.Failure(str(exc)) from exc
        return SHIPPED_PRM_DIR
    try:
        folder = local_model(choice)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(f"rl_run.prm={choice!r}: {exc}") from exc
    if not (folder / "config.json").is_file():
        raise dg.Failure(f"rl_run.prm={choice!r} is neither 'trained', 'shipped', {ARITH_PRM_NAME!r} nor a PRM folder "
                         "(a folder holding config.json and the weights)")
    return folder


@dg.asset(group_name="rl", kinds={"pytorch"}, pool="rl", deps=["prm_model", "problems"],
          description="TRL GRPO on the warm-started policy over the warehouse's problems with a gold answer, one arm "
          "per reward (outcome only, PRM min-form + outcome, PRM summed + outcome) with the same budget: held-out "
          "accuracy, per-step error (generated arithmetic only), length and steps per completion before and after, "
          "the reward curves.")
def rl_run(context: dg.AssetExecutionContext, config: RLAssetConfig,
           warehouse: WarehouseResource) -> dg.MaterializeResult:
    prm_folder = _reward_prm(config.prm)
    policy = resolve_model(config.policy)
    out = model_cache_dir() / "rl" / context.run_id
    run_config = config.to_library()
    try:
        problems = warehouse_problems(warehouse.get().root, config.source)
        split_pool(problems, run_config)  # a pool without the config's difficulties fails here, before any model
    except ValueError as exc:
        raise dg.Failure(str(exc)) from exc
    comparison = compare_arms(policy, prm_folder, run_config, out, progress=context.log.info, problems=problems)
    rows = comparison.metric_rows()
    warehouse.get().write("rl_metrics", rows, source=config.source or "all", day=today(), run_id=context.run_id,
                          writer="rl_run")
    context.log.info("RL comparison\n" + comparison.markdown)
    headline = {f"{r['arm']}/acc_{when}": r[f"acc_{when}"] for r in comparison.table() for when in ("before", "after")}
    return dg.MaterializeResult(metadata={
        "comparison": dg.MetadataValue.md(comparison.markdown),
        "plot": dg.MetadataValue.path(str(comparison.plot)),
        "path": dg.MetadataValue.path(str(out)),
        "policy": model_version(policy), "prm": model_version(prm_folder),
        "steps_per_arm": config.steps, "dagster/row_count": len(rows),
        **headline,
    })


@dg.asset_check(asset=rl_run, blocking=True,
                description="Every arm of the latest run has held-out accuracy before and after and a reward point "
                "for every step up to the last (an arm that stopped early did not get the same budget).")
def rl_arms_complete(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = latest_run_metrics(warehouse.get())
    arms = sorted({r[0] for r in rows})
    incomplete = []
    for arm in arms:
        evals = sorted(r[1] for r in rows if r[0] == arm and r[2] == "eval/answer_accuracy")
        curve = {r[1] for r in rows if r[0] == arm and r[2] == "train/reward"}
        if len(evals) != 2 or evals[0] != 0 or curve != set(range(1, evals[1] + 1)):
            incomplete.append(arm)
    steps = {r[1] for r in rows if r[2] == "eval/answer_accuracy" and r[1] > 0}
    passed = bool(arms) and not incomplete and len(steps) == 1
    return dg.AssetCheckResult(passed=passed, metadata={"arms": len(arms), "incomplete": len(incomplete),
                                                        "budgets": len(steps)},
                               description=f"arms {arms}; incomplete {incomplete}; steps per arm {sorted(steps)}")


@dg.asset_check(asset=rl_run, description="RL raised held-out answer accuracy over the starting policy in at least "
                "one arm (the issue's acceptance bar; a short demo run may miss it, so this only warns).")
def rl_improves_some_arm(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = latest_run_metrics(warehouse.get())
    before = {r[0]: r[3] for r in rows if r[2] == "eval/answer_accuracy" and r[1] == 0}
    after = {r[0]: r[3] for r in rows if r[2] == "eval/answer_accuracy" and r[1] > 0}
    gains = {arm: after[arm] - before[arm] for arm in before if arm in after}
    best = max(gains, key=gains.get) if gains else None
    return dg.AssetCheckResult(passed=bool(gains) and gains[best] > 0, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"best_gain": gains[best] if best else 0.0, "arms": len(gains)},
                               description=f"best arm {best}: held-out accuracy {gains[best]:+.3f}" if best
                               else "no arm has before and after accuracy")


@dg.asset_check(asset=rl_run, description="No arm of the latest run was marked hacked: steps per completion moved "
                "more than 30% from the start while held-out accuracy fell (prm.rl.curve.hacked_at). Warns only: "
                "a hacked arm is a finding about its reward, not a broken run.")
def rl_no_arm_hacked(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    hacked = latest_hacked(warehouse.get())
    flagged = {arm: step for arm, step in hacked.items() if step is not None}
    return dg.AssetCheckResult(passed=bool(hacked) and not flagged, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"arms": len(hacked), "hacked": len(flagged)},
                               description=(", ".join(f"{arm} hacked at step {step}" for arm, step in
                                                      sorted(flagged.items())) or "no arm hacked") if hacked
                               else "the latest run has no run/hacked rows")
