"""Partitions: one per (day, source), so nightly refreshes and new datasets append, never rewrite."""

from __future__ import annotations

import datetime as dt

import dagster as dg

from prm.tasks import BUILTIN_SOURCES

# Partitions start here; backfills can reach any day after it. end_offset=1 makes today's
# partition exist from midnight, which the 02:00 nightly refresh materializes.
START_DATE = "2026-11-01"

DAYS = dg.DailyPartitionsDefinition(start_date=START_DATE, end_offset=1, timezone="UTC")
SOURCES = dg.DynamicPartitionsDefinition(name="source")
PARTITIONS = dg.MultiPartitionsDefinition({"day": DAYS, "source": SOURCES})


def partition_key(day: str, source: str) -> dg.MultiPartitionKey:
    """The partition key of (day, source), e.g. ``partition_key("2026-11-21", "arith")``."""
    return dg.MultiPartitionKey({"day": day, "source": source})


def check_day(day: str) -> str:
    """``day`` when it names an existing day partition (YYYY-MM-DD, from :data:`START_DATE` to today, UTC); else a
    ValueError that says which days exist.

    >>> check_day("2026-11-02")
    '2026-11-02'
    >>> check_day("2026-11-31")
    Traceback (most recent call last):
    ...
    ValueError: day '2026-11-31' is not a partition: give a date as YYYY-MM-DD from 2026-11-01 to today (UTC)...
    """
    today = dt.datetime.now(dt.UTC).date()
    try:
        parsed = dt.date.fromisoformat(day)
        ok = len(day) == 10 and dt.date.fromisoformat(START_DATE) <= parsed <= today
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"day {day!r} is not a partition: give a date as YYYY-MM-DD from {START_DATE} to today "
                         f"(UTC), {today.isoformat()}")
    return day


def day_and_source(context: dg.AssetExecutionContext) -> tuple[str, str]:
    """(day, source) of the partition an asset is materializing."""
    key = context.partition_key
    if not isinstance(key, dg.MultiPartitionKey):
        raise dg.Failure(f"expected a (day, source) partition, got {key!r}; launch with a partition selected")
    return key.keys_by_dimension["day"], key.keys_by_dimension["source"]


def register_sources(instance: dg.DagsterInstance, sources: list[str] | tuple[str, ...] = BUILTIN_SOURCES) -> None:
    """Add ``sources`` to the dynamic ``source`` dimension (idempotent)."""
    missing = [s for s in sources if not instance.has_dynamic_partition(SOURCES.name, s)]
    if missing:
        instance.add_dynamic_partitions(SOURCES.name, missing)


# Flywheel rounds: "0", "1", ...; the flywheel schedule (or `python -m pipelines.flywheel`) adds the next one.
ROUNDS = dg.DynamicPartitionsDefinition(name="flywheel_round")


def round_key(context: dg.AssetExecutionContext) -> int:
    """The flywheel round an asset is materializing."""
    key = context.partition_key
    if not isinstance(key, str) or not key.isdigit():
        raise dg.Failure(f"expected a flywheel round partition ('0', '1', ...), got {key!r}")
    return int(key)
