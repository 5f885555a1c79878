"""The local adapter runs a SET or RESET of a runtime SQL setting through the session's
RuntimeConfig (ThreadSessionCursor._set_directly): which statements it reads as one, and the key
and value it reads, as Spark's parser reads them."""

from __future__ import annotations

import pytest

from dbt.adapters.tablestream.connections import session_setting

QUERY_COMMENT = '/* {"app": "dbt", "node_id": "model.probe.current"} */\n'
MARKER = '{"tablestream.stream": "s", "note": "a `quoted` word"}'


@pytest.mark.parametrize(
    "sql, setting",
    [
        (
            QUERY_COMMENT + "set spark.databricks.delta.write.txnAppId = tablestream/s/0",
            ("spark.databricks.delta.write.txnAppId", "tablestream/s/0"),
        ),
        ("set spark.databricks.delta.write.txnVersion = 12;", ("spark.databricks.delta.write.txnVersion", "12")),
        (
            "set spark.databricks.delta.commitInfo.userMetadata = `" + MARKER.replace("`", "``") + "`",
            ("spark.databricks.delta.commitInfo.userMetadata", MARKER),
        ),
        ("  SET spark.sql.files.maxRecordsPerFile=250000\n", ("spark.sql.files.maxRecordsPerFile", "250000")),
        (
            QUERY_COMMENT + "reset spark.databricks.delta.write.txnAppId",
            ("spark.databricks.delta.write.txnAppId", None),
        ),
        ("RESET spark.sql.files.maxRecordsPerFile;", ("spark.sql.files.maxRecordsPerFile", None)),
        # Spark itself runs what is not exactly one setting of these namespaces.
        ("set spark.sql.ansi.enabled", None),
        ("reset spark.sql.ansi.enabled = true", None),
        ("set hive.exec.dynamic.partition = true", None),
        ("set time zone 'UTC'", None),
        ("SET VARIABLE window_end = 9", None),
        ("reset", None),
        ("select 'set spark.sql.x = 1' as text", None),
        (QUERY_COMMENT + "merge into t using s on t.id = s.id when matched then update set *", None),
    ],
)
def test_the_local_adapter_reads_a_setting_as_spark_does(sql: str, setting: tuple[str, str | None] | None) -> None:
    assert session_setting(sql) == setting
