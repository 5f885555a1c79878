"""Stream scenarios on the Thrift profile: stock dbt-spark `method: thrift` against the local
cluster, where each connection is a Spark session of its own on the server.

Four stream models on four threads here; the single-stream scenarios (a table_stream from
`latest`, a stream_merge mirroring a keyed source, and the rest of the package's stream models)
are the conformance suite's run on this profile (test_thrift_conformance.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.local_cluster import LocalCluster
from tests.cluster.thrift_project import project, source_with_rows

pytestmark = pytest.mark.extended


def test_four_threads_four_streams_three_rounds(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    """`threads: 4`, one connection (a server session) per dbt thread: the local per-round check
    (tests/functional/test_threads.py) - every mirror equals its source, every offset is at the
    source's latest version."""
    schema = source_with_rows(thrift_cluster, "(1, 'a'), (2, 'b')", tables=("t", "u"))
    models = {
        f"mirror_{source}_{copy}": (
            "{{ config(materialized='stream_merge', unique_key='id') }}\n"
            f"select id, name, __change_type, __commit_version from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
        )
        for source in ("t", "u")
        for copy in (1, 2)
    }
    dbt = project(tmp_path, thrift_cluster, schema, models, sources=("t", "u"), threads=4)
    for round in range(3):
        if round:
            for source in ("t", "u"):
                thrift_cluster.sql(f"insert into {schema}_app.{source} values ({10 + round}, 'n{round}')")
                thrift_cluster.sql(f"update {schema}_app.{source} set name = concat(name, '+') where id = 1")
                if round == 2:
                    thrift_cluster.sql(f"delete from {schema}_app.{source} where id = 2")
        result = dbt.run_ok("run")
        ran = [item for item in result.result.results if item.node.resource_type == "model"]
        assert sorted(item.node.name for item in ran) == sorted(models)
        assert len({item.thread_id for item in ran}) > 1, "the models ran on one dbt thread"
        latest = {
            source: thrift_cluster.sql(f"describe history {schema}_app.{source} limit 1")[0][0] for source in ("t", "u")
        }
        for model in models:
            source = model.split("_")[1]
            assert sorted(thrift_cluster.sql(f"select id, name from {schema}.{model}")) == sorted(
                thrift_cluster.sql(f"select id, name from {schema}_app.{source}")
            ), (round, model)
        positions = dict(
            thrift_cluster.sql(
                f"select stream_name, max(to_version) from {schema}.tablestream_offsets group by stream_name"
            )
        )
        assert positions == {f"{model}__app_{model.split('_')[1]}": latest[model.split("_")[1]] for model in models}


def test_the_thrift_server_loads_the_hive_classes_its_session_close_needs(thrift_cluster: LocalCluster) -> None:
    """A session's close can initialize Hive's function registry, which loads GenericUDTFGetSplits and
    with it hive-llap-common's LlapSigner, a jar Spark 4 no longer ships: without it on the server's
    class path that close failed and so did the dbt run (tests/cluster/local_cluster.py,
    hive_llap_common_jar). Describing the function loads the same class on the server's driver."""
    from pyhive import hive

    connection = hive.connect(host=thrift_cluster.profile()["host"], port=thrift_cluster.thrift_port, username="dbt")
    try:
        cursor = connection.cursor()
        cursor.execute(
            "create temporary function get_splits as 'org.apache.hadoop.hive.ql.udf.generic.GenericUDTFGetSplits'"
        )
        cursor.execute("describe function get_splits")
        described = [str(row[0]) for row in cursor.fetchall()]
    finally:
        connection.close()
    assert "Class: org.apache.hadoop.hive.ql.udf.generic.GenericUDTFGetSplits" in described
