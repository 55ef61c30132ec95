"""ActPRM's head ensemble on the shipped LM-head PRM's frozen features: one feature row per step, seeded fits that
repeat, heads that disagree where one head cannot, and a clear error for a scorer with no model in this process."""

from __future__ import annotations

import numpy as np
import pytest

from prm.labeling.head_ensemble import HeadEnsemble, step_features
from prm.scoring import load_prm

ITEMS = [("Tom has 3 apples and gets 4 more. How many?", ["3 + 4 = 7"]),
         ("Ann has 9 pens and loses 2, then gets 5. How many?", ["9 - 2 = 7", "7 + 5 = 12"]),
         ("Bob has 6 cards and gives 1 away. How many?", ["6 - 1 = 4"]),
         ("Sue has 2 hats and buys 2 more, then 3 more. How many?", ["2 + 2 = 4", "4 + 3 = 8"]),
         ("Nobody asked", [])]
LABELS = [[True], [True, True], [False], [True, False], []]


@pytest.fixture(scope="module")
def scorer():
    return load_prm("arith-prm")


def test_features_hold_one_row_per_step_and_the_prms_own_logit_last(scorer) -> None:
    features = step_features(scorer, ITEMS, batch_size=2)
    hidden = scorer.model.config.hidden_size
    assert [f.shape for f in features] == [(1, hidden + 1), (2, hidden + 1), (1, hidden + 1), (2, hidden + 1),
                                           (0, hidden + 1)]
    probs = scorer.score_batch(ITEMS)
    for f, p in zip(features[:4], probs[:4], strict=True):
        np.testing.assert_allclose(1 / (1 + np.exp(-f[:, -1])), p, rtol=1e-5, atol=1e-6)


def test_a_seeded_ensemble_repeats_and_its_heads_disagree_where_a_single_head_cannot(scorer) -> None:
    features = step_features(scorer, ITEMS)
    first = HeadEnsemble(heads=8, seed=3).fit(features, LABELS).beliefs_of(features)
    again = HeadEnsemble(heads=8, seed=3).fit(features, LABELS).beliefs_of(features)
    assert first == again
    assert max(s for b in first for s in b.spread) > 0.0
    single = HeadEnsemble(heads=1, seed=3, columns=[-1]).fit(features, LABELS).beliefs_of(features)
    assert all(s == 0.0 for b in single for s in b.spread)
    assert [len(b.probs) for b in first] == [1, 2, 1, 2, 0]


def test_one_class_of_labels_or_no_model_is_a_clear_error(scorer) -> None:
    features = step_features(scorer, ITEMS)
    with pytest.raises(ValueError, match="both classes"):
        HeadEnsemble(heads=2).fit(features, [[True], [True, True], [True], [True, True], []])

    class Remote:
        def score_batch(self, items, batch_size=None):
            return [[0.5] * len(s) for _, s in items]

    with pytest.raises(TypeError, match="holds no torch model"):
        step_features(Remote(), ITEMS)
    with pytest.raises(RuntimeError, match="fit the ensemble"):
        HeadEnsemble(heads=2).beliefs_of(features)
