"""Row validation: turn user rows into an Arrow table of a table's schema, or say exactly what is wrong.

Three layers, all before anything reaches the disk: the Arrow type of every value (a lossy conversion
such as 1.5 into an int column is refused, not truncated), the value rules the schema declares
(:data:`warehouse.schemas.VALUE_RULES`, plus finite floats everywhere), and unique primary keys within
the write. Each error names the table, column, row and value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from warehouse.schemas import PRIMARY_KEYS, VALUE_RULES

Rows = pa.Table | Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


class SchemaError(ValueError):
    """Rows do not fit a table's schema; the message names the table, column and row."""


def _columns(table: str, rows: Rows) -> tuple[dict[str, Any], int]:
    if isinstance(rows, pa.Table):
        return {name: rows.column(name) for name in rows.column_names}, rows.num_rows
    if isinstance(rows, Mapping):
        lengths = {name: len(values) for name, values in rows.items()}
        if len(set(lengths.values())) > 1:
            raise SchemaError(f"{table}: columns have different lengths {lengths}")
        return dict(rows), next(iter(lengths.values()), 0)
    columns: dict[str, list[Any]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise SchemaError(f"{table}: row {i} is a {type(row).__name__}, expected a mapping of column to value")
        for name in row:
            if name not in columns:
                columns[name] = [None] * i
        for name, values in columns.items():
            values.append(row.get(name))
    return columns, len(rows)


def _convert(values: Any, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    """``values`` as ``field.type``; raises instead of losing information."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        return values if values.type == field.type else values.cast(field.type)  # a safe cast refuses 1.5 -> 1
    if pa.types.is_integer(field.type):
        # pa.array([1.5], type=pa.int32()) stores 1 without a word; infer first and cast safely instead.
        inferred = pa.array(values)
        if pa.types.is_integer(inferred.type) or pa.types.is_floating(inferred.type) or pa.types.is_null(inferred.type):
            return inferred.cast(field.type)
    return pa.array(values, type=field.type)


_CONVERSION_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError,
                      OverflowError)


def _first_bad_value(values: Sequence[Any], field: pa.Field) -> tuple[int, Any, str]:
    for i, value in enumerate(values):
        try:
            _convert([value], field)
        except _CONVERSION_ERRORS as exc:
            return i, value, str(exc)
    return -1, None, "unknown"


def _to_array(table: str, field: pa.Field, values: Any) -> pa.Array | pa.ChunkedArray:
    try:
        return _convert(values, field)
    except _CONVERSION_ERRORS as exc:
        seq = values.to_pylist() if isinstance(values, pa.Array | pa.ChunkedArray) else list(values)
        row, value, why = _first_bad_value(seq, field)
        where = f"row {row}" if row >= 0 else "a row"
        raise SchemaError(
            f"{table}.{field.name}: {where} has {value!r}, which is not {field.type} ({why or exc})"
        ) from None


def _refuse_first(table: str, data: pa.Table, column: str, bad: Any, why: str, other: str | None = None) -> None:
    """Raise for the first row where ``bad`` is true (nulls in ``bad`` count as fine); ``why`` may name
    ``{other}``, the value of column ``other`` in that row."""
    bad = pc.fill_null(bad, False)
    if not pc.any(bad).as_py():
        return
    row = pc.index(bad, True).as_py()
    value = data.column(column)[row].as_py()
    if other is not None:
        why = why.format(other=repr(data.column(other)[row].as_py()))
    raise SchemaError(f"{table}.{column}: row {row} has {value!r}, {why}")


def _check_values(table: str, data: pa.Table) -> None:
    """Finite floats everywhere, and the rules :data:`VALUE_RULES` declares for ``table``."""
    for field in data.schema:
        if pa.types.is_floating(field.type):
            column = data.column(field.name)
            _refuse_first(table, data, field.name, pc.invert(pc.is_finite(column)),
                          "which is not a finite number (store null for a missing value)")
    for name, rule in VALUE_RULES.get(table, {}).items():
        column = data.column(name)
        if rule.low is not None:
            _refuse_first(table, data, name, pc.less(column, rule.low), f"which is below the minimum {rule.low:g}")
        if rule.high is not None:
            _refuse_first(table, data, name, pc.greater(column, rule.high), f"which is above the maximum {rule.high:g}")
        if rule.one_of:
            unknown = pc.and_(pc.is_valid(column), pc.invert(pc.is_in(column, value_set=pa.array(rule.one_of))))
            _refuse_first(table, data, name, unknown, f"which is not one of {', '.join(rule.one_of)}")
        if rule.at_most is not None:
            _refuse_first(table, data, name, pc.greater(column, data.column(rule.at_most)),
                          f"which exceeds {rule.at_most} of the same row ({{other}})", other=rule.at_most)


def _check_unique_keys(table: str, data: pa.Table) -> None:
    """No two rows of one write share a primary key (the ``ids_unique`` check is the second line)."""
    key = list(PRIMARY_KEYS.get(table, ()))
    if not key or data.num_rows < 2 or not set(key) <= set(data.column_names):
        return
    indexed = data.select(key).append_column("_row", pa.array(range(data.num_rows), pa.int64()))
    groups = indexed.group_by(key).aggregate([("_row", "list"), ("_row", "count")])
    repeated = groups.filter(pc.greater(groups.column("_row_count"), 1))
    if repeated.num_rows == 0:
        return
    first = min(repeated.column("_row_list").to_pylist(), key=lambda rows: min(rows))
    a, b = sorted(first)[:2]
    value = {k: data.column(k)[a].as_py() for k in key}
    raise SchemaError(f"{table}.{', '.join(key)}: rows {a} and {b} both have key {value}; "
                      "a write must not repeat a key (drop or merge the duplicate rows)")


def validate_rows(table: str, schema: pa.Schema, rows: Rows, defaults: Mapping[str, Any] | None = None) -> pa.Table:
    """Return ``rows`` as an Arrow table with exactly ``schema``; raise SchemaError otherwise.

    ``defaults`` fill columns the rows leave out (provenance such as run_id, created_at). Zero rows
    are a valid write: no column is missing from an empty table.

    >>> import pyarrow as pa
    >>> schema = pa.schema([pa.field("x", pa.int32(), nullable=False)])
    >>> validate_rows("t", schema, [{"x": 1}, {"x": 2}]).num_rows
    2
    >>> validate_rows("t", schema, []).num_rows
    0
    >>> validate_rows("t", schema, [{"x": 1}, {"x": None}])
    Traceback (most recent call last):
    warehouse.validate.SchemaError: t.x: row 1 is null, but the column is required
    >>> validate_rows("t", schema, [{"x": 1}, {"x": 2.5}])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    warehouse.validate.SchemaError: t.x: row 1 has 2.5, which is not int32 (Float value 2.5... was truncated ...)
    """
    columns, n_rows = _columns(table, rows)
    unknown = sorted(set(columns) - set(schema.names))
    if unknown:
        raise SchemaError(f"{table}: unknown column(s) {unknown}; the schema has {schema.names}")
    arrays = []
    for field in schema:
        if field.name in columns:
            values = columns[field.name]
        elif defaults is not None and field.name in defaults:
            values = pa.array([defaults[field.name]] * n_rows, type=field.type) if n_rows else []
        elif field.nullable or n_rows == 0:
            values = pa.nulls(n_rows, type=field.type)
        else:
            raise SchemaError(f"{table}.{field.name}: required column is missing from every row")
        array = _to_array(table, field, values)
        if not field.nullable and array.null_count:
            first = pc.index(pc.is_null(array), True).as_py()
            raise SchemaError(f"{table}.{field.name}: row {first} is null, but the column is required")
        arrays.append(array)
    data = pa.Table.from_arrays(arrays, schema=schema)
    _check_values(table, data)
    _check_unique_keys(table, data)
    return data
