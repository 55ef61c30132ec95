"""The label-method table: every method's name, kind, display name, recipe key and asset (:func:`method`,
:func:`method_names`), the names code refers to (:data:`TRUTH`, :data:`JUDGE`, :data:`CONSENSUS`), and the lists
derived from the table (:data:`LABEL_SOURCES`, :data:`REFERENCE_METHODS`, :data:`COMPARED_METHODS`, the recipe's
vocabulary and the label assets). The rows live in ``warehouse/methods/table.py`` (docs/how-to/add-label-method.md).
"""

from warehouse.methods.table import (
    COMPARED_METHODS,
    CONSENSUS,
    JUDGE,
    LABEL_SOURCES,
    REFERENCE_METHODS,
    TRUTH,
    label_assets,
    method,
    method_names,
    opt_in_label_assets,
    recipe_label_assets,
)

__all__ = [
    "COMPARED_METHODS",
    "CONSENSUS",
    "JUDGE",
    "LABEL_SOURCES",
    "REFERENCE_METHODS",
    "TRUTH",
    "label_assets",
    "method",
    "method_names",
    "opt_in_label_assets",
    "recipe_label_assets",
]
