"""`type: tablestream`: dbt-spark's adapter on a local delta-spark session. It adds no SQL."""

from __future__ import annotations

import os
import signal
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.tablestream.connections import ADAPTER_TYPE, TablestreamConnectionManager

logger = AdapterLogger("Tablestream")


class TablestreamAdapter(SparkAdapter):
    ConnectionManager = TablestreamConnectionManager  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # A relative `warehouse` is relative to the dbt project, not to the shell's directory.
        TablestreamConnectionManager.project_root = getattr(config, "project_root", None)

    @classmethod
    def type(cls) -> str:
        return ADAPTER_TYPE

    @available
    def project_root(self) -> str | None:
        """The dbt project's directory: relative paths in configs (a directory table's location)
        are taken from it, as dbt takes its own paths."""
        root = getattr(self.config, "project_root", None)
        return str(root) if root else None

    @available
    def kill_for_test_fault(self, point: str) -> None:
        """The test hook behind DBT_TABLESTREAM_FAULT: this dbt process dies at a step of the commit
        protocol with SIGKILL, as a crash or an OOM kill would end it (no cleanup runs)."""
        logger.info(f"tablestream: test fault at {point}: killing dbt (pid {os.getpid()})")
        os.kill(os.getpid(), signal.SIGKILL)

    @classmethod
    def _get_adapter_specific_run_info(cls, config: Any) -> dict[str, Any]:
        return {"adapter_type": ADAPTER_TYPE, "table_format": "delta"}
