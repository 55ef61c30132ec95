"""ActPRM's uncertainty estimate: an ensemble of small heads on one frozen PRM backbone.

:func:`step_features` reads, for every step, the PRM's last hidden state where the PRM scores the step (a tagged
PRM's step tag, an LM-head PRM's last token of the step) and the PRM's own logit. :class:`HeadEnsemble` fits
``heads`` logistic heads on those features, each on a seeded bootstrap resample of labeled *solutions*, so the
heads agree where labels are dense and split where they are thin. As an
:class:`~prm.labeling.uncertainty.Uncertainty` its belief of a step is the heads' mean P(good) and their
population standard deviation, which ActPRM's trust rule (:func:`prm.labeling.uncertainty.is_trusted`) reads.

ActPRM (Duan et al. 2025) trains its heads as the PRM itself; here the PRM stays as trained and the heads are fit
on the labels a seed set already bought, in seconds on CPU. It needs a PRM run by transformers in this process
(a ``model`` whose forward returns hidden states).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from prm.labeling.uncertainty import Items, StepBelief
from prm.scoring import Scorer, right_padded

_LOGIT_CLIP = 1e-6  # the PRM's P(good) is clipped to [eps, 1 - eps] before its logit becomes a feature


def _positions(encoded: Any) -> list[int]:
    """Where the PRM reads each step: its tag (a tagged PRM) or its last token (an LM-head PRM's span)."""
    if hasattr(encoded, "tag_positions"):
        return list(encoded.tag_positions)
    return [end - 1 for _, end in encoded.spans]


def step_features(scorer: Scorer, items: Items, batch_size: int = 16) -> list[np.ndarray]:
    """Per item, a ``[steps, hidden + 1]`` array: the PRM's last hidden state at each step's reading position and
    the logit of the PRM's own P(good) of the step. An item without steps gets a ``[0, hidden + 1]`` array."""
    model = getattr(scorer, "model", None)
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"a head ensemble reads the PRM's hidden states; {type(scorer).__name__} holds no torch "
                        "model in this process (load the PRM with the transformers engine)")
    probs = scorer.score_batch(list(items))
    device = next(model.parameters()).device
    width_hidden = int(model.config.hidden_size)
    out: list[np.ndarray] = [np.zeros((0, width_hidden + 1))] * len(items)
    keep = [i for i, (_, steps) in enumerate(items) if steps]
    for start in range(0, len(keep), batch_size):
        chunk = keep[start: start + batch_size]
        encoded = [scorer.encode(items[i][0], list(items[i][1])) for i in chunk]
        ids, mask = right_padded([e.input_ids for e in encoded])
        with torch.inference_mode():
            hidden = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                           output_hidden_states=True).hidden_states[-1].float().cpu()
        for b, (i, e) in enumerate(zip(chunk, encoded, strict=True)):
            p = np.clip(np.asarray(probs[i], dtype=float), _LOGIT_CLIP, 1 - _LOGIT_CLIP)
            out[i] = np.concatenate([hidden[b, _positions(e)].numpy(), np.log(p / (1 - p))[:, None]], axis=1)
    return out


def _fit_head(x: torch.Tensor, y: torch.Tensor, l2: float) -> torch.Tensor:
    """Weights (bias last) of an L2-regularised logistic regression, by L-BFGS."""
    w = torch.zeros(x.shape[1] + 1, dtype=torch.float64, requires_grad=True)
    design = torch.cat([x, torch.ones(len(x), 1, dtype=torch.float64)], dim=1)
    opt = torch.optim.LBFGS([w], max_iter=200, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(design @ w, y) + l2 * (w[:-1] ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach()


class HeadEnsemble:
    """``heads`` logistic heads on frozen PRM features, each fit on a bootstrap resample of labeled solutions
    (``columns``: the feature columns the heads read; None = all, ``[-1]`` = the PRM's logit alone, a Platt
    calibration of the PRM).

    >>> import numpy as np
    >>> feats = [np.array([[0.0, 3.0], [0.0, -3.0]]), np.array([[0.0, 2.5]])] * 4
    >>> ens = HeadEnsemble(heads=4, seed=0).fit(feats, [[True, False], [True]] * 4)
    >>> b = ens.beliefs_of([np.array([[0.0, 3.0], [0.0, -3.0]])])[0]
    >>> b.probs[0] > 0.5 > b.probs[1], len(b.spread)
    (True, 2)
    """

    def __init__(self, heads: int = 32, seed: int = 0, l2: float = 1e-2, columns: Sequence[int] | None = None) -> None:
        if heads < 1:
            raise ValueError(f"heads={heads} must be >= 1 (one head is a calibration of the features, no spread)")
        self.heads, self.seed, self.l2 = heads, seed, l2
        self.columns = None if columns is None else list(columns)
        self._weights: torch.Tensor | None = None  # [heads, features + 1]
        self._mean = self._scale = np.zeros(0)

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[Sequence[bool]]) -> HeadEnsemble:
        """Fit every head on a bootstrap resample of the solutions (``features[i]`` and its step ``labels[i]``)."""
        pairs = [(self._cols(f), np.asarray(y, dtype=float)) for f, y in zip(features, labels, strict=True) if len(y)]
        if any(len(f) != len(y) for f, y in pairs):
            raise ValueError("each solution needs one label per step of its features")
        every = np.concatenate([y for _, y in pairs]) if pairs else np.zeros(0)
        if not len(every) or every.min() == every.max():
            raise ValueError("a head ensemble needs labeled steps of both classes (good and bad) to fit")
        stacked = np.concatenate([f for f, _ in pairs])
        self._mean, self._scale = stacked.mean(0), stacked.std(0) + 1e-8
        rng = random.Random(self.seed)
        weights = []
        for _ in range(self.heads):
            sample = [pairs[rng.randrange(len(pairs))] for _ in pairs]
            x = torch.tensor((np.concatenate([f for f, _ in sample]) - self._mean) / self._scale)
            y = torch.tensor(np.concatenate([y for _, y in sample]))
            weights.append(_fit_head(x, y, self.l2))
        self._weights = torch.stack(weights)
        return self

    def beliefs_of(self, features: Sequence[np.ndarray]) -> list[StepBelief]:
        """The heads' mean P(good) and population std per step of each solution's features."""
        if self._weights is None:
            raise RuntimeError("fit the ensemble on labeled solutions first (HeadEnsemble.fit)")
        out = []
        for f in features:
            if not len(f):
                out.append(StepBelief((), ()))
                continue
            x = torch.tensor((self._cols(f) - self._mean) / self._scale)
            design = torch.cat([x, torch.ones(len(x), 1, dtype=torch.float64)], dim=1)
            p = torch.sigmoid(design @ self._weights.T)  # [steps, heads]
            out.append(StepBelief(tuple(p.mean(1).tolist()), tuple(p.std(1, unbiased=False).tolist())))
        return out

    def _cols(self, features: np.ndarray) -> np.ndarray:
        return features if self.columns is None else features[:, self.columns]

    def beliefs(self, scorer: Scorer, items: Items) -> list[StepBelief]:
        """:class:`~prm.labeling.uncertainty.Uncertainty`: the beliefs of ``items`` as ``scorer``'s PRM reads them."""
        return self.beliefs_of(step_features(scorer, items))

