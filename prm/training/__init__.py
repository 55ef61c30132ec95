"""PRM training: the training set from the warehouse (split by problem) and the HF Trainer loop.

Never imports dagster. ``build_training_set`` turns one label method's ``step_labels`` into TRL
stepwise-supervision rows; ``train_prm`` trains a two-class token-classification PRM from those rows (or
from any TRL-format rows) and saves an HF folder with its step-tag convention and a card.
"""

from prm.training.config import PRMTrainConfig
from prm.training.data import TrainingSet, TrainingSetConfig, TrainingSetStats, build_training_set
from prm.training.rows import check_rows, load_rows
from prm.training.splits import problem_split, stratified_splits
from prm.training.trainer import read_prm_card, train_prm

__all__ = [
    "PRMTrainConfig",
    "TrainingSet",
    "TrainingSetConfig",
    "TrainingSetStats",
    "build_training_set",
    "check_rows",
    "load_rows",
    "problem_split",
    "read_prm_card",
    "stratified_splits",
    "train_prm",
]
