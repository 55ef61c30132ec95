"""The model registry: which weights were built from which data, as rows of the warehouse's ``models`` table.

A :class:`ModelEntry` names a model's weights by their digest (``prm.models.weights_digest``), the model it was
warm-started from (``parent_version``), and the Delta version of every table its training set read, so
``connect(root, versions=entry.training_tables)`` reads that training data again. :func:`lineage` follows
``parent_version`` back through the ``model_lineage`` view, the same SQL ``prm-warehouse sql`` runs.

The registry only grows: :func:`register_models` appends rows and never replaces or deletes one, so a model
others name as parent, or a version an earlier run registered, is never erased by a later registration; the
current model of a partition is its newest row.

A registration is ``accepted`` or ``rejected`` (a model a blocking check refused stays registered, so lineage
through it never dangles, but :func:`latest_model` skips it); the newest registration of a version decides. The
status is kept in ``training_json`` under the reserved key ``_registry`` (absent: accepted), so rows written
before statuses existed read unchanged.

>>> import tempfile
>>> wh = Warehouse(tempfile.mkdtemp())
>>> base = ModelEntry(name="arith-policy", version="0123456789ab", kind="policy", uri="/models/arith-policy")
>>> prm = ModelEntry(name="prm", version="abcdef012345", kind="prm", uri="/models/prm",
...                  parent_version=base.version, training_tables={"steps": 3, "step_labels": 5})
>>> register_models(wh, [base, prm], source="arith", day="2026-11-24", run_id="r1", writer="doc").rows
2
>>> [m.name for m in lineage(wh.root, prm.version)]
['prm', 'arith-policy']
>>> latest_model(wh.root, "prm") == prm
True
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from warehouse.db import Snapshot, connect, snapshot_connection
from warehouse.model_views import ENTRY_COLUMNS, LINEAGE_OF, MODEL_VERSIONS, NEWEST_FIRST
from warehouse.schemas import MODEL_KINDS, TABLES
from warehouse.store import Warehouse, WriteResult

TABLE = "models"
_BATCH = 64  # rows fetched at a time while looking past malformed ones
_ROWS_NAMED = 3  # a warning about skipped rows names this many
# A newest registration ahead of this clock by more than this is named in a warning; within it, it is this
# process's own registrations of the last moments (clocks of one machine never run backwards this far).
_SKEW_WARNED = dt.timedelta(seconds=1)


ACCEPTED, REJECTED = "accepted", "rejected"
MODEL_STATUSES = (ACCEPTED, REJECTED)  # a registration's status; latest_model skips rejected versions
_STATUS_KEY = "_registry"  # the key of training_json that holds a status other than accepted


class MalformedModelRowWarning(UserWarning):
    """A ``models`` row that does not read as a :class:`ModelEntry` was skipped (the message names it)."""


class FutureRegistrationWarning(UserWarning):
    """``models`` holds a registration dated after now (a skewed clock); new ones were dated after it."""

# prm.models.weights_digest: the first 12 hex of a SHA-1. ``\Z``, not ``$``, which accepts a trailing newline.
_DIGEST = re.compile(r"\A[0-9a-f]{12}\Z")
_NAME_CHARS = 256  # a name, run id or metric key is a short id ("flywheel-prm-r2"): far longer is not one
_URI_CHARS = 4096  # Linux's PATH_MAX: a longer path cannot be opened
_NOTE_CHARS = 10_000  # a status note is a check's sentence or two
_JSON_CHARS = 1 << 20  # one row's training config or metrics: a config of 1 MiB is data, not a config
_INT32_MAX = 2**31 - 1  # models.round is an int32 column
_INT64_MAX = 2**63 - 1  # Delta table versions are int64


def _check_digest(value: object, what: str) -> None:
    if isinstance(value, str) and _DIGEST.match(value):
        return
    hint = ""
    if isinstance(value, str) and "@" in value:
        hint = f"; pass the part after '@' of the model_version ({value.rpartition('@')[2]!r})"
    raise ValueError(f"{what}={value!r} is not a weights digest: 12 lowercase hex characters, as "
                     f"prm.models.weights_digest(folder) returns{hint}")


def _finite_number(value: object) -> bool:
    """A number a float64 holds finitely: ``10**400`` is an int ``math.isfinite`` cannot even convert."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _short(value: object, limit: int = 40) -> str:
    """``repr`` cut to ``limit`` characters; an int too long for ``repr`` is named by its digit count."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 128:
        return f"<int of ~{int(abs(value).bit_length() * 0.30103) + 1} digits>"
    cut = isinstance(value, str | bytes) and len(value) > limit
    text = repr(value[:limit] if cut else value)  # a huge string: repr only the part that shows
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json(value: Mapping[str, Any], what: str) -> str:
    try:
        text = json.dumps(dict(value), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{what} is not JSON-serializable ({exc}); pass strings, numbers, lists and dicts") from None
    if len(text) > _JSON_CHARS:
        raise ValueError(f"{what} is {len(text):,} characters of JSON, over the {_JSON_CHARS:,} a registry row "
                         "holds; keep the config's settings and store large data in a file the config names")
    return text


def _check_text(value: object, what: str, limit: int) -> None:
    """``value`` is a non-blank str of at most ``limit`` characters without control characters: a newline or NUL
    in a name or path reads back as another one, or fails far from here."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what}={_short(value)}: the registry needs a non-empty {what}, a string")
    if len(value) > limit:
        raise ValueError(f"{what} is {len(value):,} characters, over the {limit:,} allowed; pass a shorter {what}")
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ValueError(f"{what}={_short(value)} holds the control character {bad!r}; remove it")


def _check_mapping(value: object, what: str) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}={_short(value)} is not a mapping; pass a dict ({{}} when there is nothing)")


@dataclass(frozen=True)
class ModelEntry:
    """One model in the registry: a row of the ``models`` table."""

    name: str  # e.g. "arith-policy", "flywheel-prm-r2"
    version: str  # 12 lowercase hex: prm.models.weights_digest of the weights folder
    kind: str  # one of warehouse.schemas.MODEL_KINDS: "policy" | "prm"
    uri: str  # folder or URI of the weights
    parent_version: str | None = None  # the model it was warm-started or resumed from; None = from scratch
    round: int | None = None  # flywheel round; None outside the flywheel
    # table -> Delta version its training set read ({} when it read none, e.g. a shipped checkpoint)
    training_tables: Mapping[str, int | None] = field(default_factory=dict, hash=False)
    training: Mapping[str, Any] = field(default_factory=dict, hash=False)  # the training config, JSON-able
    metrics: Mapping[str, float] = field(default_factory=dict, hash=False)  # headline metrics, finite numbers
    status: str = ACCEPTED  # one of MODEL_STATUSES: a blocking check's verdict on the model
    status_note: str = ""  # why, e.g. the check's sentence; empty for an accepted model

    def __post_init__(self) -> None:
        _check_text(self.name, "name", _NAME_CHARS)
        _check_text(self.uri, "uri", _URI_CHARS)
        for what in ("training_tables", "training", "metrics"):
            _check_mapping(getattr(self, what), what)
        _check_kind(self.kind)
        _check_digest(self.version, "version")
        if self.parent_version is not None:
            _check_digest(self.parent_version, "parent_version")
            if self.parent_version == self.version:
                raise ValueError(f"parent_version={self.parent_version!r} is the model's own version: a model "
                                 "cannot be warm-started from itself; pass its actual parent or None")
        if self.round is not None and (isinstance(self.round, bool) or not isinstance(self.round, int)
                                       or not 0 <= self.round <= _INT32_MAX):
            raise ValueError(f"round={_short(self.round)} is not a flywheel round (an int >= 0, at most {_INT32_MAX}); "
                             "pass None outside the flywheel")
        unknown = sorted(map(_short, set(self.training_tables) - set(TABLES)))  # repr first: keys of any type
        if unknown:
            raise ValueError(f"training_tables names [{', '.join(unknown)}], which are not warehouse tables; use "
                             f"table names of {sorted(TABLES)} (e.g. TrainingSet.warehouse_versions)")
        bad = {t: _short(v) for t, v in self.training_tables.items()
               if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _INT64_MAX)}
        if bad:
            raise ValueError(f"training_tables {bad}: a table version is an int >= 0, at most {_INT64_MAX} (or None)")
        if not isinstance(self.status, str) or self.status not in MODEL_STATUSES:
            raise ValueError(f"status={_short(self.status)} is not a registry status; use one of {MODEL_STATUSES}")
        if not isinstance(self.status_note, str):
            raise ValueError(f"status_note={_short(self.status_note)} must be a string")
        if len(self.status_note) > _NOTE_CHARS:
            raise ValueError(f"status_note is {len(self.status_note):,} characters, over the {_NOTE_CHARS:,} "
                             "allowed; say why in a sentence or two")
        if _STATUS_KEY in self.training:
            raise ValueError(f"training key {_STATUS_KEY!r} is reserved for the registry status; pass status= and "
                             "status_note= instead")
        for key in self.metrics:
            _check_text(key, "metric name", _NAME_CHARS)
        bad_metrics = {k: _short(v) for k, v in self.metrics.items() if not _finite_number(v)}
        if bad_metrics:
            shown = ", ".join(f"{k!r}: {v}" for k, v in bad_metrics.items())
            raise ValueError(f"metrics {{{shown}}} are not finite numbers (a float64 holds at most ~1.8e308); keep "
                             "only numeric headline metrics")
        # Copies: the entry is frozen, so a caller's later change to its dict must not reach it.
        object.__setattr__(self, "training_tables", dict(self.training_tables))
        object.__setattr__(self, "metrics", {k: float(v) for k, v in self.metrics.items()})
        object.__setattr__(self, "training", json.loads(_json(self.training, "training")))

    def to_row(self) -> dict[str, Any]:
        """The entry as a ``models`` row (without the partition and provenance columns the write adds)."""
        training = dict(self.training)
        if self.status != ACCEPTED or self.status_note:
            training[_STATUS_KEY] = {"status": self.status, "note": self.status_note}
        return {
            "name": self.name, "version": self.version, "kind": self.kind, "parent_version": self.parent_version,
            "round": self.round, "training_tables_json": _json(self.training_tables, "training_tables"),
            "training_json": _json(training, "training") if training else None,
            "metrics_json": _json(self.metrics, "metrics") if self.metrics else None, "uri": self.uri,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ModelEntry:
        """The entry of a ``models`` (or ``model_lineage``) row; other columns are ignored."""

        def parsed(column: str) -> dict[str, Any]:
            text = row.get(column)
            if text is None:
                return {}
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"models.{column} of version {row.get('version')!r} is not JSON ({exc})") from None
            if not isinstance(value, dict):
                raise ValueError(f"models.{column} of version {row.get('version')!r} is {value!r}, not an object")
            return value

        training = parsed("training_json")
        status = training.pop(_STATUS_KEY, None) or {}
        if not isinstance(status, dict):
            raise ValueError(f"models.training_json of version {row.get('version')!r} holds {_STATUS_KEY!r}: "
                             f"{_short(status)}, not an object")
        return cls(name=row["name"], version=row["version"], kind=row["kind"], uri=row["uri"],
                   parent_version=row.get("parent_version"), round=row.get("round"),
                   training_tables=parsed("training_tables_json"), training=training,
                   metrics=parsed("metrics_json"), status=status.get("status", ACCEPTED),
                   status_note=status.get("note", ""))


def register_models(wh: Warehouse, entries: Sequence[ModelEntry], *, source: str, day: str, run_id: str,
                    writer: str) -> WriteResult:
    """Add ``entries`` to partition (source, day) as one Delta commit. Rows are only ever added: every earlier
    registration stays, so a re-materialization never erases a version others name as parent or a row whose
    ``uri`` a reader holds. An entry this run already registered in this partition is not added twice (a retried
    step registers once). Later entries of the list count as newer for :func:`latest_model`, and every entry
    counts as newer than any registered before it, even one whose ``created_at`` lies in the future (a skewed
    clock): those are dated after it, with a warning."""
    if isinstance(entries, ModelEntry) or not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise ValueError(f"entries={_short(entries)}: register_models takes a list of ModelEntry objects")
    for what, value in (("source", source), ("run_id", run_id), ("writer", writer)):
        _check_text(value, what, _NAME_CHARS)
    if not isinstance(day, str):
        raise ValueError(f"day={_short(day)} is not a YYYY-MM-DD string; pass warehouse.today() or a date's "
                         "isoformat()")
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        if not isinstance(entry, ModelEntry):
            raise ValueError(f"register_models takes ModelEntry objects, got {type(entry).__name__}")
        key = (entry.kind, entry.version)
        if key in seen:
            raise ValueError(f"{entry.kind} {entry.version} is listed twice; register each model once per call")
        seen.add(key)
    con = connect(wh.root)
    taken = set(con.execute(f"SELECT kind, version FROM {TABLE} WHERE source = ? AND day = ? AND run_id = ?",
                            [source, day, run_id]).fetchall())
    entries = [e for e in entries if (e.kind, e.version) not in taken]
    # One microsecond apart in list order: "newest" is well defined within one commit too.
    now = _after_newest(con, dt.datetime.now(dt.UTC))
    rows = [{**e.to_row(), "created_at": now + dt.timedelta(microseconds=i)} for i, e in enumerate(entries)]
    return wh.write(TABLE, rows, source=source, day=day, run_id=run_id, writer=writer)


def _after_newest(con: duckdb.DuckDBPyConnection, now: dt.datetime) -> dt.datetime:
    """``now``, or just after the newest registration when that one is dated at or after ``now``: "newest"
    orders by ``created_at``, so a row from a clock running ahead would otherwise shadow every later one."""
    (newest,) = con.execute(f"SELECT max(created_at) FROM {TABLE}").fetchone()
    if newest is None or newest < now:
        return now
    if newest - now > _SKEW_WARNED:
        rows = con.execute(
            f"SELECT name, version, source, day, run_id FROM {TABLE} WHERE created_at > $now ORDER BY created_at DESC "
            f"LIMIT {_ROWS_NAMED}", {"now": now}).fetchall()
        warnings.warn(f"{TABLE} holds registrations dated in the future (newest {newest.isoformat()}, now "
                      f"{now.isoformat()}): " + "; ".join(f"{n} {v} in source={s} day={d} (run {r})"
                                                          for n, v, s, d, r in rows)
                      + ". New registrations are dated after them so they count as newer; fix the clock that wrote "
                      "them, then register those models again or delete their rows",
                      FutureRegistrationWarning, stacklevel=3)
    return newest + dt.timedelta(microseconds=1)


def _entries(cursor: duckdb.DuckDBPyConnection) -> list[ModelEntry]:
    names = [d[0] for d in cursor.description]
    return [ModelEntry.from_row(dict(zip(names, values, strict=True))) for values in cursor.fetchall()]


def latest_model(snapshot: Snapshot, kind: str, *, source: str | None = None, name: str | None = None,
                 include_rejected: bool = False) -> ModelEntry | None:
    """The newest registered model of ``kind`` (of that partition ``source`` and ``name`` when given); None when
    there is none. Newest: the latest ``created_at``; ties go to the later day, source and run id. A version
    whose newest registration is rejected is skipped (with ``include_rejected``, returned like any other)."""
    _check_kind(kind)
    if not isinstance(include_rejected, bool):
        raise ValueError(f"include_rejected={_short(include_rejected)} is not True or False")
    where, params = ["kind = $kind"], {"kind": kind}
    for column, value in (("source", source), ("name", name)):
        if value is not None:
            _check_text(value, column, _NAME_CHARS)
            where.append(f"{column} = ${column}")
            params[column] = value
    cursor = _connection(snapshot).execute(
        f"SELECT {', '.join(ENTRY_COLUMNS)} FROM {TABLE} WHERE {' AND '.join(where)} ORDER BY {NEWEST_FIRST}", params)
    names = [d[0] for d in cursor.description]
    skipped, judged = [], set()
    while (batch := cursor.fetchmany(_BATCH)):
        for values in batch:
            row = dict(zip(names, values, strict=True))
            try:
                entry = ModelEntry.from_row(row)
            except (ValueError, TypeError, KeyError) as exc:
                skipped.append(f"{_short(row.get('name'))} {_short(row.get('version'))} in partition "
                               f"source={row.get('source')} day={row.get('day')} (run {row.get('run_id')}): {exc}")
                continue
            if entry.version in judged:
                continue  # an older registration of a version its newest one rejected
            judged.add(entry.version)
            if entry.status == REJECTED and not include_rejected:
                continue
            if skipped:
                _warn_skipped(skipped, kind)
            return entry
    if skipped:
        _warn_skipped(skipped, kind)
    return None


def model_versions(snapshot: Snapshot, kind: str) -> list[ModelEntry]:
    """The newest registration of every version of ``kind``, newest first; rows that do not parse are skipped with
    a warning (as :func:`latest_model` does)."""
    _check_kind(kind)
    cursor = _connection(snapshot).execute(
        f"SELECT * FROM ({MODEL_VERSIONS}) WHERE kind = $kind ORDER BY {NEWEST_FIRST}", {"kind": kind})
    names = [d[0] for d in cursor.description]
    entries, skipped = [], []
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        try:
            entries.append(ModelEntry.from_row(row))
        except (ValueError, TypeError, KeyError) as exc:
            skipped.append(f"{_short(row.get('name'))} {_short(row.get('version'))}: {exc}")
    if skipped:
        _warn_skipped(skipped, kind)
    return entries


def _connection(snapshot: object) -> duckdb.DuckDBPyConnection:
    """``snapshot_connection`` of a warehouse root or connection; anything else (None, a number, a blank path,
    which would read an empty warehouse and find nothing) is a ValueError."""
    blank = isinstance(snapshot, str) and not snapshot.strip()
    if blank or not isinstance(snapshot, str | os.PathLike | duckdb.DuckDBPyConnection):
        raise ValueError(f"snapshot={_short(snapshot)} is not a warehouse root or connection; pass the root folder "
                         "(Warehouse.root) or a warehouse.connect(...) connection")
    return snapshot_connection(snapshot)


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str) or kind not in MODEL_KINDS:
        raise ValueError(f"kind={_short(kind)} is not a model kind; use one of {list(MODEL_KINDS)}")


def _warn_skipped(skipped: Sequence[str], kind: str) -> None:
    warnings.warn(f"latest_model skipped {len(skipped)} malformed {TABLE} row(s) of kind {kind!r}: "
                  + "; ".join(skipped[:_ROWS_NAMED]) + ("; ..." if len(skipped) > _ROWS_NAMED else "")
                  + f". Register the model again (register_models) or delete the row (DELETE FROM {TABLE} ...)",
                  MalformedModelRowWarning, stacklevel=3)


def lineage(snapshot: Snapshot, version: str) -> list[ModelEntry]:
    """The model registered as ``version`` and each registered ancestor along ``parent_version``, newest first
    (the ``model_lineage`` view). Empty when ``version`` is not registered; the chain ends at the first parent
    that is not registered (the last entry's ``parent_version`` names it)."""
    _check_digest(version, "version")
    columns = ", ".join("ancestor_version AS version" if c == "version" else c for c in ENTRY_COLUMNS)
    cursor = _connection(snapshot).execute(
        f"SELECT {columns} FROM ({LINEAGE_OF}) WHERE name IS NOT NULL ORDER BY depth", {"version": version})
    return _entries(cursor)


__all__ = ["ACCEPTED", "MODEL_STATUSES", "REJECTED", "FutureRegistrationWarning", "MalformedModelRowWarning",
           "ModelEntry", "latest_model", "lineage", "register_models"]
