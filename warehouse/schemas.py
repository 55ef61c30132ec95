"""Versioned Arrow schemas of every warehouse table.

Each table has one row type with stable ids and provenance columns. The partition columns (``source``,
``day``) are part of each logical schema; in the Delta table they, and the ``writer`` of the rows, are Delta
partition values, not columns of the Parquet files, so a nightly refresh adds a new ``day`` partition without
rewriting history.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from warehouse.constants import WRITER_COLUMN
from warehouse.methods import method_names

# Version 2: ``steps`` carry their character span in the solution text, ``solutions`` their prompt version.
SCHEMA_VERSION = 2
PARTITION_COLUMNS: tuple[str, ...] = ("source", "day")

_PARTITION = [
    pa.field("source", pa.string(), nullable=False),  # dataset or generator name, e.g. "arith"
    pa.field("day", pa.string(), nullable=False),  # YYYY-MM-DD of the refresh that produced the row
]
_PROVENANCE = [
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
]


def _schema(*fields: pa.Field) -> pa.Schema:
    return pa.schema([*fields, *_PROVENANCE, *_PARTITION], metadata={"schema_version": str(SCHEMA_VERSION)})


PROBLEMS = _schema(
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("task", pa.string(), nullable=False),  # arith_chain | arith_word | gsm8k | math | logic
    pa.field("split", pa.string(), nullable=False),
    pa.field("question", pa.string(), nullable=False),
    pa.field("gold_answer", pa.string(), nullable=False),
    pa.field("gold_solution", pa.string()),
    pa.field("n_gold_steps", pa.int32()),
    pa.field("difficulty", pa.string()),  # free-form knob summary, e.g. "ops=4 range=1-20"
    pa.field("meta_json", pa.string()),  # task-specific ground truth (intermediate values, rules)
    pa.field("seed", pa.int64()),
)

SOLUTIONS = _schema(
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("sample_idx", pa.int32(), nullable=False),
    pa.field("text", pa.string(), nullable=False),
    pa.field("n_steps", pa.int32(), nullable=False),
    pa.field("final_answer", pa.string()),
    pa.field("is_correct", pa.bool_()),  # final answer graded against gold; null when ungradable
    pa.field("first_error_truth", pa.int32()),  # exact first wrong step (generated tasks), -1 = none
    pa.field("finish_reason", pa.string()),
    pa.field("status", pa.string(), nullable=False),  # ok | error
    pa.field("error", pa.string()),
    pa.field("model", pa.string(), nullable=False),
    pa.field("prompt_version", pa.string()),  # prm.format.prompt_version of the prompt the model saw
    pa.field("temperature", pa.float32()),
    pa.field("seed", pa.int64()),
    pa.field("prompt_tokens", pa.int32()),
    pa.field("completion_tokens", pa.int32()),
)

STEPS = _schema(
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),  # 0-based, as in ProcessBench
    pa.field("text", pa.string(), nullable=False),  # == solutions.text[char_start:char_end]
    pa.field("char_start", pa.int32(), nullable=False),  # span of the step in the solution text (prm.format)
    pa.field("char_end", pa.int32(), nullable=False),
    pa.field("is_correct_truth", pa.bool_()),  # exact truth where the task defines one, else null
)

ROLLOUTS = _schema(
    pa.field("rollout_id", pa.string(), nullable=False),
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),  # prefix = steps 0..step_idx
    pa.field("prefix_hash", pa.string(), nullable=False),  # shares rollouts across labelers
    pa.field("rollout_idx", pa.int32(), nullable=False),
    pa.field("text", pa.string(), nullable=False),
    pa.field("final_answer", pa.string()),
    pa.field("is_correct", pa.bool_()),
    pa.field("finish_reason", pa.string()),
    pa.field("model", pa.string(), nullable=False),
    pa.field("seed", pa.int64()),
    pa.field("completion_tokens", pa.int32()),
)

STEP_LABELS = _schema(
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),
    pa.field("method", pa.string(), nullable=False),  # mc | omegaprm | sympy | z3 | judge | consensus
    pa.field("soft_label", pa.float32()),  # e.g. MC estimate in [0, 1]
    pa.field("hard_label", pa.bool_()),  # True = step is good; null = unverifiable
    pa.field("status", pa.string(), nullable=False),  # labeled | by_convention | unverifiable | pseudo
    pa.field("n_rollouts", pa.int32()),
    pa.field("n_correct", pa.int32()),
    pa.field("first_error", pa.int32()),  # per-solution first wrong step found by the method, -1 = none
    pa.field("labeler_version", pa.string(), nullable=False),
    pa.field("params_json", pa.string()),
    pa.field("cost_rollouts", pa.int32()),
    pa.field("cost_tokens", pa.int64()),
)

JUDGMENTS = _schema(
    pa.field("judgment_id", pa.string(), nullable=False),
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("model", pa.string(), nullable=False),
    pa.field("n_votes", pa.int32(), nullable=False),
    pa.field("n_abstain", pa.int32(), nullable=False),
    pa.field("votes_json", pa.string()),  # the parsed first-error index of every vote (null = abstain)
    pa.field("first_error", pa.int32()),  # majority earliest wrong step, -1 = none, null = no majority
    pa.field("agreement", pa.float32()),  # share of counted votes that agree with the majority
    pa.field("cost_tokens", pa.int64()),
)

VERIFICATIONS = _schema(
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),
    pa.field("verifier", pa.string(), nullable=False),  # sympy | z3
    pa.field("status", pa.string(), nullable=False),  # correct | incorrect | unverifiable
    pa.field("detail", pa.string()),  # failing equation, or why the step could not be checked
    pa.field("elapsed_ms", pa.float32()),
)

LABEL_AUDIT = _schema(
    pa.field("method", pa.string(), nullable=False),
    pa.field("n_solutions", pa.int32(), nullable=False),
    pa.field("n_steps", pa.int32(), nullable=False),
    pa.field("step_accuracy", pa.float32()),
    pa.field("step_f1", pa.float32()),
    pa.field("first_error_acc", pa.float32()),  # exact first-error match on wrong solutions
    pa.field("correct_acc", pa.float32()),  # correct solutions accepted
    pa.field("processbench_f1", pa.float32()),  # harmonic mean of the two above
    pa.field("rollouts_per_step", pa.float32()),
    pa.field("tokens_per_step", pa.float32()),
)

STEP_SCORES = _schema(
    pa.field("model", pa.string(), nullable=False),  # the PRM: name@<digest of its folder> (model_version)
    pa.field("solution_id", pa.string(), nullable=False),
    pa.field("problem_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),
    pa.field("score", pa.float32(), nullable=False),  # the PRM's P(step is good), in [0, 1]
)

PRM_EVALUATIONS = _schema(
    pa.field("experiment", pa.string(), nullable=False),  # what produced the row: prm_evaluation, a comparison...
    pa.field("model", pa.string(), nullable=False),  # the PRM evaluated (model_version), or a baseline's name
    pa.field("label_method", pa.string()),  # the step_labels method it was trained on (method table name)
    pa.field("split", pa.string(), nullable=False),  # the held-out split scored, e.g. "test"
    pa.field("metric", pa.string(), nullable=False),  # processbench_f1 | step_auc | bon_acc@N:min | ...
    pa.field("value", pa.float64()),
    pa.field("n", pa.int32()),  # items behind the value (solutions, steps or problems)
    pa.field("detail_json", pa.string()),  # e.g. the threshold chosen on validation
)

RL_METRICS = _schema(
    pa.field("arm", pa.string(), nullable=False),  # the reward of the run: outcome | prm_min | prm_sum (prm.rl.ARMS)
    pa.field("step", pa.int32(), nullable=False),  # optimizer step; held-out eval/* at 0 (before) and the last step
    pa.field("metric", pa.string(), nullable=False),  # eval/answer_accuracy[/ops=N] | train/reward | run/wall_s | ...
    pa.field("value", pa.float64(), nullable=False),
)

# The model registry (warehouse/model_registry.py): one row per registration of a model's weights. The same
# weights registered by two stages (the policy_model asset and a flywheel's start) are two rows; readers take
# the newest registration of a version.
MODELS = _schema(
    pa.field("name", pa.string(), nullable=False),  # e.g. "arith-policy", "flywheel-prm-r2"
    pa.field("version", pa.string(), nullable=False),  # 12 hex: the weights digest (prm.models.weights_digest)
    pa.field("kind", pa.string(), nullable=False),  # policy | prm
    pa.field("parent_version", pa.string()),  # the model it was warm-started or resumed from; null = none
    pa.field("round", pa.int32()),  # flywheel round; null outside the flywheel
    pa.field("training_tables_json", pa.string(), nullable=False),  # {table: Delta version} its training set read
    pa.field("training_json", pa.string()),  # the training config: label method, sources, steps...
    pa.field("metrics_json", pa.string()),  # headline metrics {name: number}
    pa.field("uri", pa.string(), nullable=False),  # folder or URI of the weights
)

TABLES: dict[str, pa.Schema] = {
    "problems": PROBLEMS,
    "solutions": SOLUTIONS,
    "steps": STEPS,
    "rollouts": ROLLOUTS,
    "step_labels": STEP_LABELS,
    "judgments": JUDGMENTS,
    "verifications": VERIFICATIONS,
    "label_audit": LABEL_AUDIT,
    "step_scores": STEP_SCORES,
    "prm_evaluations": PRM_EVALUATIONS,
    "rl_metrics": RL_METRICS,
    "models": MODELS,
}

# Columns that identify a row; a table must not hold two rows with the same key.
PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "problems": ("problem_id",),
    "solutions": ("solution_id",),
    "steps": ("solution_id", "step_idx"),
    "rollouts": ("rollout_id",),
    "step_labels": ("solution_id", "step_idx", "method"),
    "judgments": ("judgment_id",),
    "verifications": ("solution_id", "step_idx", "verifier"),
    "label_audit": ("run_id", "method"),
    "step_scores": ("model", "solution_id", "step_idx"),
    "prm_evaluations": ("run_id", "experiment", "model", "split", "metric"),
    "rl_metrics": ("run_id", "arm", "step", "metric"),
    # A registration: re-registering in the same partition replaces it (one writer), in another adds a row.
    "models": ("source", "day", "run_id", "kind", "version"),
}


@dataclass(frozen=True)
class Allowed:
    """The values a column may hold beyond its Arrow type; every write enforces them (warehouse/validate.py).

    Nulls are judged by the field's ``nullable`` alone, and every float column also refuses NaN and
    infinity, so neither needs a rule here.
    """

    low: float | None = None  # inclusive lower bound
    high: float | None = None  # inclusive upper bound
    one_of: tuple[str, ...] = ()  # the only values allowed, when not empty
    at_most: str | None = None  # a column of the same row that this one may not exceed


_INDEX = Allowed(low=0)  # 0-based positions, counts and costs
_FIRST_ERROR = Allowed(low=-1)  # -1 = no wrong step (prm.format.labels)
_SHARE = Allowed(low=0, high=1)  # probabilities, accuracies and agreement rates

# Status vocabularies. prm.format.labels, prm.generation.constants and verifiers.verdict name the same
# values; tests/warehouse/test_validate.py fails when they drift apart.
SOLUTION_STATUSES: tuple[str, ...] = ("ok", "error")
# "pseudo": a model's own label standing in for one (prm.labeling.active), which a training set may exclude.
LABEL_STATUSES: tuple[str, ...] = ("labeled", "by_convention", "unverifiable", "pseudo")
VERDICT_STATUSES: tuple[str, ...] = ("correct", "incorrect", "unverifiable")
MODEL_KINDS: tuple[str, ...] = ("policy", "prm")  # what a models row registers

VALUE_RULES: dict[str, dict[str, Allowed]] = {
    "problems": {"n_gold_steps": _INDEX},
    "solutions": {"sample_idx": _INDEX, "n_steps": _INDEX, "first_error_truth": _FIRST_ERROR,
                  "status": Allowed(one_of=SOLUTION_STATUSES), "temperature": Allowed(low=0),
                  "prompt_tokens": _INDEX, "completion_tokens": _INDEX},
    "steps": {"step_idx": _INDEX, "char_start": Allowed(low=0, at_most="char_end")},
    "rollouts": {"step_idx": _INDEX, "rollout_idx": _INDEX, "completion_tokens": _INDEX},
    "step_labels": {"step_idx": _INDEX, "soft_label": _SHARE, "status": Allowed(one_of=LABEL_STATUSES),
                    "method": Allowed(one_of=method_names()),  # the method table is the only source of names
                    "n_rollouts": _INDEX, "n_correct": Allowed(low=0, at_most="n_rollouts"),
                    "first_error": _FIRST_ERROR, "cost_rollouts": _INDEX, "cost_tokens": _INDEX},
    "judgments": {"n_votes": _INDEX, "n_abstain": Allowed(low=0, at_most="n_votes"), "first_error": _FIRST_ERROR,
                  "agreement": _SHARE, "cost_tokens": _INDEX},
    "verifications": {"step_idx": _INDEX, "status": Allowed(one_of=VERDICT_STATUSES), "elapsed_ms": Allowed(low=0)},
    "label_audit": {"n_solutions": _INDEX, "n_steps": _INDEX, "step_accuracy": _SHARE, "step_f1": _SHARE,
                    "first_error_acc": _SHARE, "correct_acc": _SHARE, "processbench_f1": _SHARE,
                    "rollouts_per_step": _INDEX, "tokens_per_step": _INDEX},
    "step_scores": {"step_idx": _INDEX, "score": _SHARE},
    "prm_evaluations": {"n": _INDEX},
    "rl_metrics": {"step": _INDEX},
    "models": {"kind": Allowed(one_of=MODEL_KINDS), "round": _INDEX},
}


def delta_schema(table: str) -> pa.Schema:
    """The schema of ``table``'s Delta table: the logical schema plus the ``writer`` partition column."""
    return TABLES[table].append(pa.field(WRITER_COLUMN, pa.string(), nullable=False))


def file_schema(table: str) -> pa.Schema:
    """The schema stored inside the data files: the logical schema minus the partition columns."""
    schema = TABLES[table]
    return pa.schema([f for f in schema if f.name not in PARTITION_COLUMNS], metadata=schema.metadata)
