"""The local cluster for the Thrift tests: started once for this package's tests, stopped when
they are done, also when a test fails (tests/cluster/local_cluster.py). An idle cluster (master,
worker, Thrift server) still takes about a quarter of a core here, which the rest of the suite
needs on a 2-core machine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dbt.adapters.tablestream._session import session_jars
from tests.cluster.local_cluster import LocalCluster
from tests.functional.local import shared_spark


@pytest.fixture(scope="package")
def thrift_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    # The jars the shared local session already fetched: nothing is resolved twice.
    cluster = LocalCluster(Path(tmp_path_factory.mktemp("cluster")), jars=session_jars(shared_spark()))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
