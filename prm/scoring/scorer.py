"""Load a PRM folder with a declared step-tag convention and score steps, one solution or padded batches.

``score = softmax(logits)[1]`` at each tag for a two-class token-classification head (this project's PRMs,
Qwen2.5-Math-PRM), ``softmax(logits[[good, bad]])[0]`` at each tag for a causal LM read through two tokens
(Math-Shepherd: P("+") against "-", as its model card computes it). Batches are right-padded with an
attention mask, so a causal model's logits at every real position are those of the unpadded sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm.format import CONVENTIONS, ContextOverflowError, EncodedSteps, StepTagConvention
from prm.scoring.constants import DEFAULT_BATCH_SIZE, NO_TOKENIZER_LIMIT
from prm.scoring.folder import custom_head, read_convention, read_model_config
from prm.scoring.layouts import encode_item

DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class ScorerConfig:
    """How a PRM is loaded and run.

    >>> ScorerConfig(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size=0 must be >= 1 (1 scores one solution per forward pass)
    """

    batch_size: int = DEFAULT_BATCH_SIZE  # solutions per forward pass (see constants.py)
    device: str | None = None  # None: "cuda" when available, else "cpu"
    dtype: str = "auto"  # auto: bfloat16 on CUDA (the public PRMs ship bf16), float32 on CPU (exact; CPU bf16 is slow)
    torch_threads: int | None = None  # torch.set_num_threads when set (process-wide); None keeps torch's default
    max_length: int | None = None  # None: the model's max_position_embeddings, capped by the tokenizer's limit
    trust_remote_code: bool = False  # Qwen2.5-Math-PRM ships its head as code in the folder: opt in after reading it

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size={self.batch_size} must be >= 1 (1 scores one solution per forward pass)")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype={self.dtype!r} must be one of {DTYPES}")
        if self.torch_threads is not None and self.torch_threads < 1:
            raise ValueError(f"torch_threads={self.torch_threads} must be >= 1, or None for torch's default")
        if self.max_length is not None and self.max_length < 2:
            raise ValueError(f"max_length={self.max_length} leaves no room for a step and its tag")


class PRMScorer:
    """A loaded PRM: :meth:`score_steps` for one solution, :meth:`score_batch` for many.

    Build it with :func:`load_prm`; the constructor takes a model and tokenizer already in memory.
    """

    def __init__(self, model: Any, tokenizer: Any, convention: StepTagConvention,
                 config: ScorerConfig | None = None, folder: str | Path | None = None) -> None:
        self.model, self.tokenizer, self.convention = model, tokenizer, convention
        self.config = config or ScorerConfig()
        self.folder = Path(folder) if folder is not None else None
        self.device = next(model.parameters()).device
        self.max_length = self.config.max_length or _context_of(model, tokenizer)
        self.pad_id = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None), 0)
        self.candidate_ids = _candidate_ids(tokenizer, convention) if convention.head == "lm_tokens" else None

    def encode(self, problem: str, steps: Sequence[str]) -> EncodedSteps:
        """The ids the PRM reads and the positions of the step tags (raises ContextOverflowError)."""
        return encode_item(self.tokenizer, self.convention, problem, steps, self.max_length)

    def score_steps(self, problem: str, steps: Sequence[str]) -> list[float]:
        """P(step is good) for every step, in order; ``[]`` for no steps."""
        return self.score_batch([(problem, steps)], batch_size=1)[0]

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                    batch_size: int | None = None) -> list[list[float]]:
        """:meth:`score_steps` of every ``(problem, steps)``, in order, in padded batches of similar length.

        Raises :class:`ContextOverflowError` naming the item when one does not fit the context.
        """
        encoded: list[EncodedSteps | None] = []
        for i, (problem, steps) in enumerate(items):
            if not steps:
                encoded.append(None)
                continue
            try:
                encoded.append(self.encode(problem, list(steps)))
            except ContextOverflowError as err:
                raise ContextOverflowError(f"item {i} (problem {problem[:40]!r}): {err}") from None
        scores: list[list[float]] = [[] for _ in items]
        # Longest first, so each batch pads to a similar length and an out-of-memory error shows up at once.
        order = sorted((i for i, e in enumerate(encoded) if e is not None), key=lambda i: -len(encoded[i].input_ids))
        size = batch_size or self.config.batch_size
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            for i, row in zip(chunk, self._forward([encoded[i] for i in chunk]), strict=True):
                scores[i] = row
        return scores

    def _forward(self, batch: list[EncodedSteps]) -> list[list[float]]:
        import torch

        width = max(len(e.input_ids) for e in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for b, e in enumerate(batch):
            ids[b, : len(e.input_ids)] = torch.tensor(e.input_ids)
            mask[b, : len(e.input_ids)] = 1
        kwargs: dict[str, Any] = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        if self.convention.head == "lm_tokens":
            kwargs["use_cache"] = False
        with torch.inference_mode():
            out = self.model(**kwargs)
        logits = out.logits if hasattr(out, "logits") else out[0]
        rows = torch.cat([torch.full((len(e.tag_positions),), b) for b, e in enumerate(batch)])
        cols = torch.tensor([p for e in batch for p in e.tag_positions])
        at_tags = logits[rows.to(logits.device), cols.to(logits.device)].float()  # [n_tags, labels or vocab]
        if self.candidate_ids is None:
            if at_tags.shape[-1] != 2:
                raise ValueError(f"the token-classification head has {at_tags.shape[-1]} labels; a PRM head has 2 "
                                 "(0 = bad, 1 = good): check the folder's config.json num_labels")
            probs = at_tags.softmax(-1)[:, 1]
        else:
            probs = at_tags[:, self.candidate_ids].softmax(-1)[:, 0]
        flat = probs.cpu().tolist()
        out_rows, k = [], 0
        for e in batch:
            out_rows.append(flat[k : k + len(e.tag_positions)])
            k += len(e.tag_positions)
        return out_rows


def _context_of(model: Any, tokenizer: Any) -> int | None:
    limits = [getattr(model.config, name, None) for name in ("max_position_embeddings", "n_positions")]
    limits.append(getattr(tokenizer, "model_max_length", None))
    real = [int(x) for x in limits if isinstance(x, int) and 0 < x < NO_TOKENIZER_LIMIT]
    return min(real) if real else None


def _candidate_ids(tokenizer: Any, convention: StepTagConvention) -> list[int]:
    """[good id, bad id]: each token alone, which for Math-Shepherd's SentencePiece tokenizer gives the card's
    ``tokenizer.encode("+ -")[1:]`` (each piece carries its word-boundary marker either way)."""
    ids = []
    for token in (convention.good_token, convention.bad_token):
        found = tokenizer(token, add_special_tokens=False)["input_ids"]
        if len(found) != 1:
            raise ValueError(f"the tokenizer encodes {token!r} to {len(found)} tokens; an lm_tokens PRM reads one "
                             "logit per mark, so both marks must be single tokens of its vocabulary")
        ids.append(found[0])
    return ids


def _torch_dtype(name: str, device: str) -> Any:
    import torch

    if name == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    return getattr(torch, name)


def load_prm(folder: str | Path, config: ScorerConfig | None = None, *,
             convention: str | StepTagConvention | None = None) -> PRMScorer:
    """Load the PRM in ``folder`` under the convention its ``prm_convention.json`` declares.

    ``convention`` (a name of ``CONVENTIONS`` or a StepTagConvention) overrides the file, for a downloaded
    public PRM whose folder you would rather not write into. A folder with neither raises
    FileNotFoundError saying how to declare one; a convention file or config.json that is not JSON, lacks
    a key, or gives a token-classification head other than 2 labels raises a ValueError naming the file.
    A head whose weights the folder lacks (a plain causal LM declared as token classification) raises
    instead of scoring with a random head.
    """
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

    config = config or ScorerConfig()
    folder = Path(folder)
    if isinstance(convention, str):
        if convention not in CONVENTIONS:
            raise ValueError(f"unknown convention {convention!r}; known: {sorted(CONVENTIONS)}")
        convention = CONVENTIONS[convention]
    convention = convention or read_convention(folder)
    model_config = read_model_config(folder, convention)
    auto_map = model_config.get("auto_map") or {}
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    token_head = convention.head == "token_classification"
    custom = custom_head(model_config, convention)
    if custom and not config.trust_remote_code:
        raise ValueError(f"{folder} keeps its PRM head in custom code ({auto_map['AutoModel']}), as Qwen2.5-Math-PRM "
                         "does; read that code, then load with ScorerConfig(trust_remote_code=True)")
    model_cls = AutoModel if custom else AutoModelForTokenClassification if token_head else AutoModelForCausalLM
    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model, info = model_cls.from_pretrained(str(folder), dtype=_torch_dtype(config.dtype, device),
                                            trust_remote_code=config.trust_remote_code, output_loading_info=True)
    missing = sorted(info.get("missing_keys") or [])
    if missing:
        raise ValueError(f"{folder}: no weights for {missing[:3]}{'...' if len(missing) > 3 else ''}, so "
                         f"{model_cls.__name__} would score with a random layer; the folder does not hold a "
                         f"{convention.head} PRM (train one with prm.training, or fix prm_convention.json's head)")
    model.to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=config.trust_remote_code)
    return PRMScorer(model, tokenizer, convention, config, folder)
