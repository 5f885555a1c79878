"""Shared fixtures: one warehouse directory and one SparkSession for the whole test run.

dbt runs in-process (dbtRunner, through dbt-tests-adapter's `run_dbt`), so the embedded
engine's SparkSession starts once and every test reuses it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]

os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def tablestream_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="class")
def dbt_profile_target(tablestream_warehouse: Path) -> dict[str, object]:
    return {"type": "tablestream", "warehouse": str(tablestream_warehouse), "threads": 1}


@pytest.fixture(scope="session")
def engine(tablestream_warehouse: Path):
    from dbt_tablestream.embedded import get_engine

    return get_engine(tablestream_warehouse)


# The delta-spark session of the spark engine, started once per process when its jars are given.
_DELTA_SPARK: dict[str, object] = {}


@pytest.fixture(params=["tablestream", "spark"])
def stream_engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Each end-to-end stream scenario runs on both engines (see tests/functional/engines.py)."""
    from tests.functional import engines

    if request.param == "tablestream":
        if "spark" in _DELTA_SPARK:
            pytest.skip(engines.EMBEDDED_AFTER_SPARK)
        return engines.EmbeddedEngine()
    if not (os.environ.get(engines.JARS_VARIABLE) or os.environ.get(engines.PACKAGES_VARIABLE)):
        pytest.skip(engines.NO_JARS)
    if "spark" not in _DELTA_SPARK:
        from pyspark import SparkContext

        if SparkContext._active_spark_context is not None:
            pytest.skip(engines.OWN_PROCESS)
        _DELTA_SPARK["spark"] = engines.delta_spark_session(tmp_path_factory.mktemp("delta_spark"))
    return engines.DeltaSparkEngine(_DELTA_SPARK["spark"])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "stream_engine" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.engines)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Report every spark-engine skip at one place, so the summary gives its reason once."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(report.longrepr, tuple) and "spark engine:" in report.longrepr[2]:
        report.longrepr = (__file__, _STREAM_ENGINE_LINE, report.longrepr[2])


_STREAM_ENGINE_LINE = next(
    number
    for number, line in enumerate(Path(__file__).read_text().splitlines(), 1)
    if line.startswith("def stream_engine")
)
