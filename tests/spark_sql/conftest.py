from __future__ import annotations

import pytest

from tests.spark_sql.render import SparkRenderer


@pytest.fixture(scope="session")
def renderer(tmp_path_factory: pytest.TempPathFactory) -> SparkRenderer:
    return SparkRenderer(tmp_path_factory.mktemp("spark_sql"))
