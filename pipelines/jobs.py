"""Jobs: the warm start of the default policy, and the refresh of one (day, source) partition."""

from __future__ import annotations

import dagster as dg

from assets.partitions import PARTITIONS, ROUNDS
from warehouse.methods import opt_in_label_assets

# The policy is not partitioned: it is trained once (cached by config) and serves every partition.
warm_start_job = dg.define_asset_job("warm_start", dg.AssetSelection.assets("policy_model"),
                                     description="Train (or reuse) the warm-started default policy.")

# Every partitioned asset, in dependency order; its checks run in the same run and block on failure. The label
# assets of opt-in methods (warehouse.methods.opt_in_label_assets: `active`, which needs a trained PRM) stay out.
refresh_job = dg.define_asset_job(
    name="refresh",
    selection=(dg.AssetSelection.all() - dg.AssetSelection.assets("policy_model", *opt_in_label_assets())
               - dg.AssetSelection.groups("prm", "rl", "search", "flywheel")),
    partitions_def=PARTITIONS,
    description="Materialize the whole pipeline for one (day, source) partition.",
)

# The model half over everything labeled so far (not partitioned): training set, PRM, evaluation, comparison.
prm_job = dg.define_asset_job("prm", dg.AssetSelection.groups("prm"), description="Train and evaluate a PRM on "
                              "the warehouse's labels, and compare label sources.")

# Reward arms on the latest PRM (GRPO, its own pool): see prm.rl and benchmarks/rl.py for the full comparison.
rl_job = dg.define_asset_job("rl", dg.AssetSelection.assets("rl_run"),
                             description="Short GRPO comparison of the reward arms on the latest PRM.")

# Test-time search with the latest PRM (the engine pool): see prm.search and benchmarks/search.py.
search_job = dg.define_asset_job("search", dg.AssetSelection.assets("search_comparison"), description="Best-of-N, "
                                 "majority vote, beam search and DVTS with the latest PRM at equal token budgets.")

# One flywheel round (a partition of ROUNDS): samples, labels, PRM, RL; the blocking checks stop a bad round.
flywheel_job = dg.define_asset_job("flywheel", dg.AssetSelection.groups("flywheel"), partitions_def=ROUNDS,
                                   description="One round of the data flywheel: sample the latest policy, label "
                                   "with its rollouts, retrain the PRM, resume RL with it.")
