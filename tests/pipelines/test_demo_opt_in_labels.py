"""The demo labels with the opt-in methods after its runs (adaptive MC and active labels from the shipped PRM), so
its label audit shows them beside MC's and OmegaPRM's, while the refresh job and the recipe's vocabulary stay as
they are."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from assets.labeling import method_config
from assets.partitions import register_sources
from pipelines.demo import DEMO_OPT_IN_LABELS, demo_recipe, labels_opt_in, opt_in_run_config, run_opt_in_labels
from pipelines.jobs import refresh_job
from pipelines.recipe import parse_recipe
from pipelines.run_config import recipe_selection
from prm.labeling import ActiveConfig, MCConfig
from prm.models import ARITH_PRM_NAME
from warehouse.methods import label_assets, opt_in_label_assets, recipe_label_assets

DAY = "2026-11-20"


def test_the_demo_adds_adaptive_mc_and_active_to_the_default_recipe_only() -> None:
    recipe = demo_recipe()
    assert labels_opt_in(recipe) and recipe_selection(recipe, "refresh") is None  # the whole refresh job, then these
    assert {m for a in DEMO_OPT_IN_LABELS for m in label_assets()[a]} == {"mc_adaptive", "active"}
    assert set(DEMO_OPT_IN_LABELS) <= set(opt_in_label_assets())
    assert not {"mc_adaptive", "active"} & set(recipe_label_assets())  # not in the recipe's vocabulary
    from pipelines.definitions import defs

    in_refresh = refresh_job.selection.resolve(defs.resolve_asset_graph())
    assert not {dg.AssetKey(a) for a in DEMO_OPT_IN_LABELS} & in_refresh
    # another policy's steps are not the shipped PRM's to score, and without MC there is no rollout cache to reuse
    assert not labels_opt_in(parse_recipe({"policy": {"model": "smollm2-135m-instruct"}}))
    assert not labels_opt_in(parse_recipe({"labels": {"methods": ["omegaprm"]}, "prm": {"label_method": "omegaprm"}}))


def test_the_opt_in_config_reaches_the_labelers_and_reuses_mcs_rollouts() -> None:
    ops = opt_in_run_config(demo_recipe())["ops"]
    adaptive = method_config("mc_adaptive")(**ops["mc_adaptive_labels"]["config"]).to_library()
    active = method_config("active")(**ops["active_labels"]["config"]).to_library()
    fixed = MCConfig()  # the demo's MC labels: N rollouts of every prefix, stored
    assert adaptive == MCConfig(adaptive=True, adaptive_max=fixed.n_rollouts) and adaptive.step_max <= fixed.n_rollouts
    assert active == ActiveConfig(prm=ARITH_PRM_NAME, backing="mc", rollouts=fixed.n_rollouts, max_share=0.25,
                                  pseudo_labels=True)  # the solutions the PRM is sure of get its labels: a row each
    assert active.backing_labeler("active").config == fixed  # the MC labels' own rollouts, a quarter of solutions


def test_the_opt_in_run_materializes_its_assets_and_the_audit(project_home: Path) -> None:
    """On an empty partition: the assets' own job takes the selection, the partition and the config (no engine)."""
    recipe = demo_recipe()
    with dg.DagsterInstance.get() as instance:
        register_sources(instance, [recipe.source])
    result = run_opt_in_labels(recipe, DAY)
    assert result.success
    assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} == \
        {*DEMO_OPT_IN_LABELS, "label_audit"}
