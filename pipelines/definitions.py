"""The Dagster code location: ``dagster dev`` loads ``defs`` from here (see pyproject's [tool.dagster])."""

import dagster as dg

from assets.checks import CHECKS
from assets.flywheel import FLYWHEEL_ASSETS
from assets.generation import policy_model, rollouts, solutions
from assets.labeling import label_audit, mc_labels, omegaprm_labels, progress_labels
from assets.prm import label_source_comparison, prm_evaluation, prm_model, prm_training_set
from assets.problems import problems
from assets.resources import FlywheelResource, GenerationResource, WarehouseResource
from assets.rl import rl_run
from assets.search import search_comparison
from assets.verification import consensus_labels, formal_verifications, judgments
from pipelines.jobs import flywheel_job, prm_job, refresh_job, rl_job, search_job, warm_start_job
from pipelines.maintenance import maintenance_job, weekly_maintenance
from pipelines.recovery import dead_run_sensor
from pipelines.schedules import flywheel_schedule, nightly_refresh
from pipelines.sensors import inbox_sensor
from prm.models.constants import JUDGE_NAME

defs = dg.Definitions(
    assets=[problems, policy_model, solutions, rollouts, mc_labels, omegaprm_labels, progress_labels, label_audit,
            formal_verifications, judgments, consensus_labels, prm_training_set, prm_model, prm_evaluation,
            label_source_comparison, rl_run, search_comparison, *FLYWHEEL_ASSETS],
    asset_checks=CHECKS,
    jobs=[warm_start_job, refresh_job, prm_job, rl_job, search_job, flywheel_job, maintenance_job],
    schedules=[nightly_refresh, flywheel_schedule, weekly_maintenance],
    sensors=[inbox_sensor, dead_run_sensor],
    resources={
        "warehouse": WarehouseResource(),
        "generation": GenerationResource(),  # the policy being labeled
        # SmolLM2 fine-tuned to judge (the shipped adapter merged in; prm.judge_training). A served judge is one
        # config away: backend "openai", base_url and model (README, "Step labels").
        "judge": GenerationResource(model=JUDGE_NAME),
        "flywheel": FlywheelResource(),  # what every flywheel round shares
    },
    # One process per run: the generation engine starts once and serves every asset of the run.
    executor=dg.in_process_executor,
)
