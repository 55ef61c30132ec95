"""Fixed names and numbers of PRM training, each with its reason."""

from __future__ import annotations

# The split names of a training set; ``val`` picks thresholds and checkpoints, ``test`` is held out.
SPLITS = ("train", "val", "test")

# A soft label at or above this counts as a good step when classes are counted (one-class checks,
# balancing, step accuracy): P(good) = 0.5 is where the two-class head's argmax flips.
SOFT_THRESHOLD = 0.5

# The label value that ``torch.nn.functional.cross_entropy`` (and HF's Trainer) skip: every token but the
# step tags carries it, so the loss only reads the head at the tags.
IGNORE_INDEX = -100

# The two classes of the head, in the order the scorer reads them (softmax(logits)[1] = P(good)).
ID2LABEL = {0: "bad", 1: "good"}

# The convention this project's PRMs are trained and scored with (prm.format.CONVENTIONS).
CONVENTION_NAME = "prm-pipeline"

# Files of a trained PRM folder, besides the HF model and tokenizer files and the convention file.
CARD_FILE = "prm_card.json"  # config, label method, counts, skipped rows, final metrics
CHECKPOINT_DIR = "checkpoints"  # Trainer checkpoints; resume reads the last one
# Every file a save wrote into the folder (prm.training.out_folder): the next save into the folder deletes those and
# nothing else, so a mistyped --out never loses a user's files.
MANIFEST_FILE = "prm_files.json"

# Files of a saved training set (TrainingSet.save): the rows in TRL stepwise-supervision form, and the
# config and stats that made them (class weights included, so a PRM asset reading the folder trains
# with the same weights as one handed the TrainingSet in memory).
ROWS_FILE = "rows.jsonl"
META_FILE = "training_set.json"

# What reads a step (PRMTrainConfig.head) is a PRM kind of prm.scoring.PRM_KINDS, the one vocabulary of training and
# scoring; the kinds with a trainer are the ones prm.training trains.

# The off-policy rule an LM-head PRM ships with (prm.scoring.implicit_scorer.off_policy): a step whose tokens' mean
# log-probability under the reference falls below the OOD_QUANTILE quantile of the train steps' (the policy's own
# text, right and wrong), less OOD_MARGIN nats, is far from anything the PRM was trained on. Read on up to OOD_ROWS
# train rows.
OOD_QUANTILE = 0.001
OOD_MARGIN = 0.5
OOD_ROWS = 1024

# Bounds of PRMTrainConfig's own settings (the optimizer's are prm.settings'): the classification head's recipe is 4
# passes over its rows and the LM head's 400 steps; a thousand passes is far past where a PRM stops learning, so a
# larger number is a typo. Checkpoints kept: each is a full copy of the model, so a thousand fills any disk first.
MAX_EPOCHS = 1_000.0
MAX_CHECKPOINTS = 1_000
