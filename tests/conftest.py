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
