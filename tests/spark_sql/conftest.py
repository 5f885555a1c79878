from __future__ import annotations

import pytest

from tests.spark_sql.render import SparkRenderer


@pytest.fixture(scope="session")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> SparkRenderer:
    return SparkRenderer(tmp_path_factory.mktemp("spark_sql"))


@pytest.fixture(scope="session")
def reapply_renderer(tmp_path_factory: pytest.TempPathFactory) -> SparkRenderer:
    """The render project with the reapply protocol (a SQL warehouse's) chosen by the project var."""
    return SparkRenderer(tmp_path_factory.mktemp("spark_sql_reapply"), {"tablestream_commit_protocol": "reapply"})
