"""How a PRM is trained: backbone, loss, optimizer budget, adapters, checkpoints."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from prm.implicit_recipe import check_beta
from prm.scoring import prm_kind, trainable_kinds
from prm.settings import (
    check_batch,
    check_count,
    check_finite,
    check_learning_rate,
    check_lora,
    check_range,
    check_seed,
    check_steps,
    check_threads,
    check_tokens,
    check_weight_decay,
)
from prm.training.constants import MAX_CHECKPOINTS, MAX_EPOCHS
from prm.training.rows import LABEL_KINDS


@dataclass(frozen=True)
class PRMTrainConfig:
    """One PRM training run; :func:`prm.training.train_prm` reads nothing else.

    >>> PRMTrainConfig(head="classifier", freeze_backbone=True, lora_r=8)
    Traceback (most recent call last):
    ...
    ValueError: freeze_backbone=True and lora_r=8 both limit what trains; choose one...
    >>> PRMTrainConfig(lora_r=8)
    Traceback (most recent call last):
    ...
    ValueError: head='lm' fine-tunes the whole backbone; lora_r and freeze_backbone apply to head='classifier'...
    """

    # What reads a step: a PRM kind prm.training trains (prm.scoring.PRM_KINDS, the names scoring reads too). "lm"
    # scores each step's tokens with the backbone's LM head against the frozen base (F1 0.918, sensitivity 0.905
    # over 3 seeds in distribution, where the classification head reached 0.839 and 0.755 in 7x the steps;
    # benchmarks/results/prm_curves.log);
    # "classifier" is the two-class head at each step tag that vLLM's pooling runner serves.
    head: str = "lm"
    beta: float = 0.5  # head="lm": the reward scale; 0.5 trained step labels in 400 steps where 0.05 barely moved
    # head="lm": floor under the reference's token probability in each step's log-ratio. None is PRIME's plain
    # log(pi / pi_ref), which scores text the policy would never write as good ("hello world" 0.82 above the right
    # step's 0.50). 0.05 was chosen on validation (benchmarks/prm_offpolicy.py, truth labels, 300 problems per
    # length, seed 0): F1 0.754 -> 0.958, sensitivity 0.829 -> 1.000, worst perturbation kind 0.437 -> 0.981.
    ref_floor: float | None = 0.05
    # head="lm": share of each batch's solutions that also train on a perturbed copy, one right step replaced by a
    # wrong step of a kind the policy rarely writes (prm.evaluation.perturbations.training_negative).
    negatives: float = 0.0

    # --- backbone: initialised from the warm-started policy, as Math-Shepherd initialises its PRM from
    # the generator; "smollm2-135m-instruct" with freeze_backbone or lora_r is the bigger option ---
    base_model: str = "arith-policy"  # any name prm.models.resolve_model accepts (registered, folder, hub id)
    label_kind: str = "hard"  # "hard": cross-entropy on 2 classes; "soft": BCE of logit[1]-logit[0] vs P(good)
    freeze_backbone: bool = False  # train the new head only (a linear probe of the backbone's features)
    lora_r: int = 0  # LoRA rank via peft (0 = off); the head trains fully, the adapters merge into the saved weights
    lora_alpha: int = 16  # LoRA scaling numerator (peft's default); the update is scaled by alpha / r
    lora_dropout: float = 0.0  # tiny data sets gain nothing from adapter dropout
    # --- optimizer budget: steps or epochs, never wall-clock time ---
    learning_rate: float = 5e-4  # a fine-tune of a ~1M-param policy; use ~1e-4 for SmolLM2 with LoRA
    # AdamW's default. The LM head needs it: at 0.0 the same seed-0 run gave F1 0.696 instead of 0.912.
    weight_decay: float = 0.01
    warmup_steps: int = 10  # linear warmup so the first large gradients do not wreck the backbone
    # Passes over the train rows; used when max_steps <= 0. Four passes over 12k policy samples took the
    # classification head from F1 0.58 (1.3 passes) to 0.84 in distribution (benchmarks/results/prm_curves.log).
    num_epochs: float = 4.0
    # Optimizer steps; > 0 overrides num_epochs (HF Trainer semantics). 400 steps of 16 is the LM head's measured
    # recipe (~4 min on 2 CPU cores for the arithmetic policy); the classification head wants ~4 epochs (-1).
    max_steps: int = 400
    # Solutions per optimizer step over all processes (each of N launched ranks takes batch_size / N, so one- and
    # N-process runs see the same rows per step); a solution is ~100-500 tokens for the arithmetic policy.
    batch_size: int = 16
    seed: int = 0  # seeds the head's init, LoRA init and the data order
    # One CPU thread per process: a fixed count keeps the reduction order (so the weights) the same on every
    # machine and stops two torch processes from oversubscribing a 2-core box (as PolicyTrainConfig.torch_threads);
    # under a launcher every rank sets it, so N ranks use N x torch_threads cores.
    torch_threads: int = 1
    max_length: int | None = None  # tokens per solution; None = the backbone's max_position_embeddings
    # --- logging, evaluation on the val rows, checkpoints under out_dir/checkpoints ---
    logging_steps: int = 10
    eval_steps: int = 50  # val loss and step accuracy every this many steps (when there are val rows)
    save_steps: int = 50  # checkpoint interval; resume continues from the last one
    save_total_limit: int = 2  # checkpoints kept; older ones are deleted
    bf16_on_cuda: bool = True  # bf16 autocast when CUDA is present; CPU always trains in fp32

    def __post_init__(self) -> None:
        for f in fields(self):  # 1 and 1.0 are one config in the card; a NaN or an infinity is refused here
            if f.type in (float, "float"):
                object.__setattr__(self, f.name, check_finite(f.name, getattr(self, f.name)))
        if self.label_kind not in LABEL_KINDS:
            raise ValueError(f"label_kind={self.label_kind!r} must be one of {LABEL_KINDS}")
        try:
            trains = prm_kind(self.head, "head").trainer is not None
        except ValueError:
            trains = False
        if not trains:
            raise ValueError(f"head={self.head!r} must be one of {trainable_kinds()}, the PRM kinds prm.training "
                             "trains (prm.scoring.PRM_KINDS; older names such as 'implicit' are read too)")
        self._check_numbers()
        lm = self.kind == "lm"
        if lm and (self.lora_r or self.freeze_backbone):
            raise ValueError("head='lm' fine-tunes the whole backbone; lora_r and freeze_backbone apply to "
                             "head='classifier' (set head='classifier', or drop them)")
        if not lm and self.negatives:
            raise ValueError("negatives train the LM head's log-ratio; set head='lm', or negatives=0")
        if self.freeze_backbone and self.lora_r:
            raise ValueError(f"freeze_backbone=True and lora_r={self.lora_r} both limit what trains; choose one "
                             "(LoRA already freezes the backbone's own weights)")
        if self.max_steps <= 0 and self.num_epochs <= 0:
            raise ValueError("set max_steps > 0 or num_epochs > 0: one of them bounds training")

    def _check_numbers(self) -> None:
        """Every numeric field finite and in its range, with the bound's reason (prm.settings)."""
        check_beta(self.beta)  # the LM head's reward scale: the bound scoring reads the folder with
        if self.ref_floor is not None:
            check_range("ref_floor", self.ref_floor, low=0.0, high=1.0, low_open=True, high_open=True,
                        why="a probability floor; None for no floor")
        check_range("negatives", self.negatives, low=0.0, high=1.0, why="a share of each batch's solutions")
        check_lora("lora_r", self.lora_r, low=0)  # 0 turns LoRA off
        check_lora("lora_alpha", self.lora_alpha)
        check_range("lora_dropout", self.lora_dropout, low=0.0, high=1.0, high_open=True,
                    why="a dropout probability; 1 would drop every adapter input")
        check_learning_rate("learning_rate", self.learning_rate)
        check_weight_decay("weight_decay", self.weight_decay)
        check_steps("warmup_steps", self.warmup_steps, low=0)
        check_range("num_epochs", self.num_epochs, low=0.0, high=MAX_EPOCHS, why="passes over the train rows")
        check_steps("max_steps", self.max_steps, low=-1)  # <= 0: num_epochs bounds training (HF Trainer semantics)
        check_batch("batch_size", self.batch_size)
        check_seed("seed", self.seed)
        check_threads("torch_threads", self.torch_threads)
        if self.max_length is not None:  # two tokens: a prompt and a tagged step
            check_tokens("max_length", self.max_length, low=2)
        for name in ("logging_steps", "eval_steps", "save_steps"):
            check_steps(name, getattr(self, name))
        check_count("save_total_limit", self.save_total_limit, high=MAX_CHECKPOINTS,
                    why="checkpoints kept on disk, each a full copy of the model")

    @property
    def kind(self) -> str:
        """The registered name of ``head``'s PRM kind (an older alias such as "implicit" reads as "lm")."""
        return prm_kind(self.head, "head").name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
