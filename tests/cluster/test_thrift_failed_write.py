"""tests/functional/test_failed_write.py's check on the Thrift profile: a stream model whose
target write fails inside Delta, then a plain table, a plain incremental and another stream model
on the same dbt thread, in two invocations with the same failing window. dbt-spark closes a
model's connection when the model ends, and the server ends its session with it, so no setting of
the failed write reaches a later model (docs/architecture.md, "A failed write")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.local_cluster import LocalCluster
from tests.cluster.thrift_project import project, source_with_rows
from tests.functional.test_failed_write import BREAKING_ID, CONSTRAINT, MODELS, assert_failed_write_leaves_nothing

pytestmark = pytest.mark.extended


def test_a_failed_stream_write_leaves_nothing_for_the_models_after_it(
    tmp_path: Path, thrift_cluster: LocalCluster
) -> None:
    schema = source_with_rows(thrift_cluster, "(1, 'a')", tables=("t", "other"))
    dbt = project(tmp_path, thrift_cluster, schema, MODELS, sources=("t", "other"))
    dbt.run_ok("run")
    thrift_cluster.sql(CONSTRAINT.format(schema=schema))
    thrift_cluster.sql(f"insert into {schema}_app.t values ({BREAKING_ID}, 'b')")
    assert_failed_write_leaves_nothing(
        lambda key: thrift_cluster.sql(f"insert into {schema}_app.other values ({key}, 'new')") and None,
        lambda: dbt.invoke("run"),
        lambda model: thrift_cluster.warehouse / f"{schema}.db" / model,
        lambda model: {row[0] for row in thrift_cluster.sql(f"select id from {schema}.{model}")},
    )
