"""Load a PRM folder with a declared step-tag convention and score steps, one solution or padded batches;
:func:`load_prm` picks the engine (transformers here, vLLM in :mod:`prm.scoring.vllm_scorer`).

``score = softmax(logits)[1]`` at each tag for a two-class token-classification head (this project's PRMs,
Qwen2.5-Math-PRM), ``softmax(logits[[good, bad]])[0]`` at each tag for a causal LM read through two tokens
(Math-Shepherd: P("+") against "-", as its model card computes it). Batches are right-padded with an
attention mask, so a causal model's logits at every real position are those of the unpadded sequence.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from prm.format import CONVENTIONS, EncodedSteps, StepTagConvention
from prm.scoring.base import StepScorer, candidate_ids, context_of
from prm.scoring.config import DTYPES, ScorerConfig, cuda_bf16, resolve_dtype
from prm.scoring.constants import DEFAULT_BATCH_SIZE
from prm.scoring.folder_config import custom_head, read_convention, read_model_config
from prm.scoring.kinds import detect_kind, prm_kind
from prm.scoring.protocol import Scorer

__all__ = ["DTYPES", "PRMScorer", "ScorerConfig", "load_prm"]


class PRMScorer(StepScorer):
    """A PRM run by transformers in this process: :meth:`score_steps` for one solution, :meth:`score_batch`
    for many (right-padded batches of ``config.batch_size``, default ``DEFAULT_BATCH_SIZE``).

    Build it with :func:`load_prm`; the constructor takes a model and tokenizer already in memory.
    """

    engine = "transformers"
    default_batch = DEFAULT_BATCH_SIZE

    def __init__(self, model: Any, tokenizer: Any, convention: StepTagConvention,
                 config: ScorerConfig | None = None, folder: str | Path | None = None) -> None:
        config = config or ScorerConfig()
        context = config.max_length or context_of(model.config, tokenizer)
        super().__init__(tokenizer, convention, config, folder, context)
        self.model = model
        self.device = next(model.parameters()).device
        self.pad_id = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if t is not None), 0)
        self.token_pair = prm_kind(convention.head, "head").name == "lm_tokens"
        self.candidate_ids = candidate_ids(tokenizer, convention) if self.token_pair else None

    def _forward(self, batch: list[EncodedSteps]) -> list[list[float]]:
        import torch

        width = max(len(e.input_ids) for e in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for b, e in enumerate(batch):
            ids[b, : len(e.input_ids)] = torch.tensor(e.input_ids)
            mask[b, : len(e.input_ids)] = 1
        kwargs: dict[str, Any] = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        if self.token_pair:
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


def load_prm(folder: str | Path, config: ScorerConfig | None = None, *,
             convention: str | StepTagConvention | None = None, engine: str | None = None) -> Scorer:
    """Load the PRM in ``folder`` (a folder, or a registered name such as ``arith-prm``) by its kind.

    The kind (:data:`prm.scoring.PRM_KINDS`) is the first whose ``detect`` recognises the folder: ``lm`` for a
    folder with ``implicit_prm.json`` (an LM-head PRM, loaded with its reference model, transformers only), else
    the ``head`` its ``prm_convention.json`` declares (``classifier``, ``lm_tokens``).

    ``engine`` ("transformers" or "vllm") overrides ``config.engine``: transformers runs the model in this
    process (:class:`PRMScorer`); vllm runs vLLM's pooling runner in a worker process
    (:class:`prm.scoring.vllm_scorer.VLLMScorer`; ``close()`` it, or use it as a context manager). Both read
    the same token ids at the same tag positions.

    ``convention`` (a name of ``CONVENTIONS`` or a StepTagConvention) overrides the file, for a downloaded
    public PRM whose folder you would rather not write into; its ``head`` picks the kind. A folder with neither
    raises FileNotFoundError saying how to declare one; a convention file or config.json that is not JSON, lacks
    a key, names an unknown kind, or gives a token-classification head other than 2 labels raises a ValueError
    naming the file. A head whose weights the folder lacks (a plain causal LM declared as token classification)
    raises instead of scoring with a random head.
    """
    config = config or ScorerConfig()
    if engine is not None:
        config = replace(config, engine=engine)
    folder = _folder(folder)
    if isinstance(convention, str):
        if convention not in CONVENTIONS:
            raise ValueError(f"unknown convention {convention!r}; known: {sorted(CONVENTIONS)}")
        convention = CONVENTIONS[convention]
    if convention is not None:
        kind = prm_kind(convention.head, "head")
    else:
        kind = detect_kind(folder) or prm_kind(read_convention(folder).head, "head")  # read_convention says why
    return kind.load_scorer(folder, config, convention)


def _folder(folder: str | Path) -> Path:
    """The local folder ``folder`` names (:func:`prm.models.local_model`)."""
    from prm.models import local_model

    return local_model(folder)


def load_tagged_prm(folder: Path, config: ScorerConfig,
                    convention: StepTagConvention | None = None) -> StepScorer:
    """A PRM read at its step tags (``classifier``, ``lm_tokens``) under ``convention`` or the one its folder
    declares, by the engine ``config`` names."""
    convention = convention or read_convention(folder)
    model_config = read_model_config(folder, convention)
    if config.engine == "vllm":
        from prm.scoring.vllm_scorer import load_vllm_prm

        return load_vllm_prm(folder, convention, model_config, config)
    return _load_transformers(folder, convention, model_config, config)


def _load_transformers(folder: Path, convention: StepTagConvention, model_config: dict[str, Any],
                       config: ScorerConfig) -> PRMScorer:
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForTokenClassification, AutoTokenizer

    auto_map = model_config.get("auto_map") or {}
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    token_head = prm_kind(convention.head, "head").name == "classifier"
    custom = custom_head(model_config, convention)
    if custom and not config.trust_remote_code:
        raise ValueError(f"{folder} keeps its PRM head in custom code ({auto_map['AutoModel']}), as Qwen2.5-Math-PRM "
                         "does; read that code, then load with ScorerConfig(trust_remote_code=True)")
    model_cls = AutoModel if custom else AutoModelForTokenClassification if token_head else AutoModelForCausalLM
    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, resolve_dtype(config.dtype, device, cuda_bf16(device)))
    model, info = model_cls.from_pretrained(str(folder), dtype=dtype, trust_remote_code=config.trust_remote_code,
                                            output_loading_info=True)
    missing = sorted(info.get("missing_keys") or [])
    if missing:
        raise ValueError(f"{folder}: no weights for {missing[:3]}{'...' if len(missing) > 3 else ''}, so "
                         f"{model_cls.__name__} would score with a random layer; the folder does not hold a "
                         f"{convention.head} PRM (train one with prm.training, or fix prm_convention.json's head)")
    model.to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=config.trust_remote_code)
    return PRMScorer(model, tokenizer, convention, config, folder)
