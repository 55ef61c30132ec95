"""Rollouts from step prefixes: the Monte-Carlo primitive, stored in ``rollouts`` and shared by labelers."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import Segmented
from prm.generation import GenerationBackend, rollouts_from_prefixes
from prm.tasks import stable_id
from verifiers import extract_answer, grade_answers


@dataclass(frozen=True)
class RolloutTarget:
    """Roll out from the prefix made of ``steps[: step_idx + 1]`` of one solution."""

    solution_id: str
    problem_id: str
    step_idx: int
    prefix: str  # formatted prompt + the completion up to the end of step step_idx (see prefix_target)
    gold_answer: str

    @property
    def prefix_hash(self) -> str:
        """Identifies the exact prefix text, so any labeler reuses rollouts already paid for."""
        return hashlib.sha1(self.prefix.encode("utf-8")).hexdigest()[:16]


def prefix_target(solution_id: str, problem_id: str, prompt: str, seg: Segmented, step_idx: int,
                  gold_answer: str) -> RolloutTarget:
    """The rollout target of steps ``0..step_idx`` of ``seg``: the only place a rollout prefix is rendered.

    The prefix is ``prompt + seg.prefix(step_idx)``, the model's own characters (``step_idx = -1``: the
    question alone), so the rollouts asset and every labeler hash the same prefix the same way.

    >>> from prm.format import segment
    >>> prefix_target("s", "p", "Q\\n", segment("1+1 = 2\\r\\n2+2 = 4"), 0, "4").prefix
    'Q\\n1+1 = 2\\r\\n'
    """
    return RolloutTarget(solution_id=solution_id, problem_id=problem_id, step_idx=step_idx,
                         prefix=prompt + seg.prefix(step_idx), gold_answer=gold_answer)


def rollout_rows(
    backend: GenerationBackend,
    targets: Sequence[RolloutTarget],
    n: int,
    *,
    model: str,
    seed: int | None,
    max_tokens: int = 256,
    temperature: float = 1.0,
    top_p: float = 1.0,
    stop: Sequence[str] = (),
    answer_of: Callable[[str], str | None] = extract_answer,
) -> list[dict[str, Any]]:
    """``n`` rollouts per distinct prefix in one batched call; each row says whether it reached gold.

    Targets with the same prefix (two samples that begin with the same steps) are rolled out once, under
    the first of them: rollouts belong to a prefix, and labelers find them by ``prefix_hash``. Failed
    requests become rows with ``finish_reason='error'`` and ``is_correct`` null, never dropped.
    """
    targets = list({t.prefix_hash: t for t in reversed(targets)}.values())[::-1]  # first target per prefix
    completions = rollouts_from_prefixes(backend, [t.prefix for t in targets], n, max_tokens=max_tokens,
                                         temperature=temperature, top_p=top_p, stop=tuple(stop), seed=seed)
    rows: list[dict[str, Any]] = []
    grades: list[tuple[str | None, str]] = []
    for target, completion in zip(targets, completions, strict=True):
        base = {"solution_id": target.solution_id, "problem_id": target.problem_id, "step_idx": target.step_idx,
                "prefix_hash": target.prefix_hash, "model": model, "seed": seed}
        if not completion.ok:
            rows += [{**base, "rollout_id": stable_id("ro", target.prefix_hash, model, str(seed), str(j)),
                      "rollout_idx": j, "text": "", "finish_reason": "error", "completion_tokens": 0}
                     for j in range(n)]
            continue
        for j, text in enumerate(completion.texts):
            answer = answer_of(text)
            grades.append((answer, target.gold_answer))
            rows.append({**base, "rollout_id": stable_id("ro", target.prefix_hash, model, str(seed), str(j)),
                         "rollout_idx": j, "text": text, "final_answer": answer,
                         "finish_reason": completion.finish_reasons[j],
                         "completion_tokens": completion.completion_tokens[j]})
    graded = iter(grade_answers(grades))
    for row in rows:
        if row["finish_reason"] != "error":
            row["is_correct"] = next(graded)
    return rows


def mc_by_step(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per step index: graded rollouts and their mean MC (share reaching gold), with a bar, for a table.

    >>> mc_by_step([{"step_idx": 0, "is_correct": True}, {"step_idx": 0, "is_correct": False}])[0]["mean MC"]
    '0.50'
    """
    curve: dict[int, list[bool]] = defaultdict(list)
    for r in rows:
        if r.get("is_correct") is not None:
            curve[r["step_idx"]].append(bool(r["is_correct"]))
    return [{"step": k, "rollouts": len(v), "mean MC": f"{sum(v) / len(v):.2f}",
             "": "█" * round(20 * sum(v) / len(v))} for k, v in sorted(curve.items())]
