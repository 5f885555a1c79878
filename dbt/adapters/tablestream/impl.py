"""`type: tablestream`: dbt-spark's adapter on a local delta-spark session. It adds no SQL."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from dbt.adapters.base.meta import available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.tablestream.connections import ADAPTER_TYPE, TablestreamConnectionManager
from dbt_tablestream._deletion_vectors import vector_positions

logger = AdapterLogger("Tablestream")

# The models of a test fault that have reached its point, in this dbt process (kill_for_test_fault).
_FAULT_ARRIVED: set[str] = set()
_FAULT_LOCK = threading.Condition()
# The project var that arms the test hooks (macros/streams/fault_points.sql).
TEST_HOOKS_VAR = "tablestream_test_hooks"
# How long a model at the point waits for the fault's other models before the run fails instead.
FAULT_WAIT_SECONDS = 300.0


class TablestreamAdapter(SparkAdapter):
    ConnectionManager = TablestreamConnectionManager

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
    def deletion_vector_positions(
        self, location: str, descriptors: list[dict[str, Any] | None]
    ) -> list[list[int]] | None:
        """The row positions each deletion vector marks ([] for none), read from its bytes beside
        the table at `location` or inline, or none when any cannot be read so (the files are then
        read by time travel). Only this profile has Python beside Spark to decode them."""
        return vector_positions(location, descriptors)

    @available
    def kill_for_test_fault(self, point: str, models: list[str] | None = None, model: str = "") -> None:
        """The test hook behind DBT_TABLESTREAM_FAULT: this dbt process dies at a step of the commit
        protocol with SIGKILL, as a crash or an OOM kill would end it (no cleanup runs). With
        several `models` (run in parallel threads), each waits at the point until all have reached
        it, so one kill leaves every one of them at that step. Refused unless the project arms the
        test hooks (the var `tablestream_test_hooks`, which only the test suite's projects set)."""
        if not self._test_hooks_armed():
            raise DbtRuntimeError(
                f"tablestream test fault at {point}: the test hooks are not armed in this project "
                "(the var tablestream_test_hooks); nothing was killed."
            )
        waiting_for = set(models or []) - {model}
        if waiting_for:
            with _FAULT_LOCK:
                _FAULT_ARRIVED.add(model)
                _FAULT_LOCK.notify_all()
                if not _FAULT_LOCK.wait_for(lambda: waiting_for <= _FAULT_ARRIVED, timeout=FAULT_WAIT_SECONDS):
                    missing = ", ".join(sorted(waiting_for - _FAULT_ARRIVED))
                    raise RuntimeError(
                        f"tablestream test fault at {point}: {missing} never reached it (threads too few?)"
                    )
        logger.info(f"tablestream: test fault at {point}: killing dbt (pid {os.getpid()})")
        os.kill(os.getpid(), signal.SIGKILL)

    def _test_hooks_armed(self) -> bool:
        """The var `tablestream_test_hooks`, set in the root project or on the command line."""
        cli_vars = getattr(self.config, "cli_vars", None) or {}
        project_vars = getattr(getattr(self.config, "vars", None), "vars", None) or {}
        value = cli_vars.get(TEST_HOOKS_VAR, project_vars.get(TEST_HOOKS_VAR, False))
        return value is True or str(value).lower() == "true"

    @classmethod
    def _get_adapter_specific_run_info(cls, config: Any) -> dict[str, Any]:
        return {"adapter_type": ADAPTER_TYPE, "table_format": "delta"}
