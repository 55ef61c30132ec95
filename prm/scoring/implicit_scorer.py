"""Scoring with an LM-head PRM (a folder written by :func:`prm.training.implicit.train_implicit_prm`): a step's
score is ``sigmoid(beta * sum log(pi / pi_ref))`` over its own tokens (trained on step labels) or over the prefix
up to it (trained on outcomes, PRIME's Q value). The reference is the model its ``implicit_prm.json`` names
(``reference``).

:func:`prm.scoring.load_prm` returns this scorer for such a folder, so evaluation, search and the reward server
score with it like any PRM; vLLM's pooling runner does not serve it (it needs a second model's log-probs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from prm.format import ContextOverflowError
from prm.implicit_recipe import IMPLICIT_CONFIG_FILE, check_reference_tokenizer, read_recipe, read_scoring_rule
from prm.scoring.base import StepScorer, context_of
from prm.scoring.config import ScorerConfig
from prm.scoring.protocol import Scorer
from prm.scoring.reading import Encoded, encode_solution, token_logprobs

IMPLICIT_SCORES = ("step", "prefix")  # sigmoid of one step's reward, or of the prefix's (the Q value)


def token_log_ratios(logp: torch.Tensor, ref_logp: torch.Tensor, ref_floor: float | None) -> torch.Tensor:
    """Each token's ``log pi - log max(pi_ref, ref_floor)``.

    Without a floor a token the reference finds unlikely has a large negative ``log pi_ref`` and the ratio comes
    out large and positive wherever fine-tuning left ``log pi`` less negative: text the policy would never
    write ("hello world") then scores as good. Against the floor such a token contributes ``log(pi / floor)``,
    which is positive only where the fine-tuned PRM itself finds the token likely.

    >>> lp, ref = torch.log(torch.tensor([0.9, 0.001])), torch.log(torch.tensor([0.9, 0.00001]))
    >>> [round(x, 2) for x in token_log_ratios(lp, ref, None).tolist()]
    [0.0, 4.61]
    >>> [round(x, 2) for x in token_log_ratios(lp, ref, 0.05).tolist()]
    [0.0, -3.91]
    """
    if ref_floor is None:
        return logp - ref_logp
    return logp - torch.clamp(ref_logp, min=math.log(ref_floor))


def implicit_step_readings(model: Any, ref: Any, tokenizer: Any, items: Sequence[tuple[str, Sequence[str]]], *,
                           beta: float, batch_size: int = 32, ref_floor: float | None = None
                           ) -> list[list[tuple[float, float]]]:
    """Per solution, per step: its reward ``beta * sum log(pi / max(pi_ref, ref_floor))`` over the step's tokens,
    and the mean log-probability the reference gives those tokens (how far the step is from what the policy
    writes: :func:`off_policy`)."""
    encoded = [encode_solution(tokenizer, q, steps) for q, steps in items]
    # Batches of similar lengths: a batch is padded to its longest item, so one long solution among short ones
    # would make every item in its batch cost as much as it does.
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
    out: list[list[tuple[float, float]]] = [[] for _ in encoded]
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            chunk = [encoded[j] for j in order[i: i + batch_size]]
            for j, e, a, b in zip(order[i: i + batch_size], chunk, token_logprobs(model, chunk),
                                  token_logprobs(ref, chunk), strict=True):
                ratio = token_log_ratios(a, b, ref_floor)
                out[j] = [(beta * float(ratio[s:t].sum()), float(b[s:t].mean())) for s, t in e.spans]
    return out


def implicit_step_rewards(model: Any, ref: Any, tokenizer: Any, items: Sequence[tuple[str, Sequence[str]]], *,
                          beta: float, batch_size: int = 32, ref_floor: float | None = None) -> list[list[float]]:
    """Per solution, per step: ``beta * sum of log(pi / max(pi_ref, ref_floor))`` over the step's tokens."""
    readings = implicit_step_readings(model, ref, tokenizer, items, beta=beta, batch_size=batch_size,
                                      ref_floor=ref_floor)
    return [[reward for reward, _ in steps] for steps in readings]


def off_policy(ref_mean_logprob: float, limit: float | None) -> bool | None:
    """Whether a step is far from what the PRM was trained on: its tokens' mean log-probability under the
    reference is below ``limit`` (the PRM's measured rule, ``ood_ref_logprob`` in its recipe); None without one.

    >>> off_policy(-6.0, -2.5), off_policy(-0.1, -2.5), off_policy(-6.0, None)
    (True, False, None)
    """
    return None if limit is None else ref_mean_logprob < limit


def sigmoid(x: float) -> float:
    """The logistic function without overflow: a step reward below -709 (a very long wrong step) is 0.0, not an
    OverflowError.

    >>> sigmoid(0.0), sigmoid(-1000.0), sigmoid(1000.0)
    (0.5, 0.0, 1.0)
    """
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def implicit_scores(rewards: Sequence[Sequence[float]], how: str) -> list[list[float]]:
    """P(good)-like scores: sigmoid of each step's reward (``step``) or of the running sum (``prefix``).

    >>> implicit_scores([[0.0, math.log(3)]], "step"), implicit_scores([[0.0, math.log(3)]], "prefix")
    ([[0.5, 0.75]], [[0.5, 0.75]])
    """
    if how not in IMPLICIT_SCORES:
        raise ValueError(f"how={how!r} must be one of {IMPLICIT_SCORES}")
    out = []
    for steps in rewards:
        running, scores = 0.0, []
        for r in steps:
            running += r
            x = r if how == "step" else running
            scores.append(sigmoid(x))
        out.append(scores)
    return out


@dataclass(frozen=True)
class StepAssessment:
    """One step's P(good) and whether it is far from the text the PRM was trained on (None: no rule)."""

    score: float
    off_policy: bool | None


def assess_batch(scorer: Scorer, items: Sequence[tuple[str, Sequence[str]]], batch_size: int | None = None
                 ) -> list[list[StepAssessment]]:
    """Scores and off-policy flags from any scorer: its own ``assess_batch`` where it has one (an LM-head PRM),
    else its ``score_batch`` with no flag (None: the PRM has no off-policy rule).

    >>> class Half:
    ...     def score_batch(self, items, batch_size=None):
    ...         return [[0.5] * len(steps) for _, steps in items]
    >>> assess_batch(Half(), [("q", ["1+1 = 2"])])
    [[StepAssessment(score=0.5, off_policy=None)]]
    """
    own = getattr(scorer, "assess_batch", None)
    if own is not None:
        return own(items, batch_size=batch_size)
    return [[StepAssessment(float(x), None) for x in row] for row in scorer.score_batch(items, batch_size=batch_size)]


class Assessing:
    """:meth:`score_steps`, :meth:`score_batch` and :meth:`assess_steps` of a scorer that implements
    :meth:`assess_batch` (scores with off-policy flags)."""

    def assess_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                     batch_size: int | None = None) -> list[list[StepAssessment]]:
        raise NotImplementedError

    def score_steps(self, problem: str, steps: Sequence[str]) -> list[float]:
        """P(step is good) for every step, in order; ``[]`` for no steps."""
        return self.score_batch([(problem, steps)], batch_size=1)[0]

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                    batch_size: int | None = None) -> list[list[float]]:
        """:meth:`score_steps` of every ``(problem, steps)``, in order."""
        return [[a.score for a in steps] for steps in self.assess_batch(items, batch_size)]

    def assess_steps(self, problem: str, steps: Sequence[str]) -> list[StepAssessment]:
        """Every step's score and whether it is off-policy (:func:`off_policy`); ``[]`` for no steps."""
        return self.assess_batch([(problem, steps)], batch_size=1)[0]


class ImplicitPRMScorer(Assessing, StepScorer):
    """An LM-head PRM and its reference in this process: :meth:`score_steps`, :meth:`score_batch`, :meth:`encode`
    (raises :class:`ContextOverflowError` past the model's context), as :class:`prm.scoring.PRMScorer` offers.

    A :class:`~prm.scoring.base.StepScorer` that reads no step tags (``convention`` is None): it encodes each
    step's token span and scores from both models' log-probs, plus :meth:`assess_batch`'s off-policy flags.
    """

    engine = "transformers"

    def __init__(self, model: Any, ref: Any, tokenizer: Any, *, beta: float, how: str,
                 config: ScorerConfig | None = None, folder: str | Path | None = None,
                 ref_floor: float | None = None, ood_ref_logprob: float | None = None) -> None:
        config = config or ScorerConfig()
        super().__init__(tokenizer, None, config, folder, config.max_length or context_of(model.config, tokenizer))
        self.model, self.ref, self.beta, self.how = model, ref, beta, how
        self.ref_floor, self.ood_ref_logprob = ref_floor, ood_ref_logprob

    def encode(self, problem: str, steps: Sequence[str]) -> Encoded:
        """The ids the PRM reads and each step's token span."""
        encoded = encode_solution(self.tokenizer, problem, list(steps))
        if self.max_length is not None and len(encoded.input_ids) > self.max_length:
            raise ContextOverflowError(f"{len(encoded.input_ids)} tokens exceed the PRM's context of "
                                       f"{self.max_length}; score fewer steps or a shorter problem")
        return encoded

    def assess_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                     batch_size: int | None = None) -> list[list[StepAssessment]]:
        """:meth:`assess_steps` of every ``(problem, steps)``, in order."""
        self.encode_items(items)  # the context check, naming the item that does not fit
        keep = [i for i, (_, steps) in enumerate(items) if steps]
        readings = implicit_step_readings(self.model, self.ref, self.tokenizer,
                                          [(items[i][0], list(items[i][1])) for i in keep], beta=self.beta,
                                          batch_size=batch_size or self.config.batch_size or 32,
                                          ref_floor=self.ref_floor)
        scored = implicit_scores([[r for r, _ in steps] for steps in readings], self.how)
        out: list[list[StepAssessment]] = [[] for _ in items]
        for i, row, steps in zip(keep, scored, readings, strict=True):
            out[i] = [StepAssessment(x, off_policy(lp, self.ood_ref_logprob)) for x, (_, lp) in
                      zip(row, steps, strict=True)]
        return out

    def close(self) -> None:
        """Nothing to release: both models live in this process."""


def is_lm_head_folder(folder: str | Path) -> bool:
    """Whether ``folder`` holds an LM-head PRM (it has ``implicit_prm.json``) rather than a classification head."""
    return (Path(folder) / IMPLICIT_CONFIG_FILE).is_file()


def load_implicit_prm(folder: str | Path, config: ScorerConfig | None = None,
                      convention: object = None) -> ImplicitPRMScorer:
    """The LM-head PRM in ``folder`` and the reference its ``implicit_prm.json`` names; each step scored on its
    own (``step``) when it was trained on step labels, by its prefix (``prefix``) when trained on outcomes.
    The recipe is validated (:mod:`prm.implicit_recipe`) and a reference whose tokenizer is not the one
    the PRM was trained against is refused. ``convention`` is ignored: an LM-head PRM reads no step tags (the
    ``lm`` kind's loader, :data:`prm.scoring.PRM_KINDS`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import resolve_model

    config = config or ScorerConfig()
    if config.engine != "transformers":
        raise ValueError(f"{folder} is an LM-head PRM (it has {IMPLICIT_CONFIG_FILE}): vLLM's pooling runner cannot "
                         "score it (it needs a reference model's log-probs); use the transformers engine")
    folder = Path(folder)
    base, beta, labels = read_recipe(folder)
    floor, limit = read_scoring_rule(folder)
    if config.torch_threads:
        torch.set_num_threads(config.torch_threads)
    reference = str(resolve_model(base))
    check_reference_tokenizer(folder, base, AutoTokenizer.from_pretrained(reference))
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    ref = AutoModelForCausalLM.from_pretrained(reference).eval()
    return ImplicitPRMScorer(model, ref, AutoTokenizer.from_pretrained(str(folder)), beta=beta,
                             how="step" if labels == "step" else "prefix", config=config, folder=folder,
                             ref_floor=floor, ood_ref_logprob=limit)
