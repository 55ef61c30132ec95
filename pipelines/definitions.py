"""The Dagster code location: ``dg dev`` loads ``defs`` from here (see pyproject's [tool.dagster]).

Assets are collected from the asset modules (:data:`ASSET_MODULES`) and checks from those and ``assets/checks.py``
(:data:`CHECKS`), so a new asset or check is written once, in its module; a new asset module is one more entry there.
"""

from types import ModuleType

import dagster as dg

import assets.checks
import assets.flywheel
import assets.generation
import assets.labeling
import assets.prm
import assets.problems
import assets.processbench
import assets.rl
import assets.search
import assets.verification
from assets.resources import FlywheelResource, GenerationResource, WarehouseResource
from pipelines.jobs import flywheel_job, prm_job, refresh_job, rl_job, search_job, warm_start_job
from pipelines.maintenance import maintenance_job, weekly_maintenance
from pipelines.recovery import dead_run_sensor
from pipelines.schedules import flywheel_schedule, nightly_refresh
from pipelines.sensors import inbox_sensor
from prm.models import JUDGE_NAME

# Every module that defines assets, upstream first: the order of the docs' asset graph and assets page.
ASSET_MODULES = (assets.problems, assets.generation, assets.labeling, assets.verification, assets.prm,
                 assets.processbench, assets.rl, assets.search, assets.flywheel)


def assets_of(modules: tuple[ModuleType, ...]) -> list[dg.AssetsDefinition]:
    """The assets each module defines, module by module in definition order (``dg.load_assets_from_modules``
    finds the same set, ordered by name); checks and assets imported from another module are left out."""
    found = dg.load_assets_from_modules(modules)
    order = [v for m in modules for v in vars(m).values()
             if isinstance(v, dg.AssetsDefinition) and not isinstance(v, dg.AssetChecksDefinition)
             and v.op.compute_fn.decorated_fn.__module__ == m.__name__]
    if {a.key for a in order} != {a.key for a in found}:
        raise RuntimeError(f"asset modules define {sorted(a.key.to_user_string() for a in order)} but Dagster "
                           f"finds {sorted(a.key.to_user_string() for a in found)} in them; define each asset in a "
                           "module of ASSET_MODULES with @dg.asset")
    return order


# Every asset check: the decorated ones and the lists of factory-made ones, module by module.
CHECKS = dg.load_asset_checks_from_modules([assets.checks, *ASSET_MODULES])

defs = dg.Definitions(
    assets=assets_of(ASSET_MODULES),
    asset_checks=CHECKS,
    jobs=[warm_start_job, refresh_job, prm_job, rl_job, search_job, flywheel_job, maintenance_job],
    schedules=[nightly_refresh, flywheel_schedule, weekly_maintenance],
    sensors=[inbox_sensor, dead_run_sensor],
    resources={
        "warehouse": WarehouseResource(),
        "generation": GenerationResource(),  # the policy being labeled
        # SmolLM2 fine-tuned to judge (the shipped adapter merged in; prm.judge_training). A served judge is one
        # config away: backend "openai", base_url and model (docs/concepts/labels.md, "`judge` (LLM judge)").
        "judge": GenerationResource(model=JUDGE_NAME),
        "flywheel": FlywheelResource(),  # what every flywheel round shares
    },
    # One process per run: the generation engine starts once and serves every asset of the run.
    executor=dg.in_process_executor,
)
