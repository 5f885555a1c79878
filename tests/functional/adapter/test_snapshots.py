"""Snapshots: dbt's own snapshot suites on `type: tablestream`, on Delta.

- check_cols and timestamp strategies: dbt-spark's `TestSnapshotCheckColsSpark` and
  `TestSnapshotTimestampSpark` (tests/functional/adapter/test_basic.py), with their
  `file_format: delta` for seeds and snapshots. dbt-spark skips them on its local `spark_session`
  profile (no Delta there: `ClassNotFoundException: delta.DefaultSource`); here they run.
- `hard_deletes: new_record`: dbt-tests-adapter's `BaseSnapshotNewRecordTimestampMode`,
  `BaseSnapshotNewRecordCheckMode` and `BaseSnapshotNewRecordDbtValidToCurrent`, which dbt-spark
  does not run. Their source tables are created by Postgres SQL; as dbt-databricks does in its
  `test_new_record_mode.py`, only that setup SQL is rewritten for Spark (types, `using delta`, no
  database part: dbt-spark has none, `{database}` would render `None`), by `_spark_sql` below. The test bodies and
  assertions are dbt's.

  They pass on `type: tablestream` because the adapter overrides dbt-spark 1.11's
  `get_columns_in_relation` macro, which returns `describe extended` rows instead of columns
  (dbt/include/tablestream/macros/columns.sql, dbt-labs/dbt-adapters#1401). Without it, each fails on
  its first deletion check: the deletion records get null source columns. Stock `type: spark`
  still has that bug.
"""

import re

import pytest
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.simple_snapshot import (
    new_record_dbt_valid_to_current,
    new_record_timestamp_mode,
)
from dbt.tests.adapter.simple_snapshot.new_record_check_mode import BaseSnapshotNewRecordCheckMode
from dbt.tests.adapter.simple_snapshot.new_record_dbt_valid_to_current import (
    BaseSnapshotNewRecordDbtValidToCurrent,
)
from dbt.tests.adapter.simple_snapshot.new_record_timestamp_mode import BaseSnapshotNewRecordTimestampMode

pytestmark = pytest.mark.scenarios

# dbt-spark's snapshot materialization requires a table format with MERGE (`file_format` defaults
# to parquet there): the setting dbt-spark's own Delta snapshot tests use.
DELTA_SNAPSHOTS = {"snapshots": {"+file_format": "delta"}}

_CREATE_TABLE = re.compile(r"^(\s*create table .*\))(\s*;?\s*)$", re.IGNORECASE | re.DOTALL)


def _spark_sql(sql: str) -> str:
    """The Postgres setup SQL of dbt's new_record tests, in Spark SQL on Delta."""
    sql = (
        sql.replace("{database}.{schema}", "{schema}")
        .replace("{{target.database}}.{{target.schema}}", "{{target.schema}}")
        .replace(" WITHOUT TIME ZONE", "")
        .replace("TEXT", "STRING")
        .replace("::text", "::string")
    )
    # UPDATE and DELETE on the snapshot's source need Delta (a plain `create table` is parquet).
    return _CREATE_TABLE.sub(r"\1 using delta\2", sql)


# dbt-spark's TestSnapshotCheckColsSpark
class TestSnapshotCheckColsTablestream(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seeds": {
                "+file_format": "delta",
            },
            "snapshots": {
                "+file_format": "delta",
            },
        }


# dbt-spark's TestSnapshotTimestampSpark
class TestSnapshotTimestampTablestream(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seeds": {
                "+file_format": "delta",
            },
            "snapshots": {
                "+file_format": "delta",
            },
        }


class TestSnapshotNewRecordTimestampModeTablestream(BaseSnapshotNewRecordTimestampMode):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return DELTA_SNAPSHOTS

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshot.sql": _spark_sql(new_record_timestamp_mode._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [_spark_sql(sql) for sql in new_record_timestamp_mode._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def invalidate_sql_statements(self):
        return [_spark_sql(sql) for sql in new_record_timestamp_mode._invalidate_sql_statements]

    @pytest.fixture(scope="class")
    def update_sql(self):
        return _spark_sql(new_record_timestamp_mode._update_sql)

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return _spark_sql(new_record_timestamp_mode._delete_sql)

    @pytest.fixture(scope="class")
    def reinsert_sql(self):
        return _spark_sql(new_record_timestamp_mode._reinsert_sql)


class TestSnapshotNewRecordCheckModeTablestream(
    BaseSnapshotNewRecordCheckMode, TestSnapshotNewRecordTimestampModeTablestream
):
    pass


class TestSnapshotNewRecordDbtValidToCurrentTablestream(BaseSnapshotNewRecordDbtValidToCurrent):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return DELTA_SNAPSHOTS

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshot.sql": _spark_sql(new_record_dbt_valid_to_current._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [_spark_sql(sql) for sql in new_record_dbt_valid_to_current._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return _spark_sql(new_record_dbt_valid_to_current._delete_sql)
