"""Resources: where the warehouse and the inbox of new problem files live."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from warehouse import Warehouse, default_root

INBOX_ENV = "PRM_INBOX"


def default_inbox() -> Path:
    """``$PRM_INBOX``, else ``inbox/`` next to the warehouse root."""
    value = os.environ.get(INBOX_ENV)
    return Path(value).expanduser() if value else default_root().parent / "inbox"


class WarehouseResource(dg.ConfigurableResource):
    """The Parquet warehouse (and its inbox of dropped problem files)."""

    data_root: str = ""  # empty: $PRM_DATA_ROOT or <project>/data/warehouse
    inbox: str = ""  # empty: $PRM_INBOX or <data root>/../inbox

    def get(self) -> Warehouse:
        return Warehouse(self.data_root or None)

    def inbox_path(self) -> Path:
        return Path(self.inbox) if self.inbox else default_inbox()
