"""The local profile's emulate_sql_warehouse: which statements a Databricks SQL warehouse refuses."""

from __future__ import annotations

import pytest

from dbt.adapters.tablestream.connections import refused_setting

QUERY_COMMENT = '/* {"app": "dbt", "node_id": "model.probe.current"} */\n'


@pytest.mark.parametrize(
    "sql, refused",
    [
        ("set spark.databricks.delta.write.txnAppId = tablestream/s/0", "spark.databricks.delta.write.txnAppId"),
        (QUERY_COMMENT + "set spark.sql.files.maxRecordsPerFile = 250000", "spark.sql.files.maxRecordsPerFile"),
        ("RESET spark.databricks.delta.commitInfo.userMetadata", "spark.databricks.delta.commitInfo.userMetadata"),
        ("set spark.databricks.delta.changelogV2.enabled", "spark.databricks.delta.changelogV2.enabled"),
        ("-- a comment\nset `spark.sql.ansi.enabled` = true", "spark.sql.ansi.enabled"),
        ("SET ANSI_MODE = true", None),
        (QUERY_COMMENT + "set timezone = UTC", None),
        ("SET STATEMENT_TIMEOUT = 600", None),
        ("set time zone 'UTC'", None),
        ("SET VARIABLE window_end = 9", None),
        ("select 'set spark.sql.x = 1' as text", None),
        (QUERY_COMMENT + "merge into t using s on t.id = s.id when matched then update set *", None),
    ],
)
def test_a_sql_warehouse_refuses_every_setting_outside_its_list(sql: str, refused: str | None) -> None:
    assert refused_setting(sql) == refused
