"""Row validation: turn user rows into an Arrow table of a table's schema, or say exactly what is wrong."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

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


def _first_bad_value(values: Sequence[Any], field: pa.Field) -> tuple[int, Any, str]:
    for i, value in enumerate(values):
        try:
            pa.array([value], type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as exc:
            return i, value, str(exc)
    return -1, None, "unknown"


def _to_array(table: str, field: pa.Field, values: Any) -> pa.Array | pa.ChunkedArray:
    try:
        if isinstance(values, pa.Array | pa.ChunkedArray):
            return values if values.type == field.type else values.cast(field.type)
        return pa.array(values, type=field.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError,
            OverflowError) as exc:
        seq = values.to_pylist() if isinstance(values, pa.Array | pa.ChunkedArray) else list(values)
        row, value, why = _first_bad_value(seq, field)
        where = f"row {row}" if row >= 0 else "a row"
        raise SchemaError(
            f"{table}.{field.name}: {where} has {value!r}, which is not {field.type} ({why or exc})"
        ) from None


def validate_rows(table: str, schema: pa.Schema, rows: Rows, defaults: Mapping[str, Any] | None = None) -> pa.Table:
    """Return ``rows`` as an Arrow table with exactly ``schema``; raise SchemaError otherwise.

    ``defaults`` fill columns the rows leave out (provenance such as run_id, created_at).

    >>> import pyarrow as pa
    >>> schema = pa.schema([pa.field("x", pa.int32(), nullable=False)])
    >>> validate_rows("t", schema, [{"x": 1}, {"x": 2}]).num_rows
    2
    >>> validate_rows("t", schema, [{"x": 1}, {"x": None}])
    Traceback (most recent call last):
    warehouse.validate.SchemaError: t.x: row 1 is null, but the column is required
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
        elif field.nullable:
            values = pa.nulls(n_rows, type=field.type)
        else:
            raise SchemaError(f"{table}.{field.name}: required column is missing from every row")
        array = _to_array(table, field, values)
        if not field.nullable and array.null_count:
            first = pc.index(pc.is_null(array), True).as_py()
            raise SchemaError(f"{table}.{field.name}: row {first} is null, but the column is required")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)
