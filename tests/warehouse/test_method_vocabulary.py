"""The method table names every label method's recipe key and asset: the recipe's vocabulary, the label assets and
the registry's computed methods are read from it, and a malformed row is refused when the table is built."""

from __future__ import annotations

import pytest

from warehouse.methods import label_assets, method, recipe_label_assets
from warehouse.methods.table import METHODS, Method


def test_the_recipe_vocabulary_is_the_one_the_recipes_have_always_used() -> None:
    assert recipe_label_assets() == {"mc": "mc_labels", "omegaprm": "omegaprm_labels",
                                     "progress": "progress_labels", "formal": "formal_verifications",
                                     "judge": "judgments", "consensus": "consensus_labels"}
    assert [method(n).recipe_key for n in ("mc", "mc_early_stop", "sympy", "z3", "sympy_ref", "judge")] == \
        ["mc", "mc", "formal", "formal", "formal", "judge"]


def test_every_computed_method_is_written_by_exactly_one_asset() -> None:
    assets = label_assets()
    assert assets["mc_labels"] == ("mc", "mc_early_stop")
    assert assets["formal_verifications"] == ("sympy", "z3", "sympy_ref")
    written = [n for names in assets.values() for n in names]
    assert written == [m.name for m in METHODS if m.computed] and len(set(written)) == len(written)
    assert method("human").asset_key is None and method("human").recipe_key is None
    # every method of the checkout has a hand-written asset but the opt-in ones, made from the registry
    assert [m.name for m in METHODS if m.generated] == ["mc_adaptive", "active"]


def test_a_row_without_recipe_or_asset_takes_its_name() -> None:
    row = Method("blank", "formal", "Empty steps are wrong")
    assert (row.recipe_key, row.asset_key, row.generated) == ("blank", "blank_labels", True)


@pytest.mark.parametrize(("row", "message"), [
    (lambda: Method("Blank", "formal", "x"), "lower-case letters"),
    (lambda: Method("a; DROP TABLE steps", "formal", "x"), "lower-case letters"),
    (lambda: Method("x" * 41, "formal", "x"), "at most 40 characters"),
    (lambda: Method("people", "human", "x", asset="people_labels"), "no labeler computes"),
    (lambda: Method("blank", "formula", "x"), "use one of"),
])
def test_a_malformed_row_is_refused(row, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        row()
