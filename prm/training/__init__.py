"""PRM training: the training set from the warehouse (split by problem) and the HF Trainer loop.

Never imports dagster. ``build_training_set`` turns one label method's ``step_labels`` into TRL
stepwise-supervision rows; ``train_prm`` trains a two-class token-classification PRM from those rows (or
from any TRL-format rows) and saves an HF folder with its step-tag convention and a card.
"""

from prm.training.artifacts import PRMArtifacts
from prm.training.config import PRMTrainConfig
from prm.training.constants import CARD_FILE
from prm.training.data import TrainingSet, TrainingSetConfig, TrainingSetStats, build_training_set
from prm.training.implicit import ImplicitPRMConfig, train_implicit_prm
from prm.training.model import PadCollator, encode_row
from prm.training.rows import check_rows, load_rows
from prm.training.ship import SHIPPED_PRM_DIR, evaluate_shipped_on_partition, figures_markdown, verify_shipped_prm
from prm.training.splits import problem_split, stratified_splits
from prm.training.trainer import read_prm_card, train_prm
from prm.training.versions import new_version

__all__ = [
    "CARD_FILE",
    "SHIPPED_PRM_DIR",
    "ImplicitPRMConfig",
    "PRMArtifacts",
    "PRMTrainConfig",
    "PadCollator",
    "TrainingSet",
    "TrainingSetConfig",
    "TrainingSetStats",
    "build_training_set",
    "check_rows",
    "encode_row",
    "evaluate_shipped_on_partition",
    "figures_markdown",
    "load_rows",
    "new_version",
    "problem_split",
    "read_prm_card",
    "stratified_splits",
    "train_implicit_prm",
    "train_prm",
    "verify_shipped_prm",
]
