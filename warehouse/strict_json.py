"""Strict JSON from DuckDB's COPY: NaN and the infinities become null.

DuckDB writes a non-finite FLOAT or DOUBLE as the bare words ``NaN``, ``Infinity`` and ``-Infinity`` in
``COPY ... (FORMAT json)``. JSON has no such numbers (RFC 8259, section 6): Python reads them, but ``jq``,
JavaScript's ``JSON.parse`` and most other parsers refuse the whole line. So the export selects every such
value as NULL instead, inside lists, arrays, structs, maps and unions too, and the file is strict JSON. A map
key stays as it is: JSON writes keys as strings, where ``"NaN"`` is valid.
"""

from __future__ import annotations

from typing import Any

import duckdb

_FLOATS = frozenset({"float", "double"})
_NESTED = frozenset({"list", "array", "struct", "map", "union"})


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _members(dtype: Any) -> dict[str, Any]:
    """The named child types of a nested type ({} for the rest, whose ``children`` are sizes, enum values or a
    decimal's precision); a union's first child is its tag, not a member."""
    if dtype.id not in _NESTED:
        return {}
    children = dtype.children[1:] if dtype.id == "union" else dtype.children
    return {name: child for name, child in children if hasattr(child, "id")}  # an array's size is an int


def _has_float(dtype: Any) -> bool:
    return dtype.id in _FLOATS or any(_has_float(child) for child in _members(dtype).values())


def _finite(expr: str, dtype: Any, depth: int) -> str:
    """SQL for ``expr`` of type ``dtype`` with every non-finite float NULL (JSON output: a list stands for an
    array, so an array's type need not be restored)."""
    if dtype.id in _FLOATS:
        return f"CASE WHEN isfinite({expr}) THEN {expr} END"
    if not _has_float(dtype):
        return expr
    var = f"_prm_json_{depth}"  # a lambda parameter no column is likely to be named
    members = _members(dtype)
    if dtype.id in ("list", "array"):
        return f"list_transform({expr}, lambda {var}: {_finite(var, members['child'], depth + 1)})"
    if dtype.id == "map":
        value = _finite(f"{var}.value", members["value"], depth + 1)
        return (f"map_from_entries(list_transform(map_entries({expr}), "
                f"lambda {var}: struct_pack(key := {var}.key, value := {value})))")
    if dtype.id == "struct":
        fields = ", ".join(f"{_ident(name)} := {_finite(f'struct_extract({expr}, {_literal(name)})', child, depth)}"
                           for name, child in members.items())
        return f"CASE WHEN {expr} IS NULL THEN NULL ELSE struct_pack({fields}) END"
    whens = " ".join(  # a union: rebuild the member it holds when that member has floats
        f"WHEN {_literal(name)} THEN union_value({_ident(name)} := "
        f"{_finite(f'union_extract({expr}, {_literal(name)})', child, depth)})"
        for name, child in members.items() if _has_float(child))
    return f"CASE union_tag({expr}) {whens} ELSE {expr} END"


def strict_json_source(rel: duckdb.DuckDBPyRelation, view: str) -> str:
    """What ``COPY <source> TO ... (FORMAT json)`` should read for ``rel`` registered as ``view``: the view
    itself when no column holds a float, else a SELECT that turns non-finite floats into NULL.

    >>> con = duckdb.connect()
    >>> rel = con.sql("SELECT 'nan'::DOUBLE AS x, [1.5, 'inf'::DOUBLE] AS xs, 'a' AS s")
    >>> con.register("v", rel).sql(strict_json_source(rel, "v")[1:-1]).fetchall()
    [(None, [1.5, None], 'a')]
    """
    if not any(_has_float(dtype) for dtype in rel.types):
        return view
    columns = ", ".join(f"{_finite(f'#{i}', dtype, 0)} AS {_ident(name)}"
                        for i, (name, dtype) in enumerate(zip(rel.columns, rel.types, strict=True), 1))
    return f"(SELECT {columns} FROM {view})"
