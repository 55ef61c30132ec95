"""Prefix-reusing step scoring: a new step is scored from its parent's cached keys and values, so a search round
runs the new tokens through the PRM, not the whole solution again. For an LM-head PRM
(:class:`~prm.scoring.implicit_scorer.ImplicitPRMScorer`) both models are cached, the fine-tuned one and the
reference; a classification-head PRM on transformers (:class:`~prm.scoring.scorer.PRMScorer` with a
``*ForTokenClassification`` head, or a causal LM read through two tokens) is read at each new step's tag.

The cache holds nodes keyed by ``(question, steps)``, each with the keys/values of its whole text, one contiguous
tensor per layer and model. Beams that share a parent read the same tensors; a child copies its parent's once,
when it is made (copy on extend: one copy per child, not one chain of segments gathered again every round, which
on a small model cost more than the forward pass it saved). To score ``(question, steps)`` the scorer:

1. encodes the whole item exactly as the full scorer does (its own ``encode``: the tokenizer call is cheap, the
   models are not) and finds the deepest cached ancestor ``(question, steps[:k])`` whose token ids are a prefix
   of the item's and whose step spans (tag positions for a head) are the item's first ``k``. A tokenizer that
   merges across a step boundary fails that check, and the item is scored from a shallower ancestor or from
   scratch: never a wrong score;
2. runs the ancestor's last token and the new tokens over the ancestor's keys/values (the last token again,
   because its logits predict the first new token and nodes keep no logits), batched over items with padding
   masked out and explicit positions;
3. LM head: reads each new step's reward and reference mean log-probability with the full scorer's own
   :func:`~prm.scoring.implicit_scorer.token_log_ratios` (``ref_floor`` included), and turns all of a solution's
   readings into scores and off-policy flags as :class:`~prm.scoring.implicit_scorer.ImplicitPRMScorer` does;
   classification head: P(good) at each new tag, as :class:`~prm.scoring.scorer.PRMScorer` computes it.

Scores equal full rescoring up to float rounding (the test holds them to 1e-5 in fp32 on random trees).

Memory: the stored keys/values are capped at ``cap_bytes``. Past the cap the least recently used nodes go first;
an item that would not fit alone is scored but not stored. A child whose parent is gone is scored from its deepest
ancestor still cached, at worst from scratch: full rescoring (``stats()["from_scratch"]`` counts those;
``cap_bytes=0`` stores nothing and is full rescoring). A question's prompt node serves the call that made it even
when it does not fit (its keys/values are freed with the call's, like its activations): under a cap smaller than one
node the prompt runs once a call for all of that question's items, not once an item as without a cache.
:meth:`IncrementalScorer.keep` drops every node but the live beams' and their prompts'. Transient activations of one
batch are not counted in the cap.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from prm.format import ContextOverflowError, format_prompt
from prm.scoring.implicit_scorer import (
    Assessing,
    ImplicitPRMScorer,
    StepAssessment,
    implicit_scores,
    off_policy,
    token_log_ratios,
)
from prm.scoring.kinds import prm_kind
from prm.scoring.reading import Encoded

# Stored keys/values of every model. SmolLM2-135M in fp32 keeps 30 layers x 2 x 192 (3 KV heads x 64) x 4 bytes
# ~ 46 KB a token per model, 92 KB for an LM-head PRM's two, so 2 GiB holds ~23k tokens: a 4x4 beam search 8 steps
# deep keeps its 16 children of ~220 tokens each (~3.5k tokens) a problem, so ~6 problems at once.
DEFAULT_CAP_BYTES = 2 * 1024**3

Key = tuple[str, tuple[str, ...]]
Layers = list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values), each [heads, tokens, head_dim]


@dataclass(eq=False)
class _Node:
    key: Key
    ids: tuple[int, ...]  # every token of prompt + steps
    spans: tuple[tuple[int, int], ...]  # each step's token span, as encode_solution gives it
    readings: tuple[tuple[float, ...], ...]  # per step: (reward, reference mean log-prob), or (P(good),) for a head
    kv: tuple[Layers, ...]  # every token's keys/values, per model (fine-tuned and reference, or the head's one)
    nbytes: int
    used: int = 0


def _supported(model: Any) -> str | None:
    """Why ``model``'s keys/values cannot be extended step by step (None: they can)."""
    config = model.config
    types = getattr(config, "layer_types", None)
    if types and any(t != "full_attention" for t in types):
        return f"its layers are {sorted(set(types))}, not all full attention"
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
        return "it attends over a sliding window, whose cache drops old keys"
    return None


class IncrementalScorer(Assessing):
    """A transformers PRM (:class:`ImplicitPRMScorer`, or a :class:`~prm.scoring.scorer.PRMScorer` whose head
    reads per token) that scores new steps from their parent's cached keys/values.

    Same methods as the full scorer (:meth:`score_batch`, :meth:`assess_batch`, :meth:`encode`, ...), plus
    :meth:`keep` / :meth:`forget` to free nodes, :attr:`last_tokens` (tokens each item of the last call ran
    through the PRM) and :meth:`stats`. A token counts once although both models read it.
    """

    engine = "transformers"

    def __init__(self, full: Any, *, cap_bytes: int = DEFAULT_CAP_BYTES, batch_size: int | None = None) -> None:
        self._lm_head = isinstance(full, ImplicitPRMScorer)
        if self._lm_head:
            named = (("fine-tuned model", full.model), ("reference", full.ref))
        else:
            why = _head_unsupported(full)
            if why is not None:
                raise ValueError(f"this PRM cannot be scored incrementally: {why}; score it with the full scorer "
                                 "(prm.scoring.load_prm)")
            named = (("model", full.model),)
        self._models = [model for _, model in named]
        for name, model in named:
            why = _supported(model)
            if why is not None:
                raise ValueError(f"the PRM's {name} cannot be scored incrementally: {why}; score it with the full "
                                 "scorer (prm.scoring.load_prm)")
        if cap_bytes < 0:
            raise ValueError(f"cap_bytes={cap_bytes}: give a byte count >= 0 (0 stores nothing: full rescoring)")
        self.full, self.cap_bytes = full, cap_bytes
        self.batch_size = batch_size or full.config.batch_size or 32
        self.tokenizer, self.config, self.folder, self.max_length = (full.tokenizer, full.config, full.folder,
                                                                     full.max_length)
        self._nodes: dict[Key, _Node] = {}
        self._clock = itertools.count(1)
        self._bytes = 0
        self.last_tokens: list[int] = []
        self._made: dict[Key, _Node] = {}  # nodes scored in the current call, stored or not (over the cap)
        self._stats = {"items": 0, "tokens": 0, "full_tokens": 0, "from_scratch": 0, "mismatches": 0,
                       "cache_hits": 0, "uncached": 0, "evicted": 0, "peak_bytes": 0}

    # --- the scorer interface -------------------------------------------------------------------------------

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        """The ids the PRM reads and each step's token span (the full scorer's; raises ContextOverflowError)."""
        return self.full.encode(problem, steps)

    def _encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        """:meth:`encode` with each step's span: its own tokens (LM head), its tag position (a head)."""
        enc = self.full.encode(problem, list(steps))
        if self._lm_head:
            return enc
        return Encoded(list(enc.input_ids), [(p, p + 1) for p in enc.tag_positions])

    def assess_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                     batch_size: int | None = None) -> list[list[StepAssessment]]:
        """:meth:`assess_steps` of every ``(problem, steps)``, in order, equal to the full scorer's."""
        keys = [(str(q), tuple(steps)) for q, steps in items]
        self._made = {key: self._nodes[key] for key in keys if key[1] and key in self._nodes}
        encoded: dict[Key, Encoded] = {}
        for i, key in enumerate(keys):
            if key[1] and key not in self._nodes and key not in encoded:
                try:
                    encoded[key] = self._encode(*key)
                except ContextOverflowError as err:
                    raise ContextOverflowError(f"item {i} (problem {key[0][:40]!r}): {err}") from None
        tokens = dict.fromkeys(encoded, 0)
        self._ensure_prompts(encoded, tokens, batch_size)
        plans = [(key, enc, self._ancestor(key, enc)) for key, enc in encoded.items()]
        self._stats["from_scratch"] += sum(anc is None for _, _, anc in plans)
        for key, spent in self._extend(plans, batch_size).items():
            tokens[key] += spent
        out, seen = [], set()
        self.last_tokens = []
        for key in keys:
            node = self._made.get(key)
            first = key not in seen
            seen.add(key)
            self.last_tokens.append(tokens.get(key, 0) if first else 0)
            if not key[1]:
                out.append([])
                continue
            self._stats["items"] += 1
            self._stats["full_tokens"] += len(node.ids)
            self._stats["cache_hits"] += key not in encoded
            self._touch(node)
            out.append(self._assess(node.readings))
        self._made = {}
        return out

    def _assess(self, readings: Sequence[tuple[float, ...]]) -> list[StepAssessment]:
        if not self._lm_head:
            return [StepAssessment(r[0], None) for r in readings]
        scores = implicit_scores([[r[0] for r in readings]], self.full.how)[0]
        return [StepAssessment(x, off_policy(r[1], self.full.ood_ref_logprob))
                for x, r in zip(scores, readings, strict=True)]

    # --- freeing ----------------------------------------------------------------------------------------------

    def keep(self, items: Iterable[tuple[str, Sequence[str]]]) -> None:
        """Drop every node but those of ``items`` (``(question, steps)``) and their questions' prompts: a search
        calls it with its live beams after each round."""
        needed: set[Key] = set()
        for q, steps in items:
            needed |= {(str(q), tuple(steps)), (str(q), ())}
        for node in [n for key, n in self._nodes.items() if key not in needed]:
            self._evict(node)

    def forget(self) -> None:
        """Drop every node."""
        self._nodes.clear()
        self._bytes = 0

    def stats(self) -> dict[str, int]:
        """Counters since construction: ``tokens`` run through the PRM, ``full_tokens`` full rescoring would have
        run for the same items, ``from_scratch`` items with no usable cached ancestor, ``mismatches`` (a cached
        ancestor whose tokens were not the item's prefix), ``uncached`` (over the cap), ``evicted``, ``bytes``
        stored now and ``peak_bytes``."""
        return {**self._stats, "bytes": self._bytes, "nodes": len(self._nodes)}

    def close(self) -> None:
        """Free the cache and the full scorer."""
        self.forget()
        self.full.close()

    def __enter__(self) -> IncrementalScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------------------------

    def _ensure_prompts(self, encoded: dict[Key, Encoded], tokens: dict[Key, int], batch_size: int | None) -> None:
        """Score each question's prompt once (a node every first step extends) where no deeper node is cached and
        the prompt's tokens are the items' prefix."""
        todo: dict[Key, Encoded] = {}
        if self.cap_bytes == 0 or not self._lm_head:  # nothing stored; a head's layout has no prompt-only encoding
            return
        for (q, steps), enc in encoded.items():
            root = (q, ())
            if root in self._nodes or root in todo or self._deepest((q, steps)) is not None:
                continue
            ids = list(self.tokenizer(format_prompt(self.tokenizer, q))["input_ids"])
            if len(ids) > 1 and enc.input_ids[: len(ids)] == ids:
                todo[root] = Encoded(ids, [])
        if todo:
            spent = self._extend([(key, enc, None) for key, enc in todo.items()], batch_size)
            for (q, steps) in encoded:  # the prompt's tokens go to the first item of its question
                if (q, ()) in spent:
                    tokens[(q, steps)] += spent.pop((q, ()))

    def _deepest(self, key: Key) -> _Node | None:
        q, steps = key
        for k in range(len(steps) - 1, -1, -1):
            node = self._nodes.get((q, steps[:k]))
            if node is not None:
                return node
        return None

    def _ancestor(self, key: Key, enc: Encoded) -> _Node | None:
        """The deepest cached ancestor whose tokens and spans are the item's prefix; None: score from scratch."""
        q, steps = key
        for k in range(len(steps) - 1, -1, -1):
            # _made: a prompt scored in this call that the cap could not keep still serves this call's items
            node = self._nodes.get((q, steps[:k])) or self._made.get((q, steps[:k]))
            if node is None or not node.kv:
                continue
            n = len(node.ids)
            if (tuple(enc.input_ids[:n]) == node.ids and tuple(enc.spans[:k]) == node.spans
                    and enc.spans[k][0] >= n):
                return node
            self._stats["mismatches"] += 1
        return None

    def _extend(self, plans: list[tuple[Key, Encoded, _Node | None]], batch_size: int | None) -> dict[Key, int]:
        """Run each plan's new tokens over its ancestor's keys/values; store (or hold as pending) its node.
        Returns the tokens each key ran through the PRM."""
        spent: dict[Key, int] = {}
        size = batch_size or self.batch_size
        # Similar lengths together: a batch pads to its longest past and its longest new run.
        order = sorted(plans, key=lambda p: (len(p[2].ids) if p[2] else 0, len(p[1].input_ids)))
        with torch.inference_mode():
            for start in range(0, len(order), size):
                chunk = order[start: start + size]
                starts = [len(anc.ids) - 1 if anc else 0 for _, _, anc in chunk]
                news = [enc.input_ids[s:] for (_, enc, _), s in zip(chunk, starts, strict=True)]
                pasts = [self._chain(anc, s) for (_, _, anc), s in zip(chunk, starts, strict=True)]
                runs = [_run(model, [p[i] for p in pasts], news, starts, self._read)
                        for i, model in enumerate(self._models)]
                for b, ((key, enc, anc), s) in enumerate(zip(chunk, starts, strict=True)):
                    spent[key] = len(news[b])
                    self._stats["tokens"] += len(news[b])
                    self._store(key, enc, anc, s, [r[0][b] for r in runs], [r[1][b] for r in runs])
        return spent

    def _chain(self, anc: _Node | None, length: int) -> list[Layers | None]:
        """The ancestor's keys/values of its first ``length`` tokens, per model (views; None for no past)."""
        if anc is None or length == 0:
            return [None] * len(self._models)
        return [[(k[:, :length], v[:, :length]) for k, v in layers] for layers in anc.kv]

    def _read(self, logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        """Per position of a padded batch: the token's log-prob given the ones before (LM head; 0 at position 0),
        or P(good) there (a head, as PRMScorer reads it at a tag)."""
        if self._lm_head:
            picked = torch.log_softmax(logits.float()[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
            return torch.cat([torch.zeros((len(ids), 1), device=picked.device), picked], dim=1)
        if self.full.candidate_ids is None:
            return logits.float().softmax(-1)[..., 1]
        return logits.float()[..., self.full.candidate_ids].softmax(-1)[..., 0]

    def _store(self, key: Key, enc: Encoded, anc: _Node | None, start: int, values: list[torch.Tensor],
               kvs: list[Layers]) -> None:
        k_old = len(anc.spans) if anc else 0
        # values[m][j] is model m's reading of token start + j (_read)
        readings = list(anc.readings) if anc else []
        for s, t in enc.spans[k_old:]:
            if not self._lm_head:
                readings.append((float(values[0][s - start]),))
                continue
            a, b = values[0][s - start: t - start], values[1][s - start: t - start]
            readings.append((self.full.beta * float(token_log_ratios(a, b, self.full.ref_floor).sum()),
                             float(b.mean())))
        nbytes = sum(t.numel() * t.element_size() for layers in kvs for pair in layers for t in pair)
        node = _Node(key, tuple(enc.input_ids), tuple(enc.spans), tuple(readings), tuple(kvs), nbytes)
        self._made[key] = node
        if key in self._nodes:
            return
        if not self._make_room(nbytes):
            self._stats["uncached"] += 1
            if key[1]:  # an item's readings serve this call; a prompt's keys/values serve its items (_ancestor)
                node.kv = ()
            return
        self._nodes[key] = node
        self._bytes += nbytes
        self._stats["peak_bytes"] = max(self._stats["peak_bytes"], self._bytes)
        self._touch(node)

    def _make_room(self, nbytes: int) -> bool:
        """Evict least recently used nodes until ``nbytes`` more fit the cap; False when they never would."""
        if nbytes > self.cap_bytes:
            return False
        while self._bytes + nbytes > self.cap_bytes:
            self._evict(min(self._nodes.values(), key=lambda n: n.used))
        return True

    def _evict(self, node: _Node) -> None:
        if self._nodes.get(node.key) is node:
            del self._nodes[node.key]
            self._bytes -= node.nbytes
            self._stats["evicted"] += 1

    def _touch(self, node: _Node) -> None:
        node.used = next(self._clock)


def _head_unsupported(full: Any) -> str | None:
    """Why a classification-head scorer cannot be read step by step (None: it can)."""
    convention = getattr(full, "convention", None)
    if getattr(full, "engine", None) != "transformers" or convention is None or not hasattr(full, "model"):
        return f"{type(full).__name__} is not a transformers PRM scorer (vLLM's pooling runner keeps no prefix)"
    name, kind = type(full.model).__name__, prm_kind(convention.head, "head").name
    if kind == "classifier" and not name.endswith("ForTokenClassification"):
        return f"its head is custom code ({name}), which may not take cached keys/values"
    if kind == "lm_tokens" and not name.endswith("ForCausalLM"):
        return f"its model {name} is not a causal LM"
    return None


def _run(model: Any, pasts: list[Layers | None], news: list[list[int]], starts: list[int], read: Any
         ) -> tuple[list[torch.Tensor], list[Layers]]:
    """Per item: ``read``'s value at each new position (index j: token ``starts[b] + j``) and the keys/values of
    all its tokens (past and new, contiguous), from one padded forward pass."""
    from transformers import DynamicCache

    device = next(model.parameters()).device
    width_past, width = max(starts), max(len(n) for n in news)
    ids = torch.zeros((len(news), width), dtype=torch.long)
    mask = torch.zeros((len(news), width_past + width), dtype=torch.long)
    for b, (new, s) in enumerate(zip(news, starts, strict=True)):
        ids[b, : len(new)] = torch.tensor(new)
        mask[b, :s] = 1
        mask[b, width_past: width_past + len(new)] = 1
    positions = torch.tensor(starts)[:, None] + torch.arange(width)[None, :]
    # A cache object of our own: a token-classification model fills it in place but does not return it.
    cache = DynamicCache()
    if width_past:
        layers = []
        template = next(p for p in pasts if p is not None)
        for layer, (k0, v0) in enumerate(template):
            k = k0.new_zeros((len(news), k0.shape[0], width_past, k0.shape[2]))
            v = v0.new_zeros((len(news), v0.shape[0], width_past, v0.shape[2]))
            for b, past in enumerate(pasts):
                if past is not None:
                    k[b, :, : starts[b]] = past[layer][0]
                    v[b, :, : starts[b]] = past[layer][1]
            layers.append((k, v))
        cache = DynamicCache(layers)
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                past_key_values=cache, use_cache=True)
    picked = read(out.logits, ids.to(device))
    layers_out = [(layer.keys, layer.values) for layer in cache.layers]

    def whole(t: torch.Tensor, b: int) -> torch.Tensor:
        new = t[b, :, width_past: width_past + len(news[b])]
        return torch.cat([t[b, :, : starts[b]], new], dim=1) if starts[b] else new.clone()

    return ([picked[b, : len(new)] for b, new in enumerate(news)],
            [[(whole(k, b), whole(v, b)) for k, v in layers_out] for b in range(len(news))])
