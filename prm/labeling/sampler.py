"""Rollouts behind a prefix_hash cache: a prefix already rolled out is never paid for twice.

The cache is seeded from ``rollouts`` rows (earlier runs, other labelers) and grows with every fresh
sample, so the MC labeler and OmegaPRM share estimates within one process as well.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from prm.datagen import RolloutTarget, rollout_rows
from prm.generation import GenerationBackend
from prm.labeling.constants import SEED_MODULUS
from prm.labeling.types import RolloutOutcome

# (targets, n per target, seed) -> ``rollouts`` rows, n per target, in target order.
RowSource = Callable[[Sequence[RolloutTarget], int, int], list[dict[str, Any]]]


def _outcome(row: Mapping[str, Any]) -> RolloutOutcome:
    return RolloutOutcome(text=row.get("text") or "", is_correct=row.get("is_correct"),
                          completion_tokens=int(row.get("completion_tokens") or 0))


def _usable(row: Mapping[str, Any]) -> bool:
    """Engine errors are kept as rows (never dropped) but are not outcomes: they would read as wrong."""
    return row.get("finish_reason") != "error"


class CachedRolloutSampler:
    """A :class:`~prm.labeling.types.RolloutSampler` over any row source, with a prefix_hash cache.

    >>> calls = []
    >>> def source(targets, n, seed):
    ...     calls.append(len(targets))
    ...     return [{"prefix_hash": t.prefix_hash, "rollout_idx": j, "text": "Answer: 1", "is_correct": True,
    ...              "completion_tokens": 3} for t in targets for j in range(n)]
    >>> sampler = CachedRolloutSampler(source)
    >>> t = RolloutTarget("s", "p", 0, "Q\\n1+0 = 1\\n", "1")
    >>> len(sampler.sample([t], 4)[0]), len(sampler.sample([t], 6)[0]), calls
    (4, 6, [1, 1])
    >>> sampler.fresh_rollouts, sampler.reused_rollouts  # the second call paid for 2 and reused 4
    (6, 4)
    """

    def __init__(self, source: RowSource, existing_rows: Iterable[Mapping[str, Any]] = (), *, seed: int = 0) -> None:
        self._source = source
        self._seed = seed
        self._cache: dict[str, list[RolloutOutcome]] = defaultdict(list)
        self._new: list[dict[str, Any]] = []
        self.calls = 0  # sample() calls
        self.engine_calls = 0  # row-source calls (one per distinct missing count in a sample() call)
        self.fresh_rollouts = 0  # usable outcomes sampled by the row source
        # Outcomes served that this call did not sample for that request: stored rows, earlier calls, or an
        # earlier request of the same call. Every served outcome is fresh once or reused: served = fresh + reused.
        self.reused_rollouts = 0
        ordered = sorted((r for r in existing_rows if _usable(r)), key=lambda r: (r["prefix_hash"], r["rollout_idx"]))
        for row in ordered:
            self._cache[row["prefix_hash"]].append(_outcome(row))

    def cached(self, prefix_hash: str) -> int:
        """How many outcomes are stored for a prefix."""
        return len(self._cache.get(prefix_hash, ()))

    def sample(self, targets: Sequence[RolloutTarget], n: int | Sequence[int]) -> list[list[RolloutOutcome]]:
        """Stored outcomes first; only the missing count is sampled, in one batch per missing count."""
        wants = [n] * len(targets) if isinstance(n, int) else list(n)
        if len(wants) != len(targets):
            raise ValueError(f"got {len(wants)} counts for {len(targets)} targets; pass one n or one per target")
        self.calls += 1
        need: dict[str, tuple[RolloutTarget, int]] = {}  # one request per distinct prefix, for its largest want
        for target, want in zip(targets, wants, strict=True):
            have = self.cached(target.prefix_hash)
            if want > have and want - have > need.get(target.prefix_hash, (target, 0))[1]:
                need[target.prefix_hash] = (target, want - have)
        by_missing: dict[int, list[RolloutTarget]] = defaultdict(list)
        for target, missing in need.values():
            by_missing[missing].append(target)
        before = {t.prefix_hash: self.cached(t.prefix_hash) for t in targets}
        for missing, group in sorted(by_missing.items()):
            self._fill(group, missing)
        served = [self._cache.get(t.prefix_hash, [])[:want] for t, want in zip(targets, wants, strict=True)]
        handed: dict[str, int] = {}  # fresh outcomes of this call already served, per prefix
        for target, outcomes in zip(targets, served, strict=True):
            h = target.prefix_hash
            fresh = max(0, len(outcomes) - before[h])
            first_time = max(0, fresh - handed.get(h, 0))
            handed[h] = max(handed.get(h, 0), fresh)
            self.reused_rollouts += len(outcomes) - first_time
        return served

    def _fill(self, group: list[RolloutTarget], missing: int) -> None:
        # A seed per (call content): a top-up of a prefix gets new seeds, so it never repeats stored texts.
        key = "|".join(f"{t.prefix_hash}:{self.cached(t.prefix_hash)}" for t in group)
        seed = int(hashlib.sha1(f"{self._seed}/{missing}/{key}".encode()).hexdigest(), 16) % SEED_MODULUS
        rows = self._source(group, missing, seed)
        self.engine_calls += 1
        offsets = {t.prefix_hash: self.cached(t.prefix_hash) for t in group}
        for row in rows:
            row["rollout_idx"] = offsets[row["prefix_hash"]] + int(row["rollout_idx"])  # position in the prefix
            self._new.append(row)
            if _usable(row):
                self._cache[row["prefix_hash"]].append(_outcome(row))
                self.fresh_rollouts += 1

    def drain_new_rows(self) -> list[dict[str, Any]]:
        rows, self._new = self._new, []
        return rows


def backend_sampler(backend: GenerationBackend, existing_rows: Iterable[Mapping[str, Any]] = (), *, model: str,
                    seed: int = 0, max_tokens: int = 256, temperature: float = 1.0) -> CachedRolloutSampler:
    """The production sampler: :func:`prm.datagen.rollouts.rollout_rows` on ``backend`` behind the cache.

    ``existing_rows`` are ``rollouts`` rows already in the warehouse (any labeler, any run) and ``model``
    must name the policy that produced them: outcomes of another policy are not this policy's MC.
    """
    existing = list(existing_rows)
    stale = {r.get("model") for r in existing} - {model}
    if stale:
        raise ValueError(f"existing rollouts come from {sorted(map(str, stale))}, not {model!r}; "
                         "filter the rollouts table to the policy being labeled")

    def source(targets: Sequence[RolloutTarget], n: int, call_seed: int) -> list[dict[str, Any]]:
        return rollout_rows(backend, targets, n, model=model, seed=call_seed, max_tokens=max_tokens,
                            temperature=temperature)

    return CachedRolloutSampler(source, existing, seed=seed)
