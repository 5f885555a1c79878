"""stream_read: changelog, Spark 4.2's CHANGES clause over Delta's changelog (row tracking, no change
data feed): the issue's five commits read both ways, and the refusals, each with nothing written."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.local import shared_spark
from tests.functional.streams import StreamBench, model_results

READS = {
    # model: (config, source)
    "log_feed": ("materialized='table_stream'", "feed"),
    "log_changes": ("materialized='table_stream', stream_read='changelog'", "tracked"),
    "merge_feed": ("materialized='stream_merge', unique_key='id'", "feed"),
    "merge_changes": ("materialized='stream_merge', unique_key='id', stream_read='changelog'", "tracked"),
    "merge_spark_net": (
        "materialized='stream_merge', unique_key='id', stream_read='changelog', spark_net_changes=true",
        "tracked",
    ),
}


MODELS = {
    name: (
        f"{{{{ config({config}, start_at='earliest') }}}}\n"
        f"select id, v, __change_type, __commit_version from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"
    )
    for name, (config, source) in READS.items()
}


def logged(bench: StreamBench, model: str) -> Counter:
    """A table_stream target's rows with their commit versions (the two sources number theirs alike)."""
    rows = DeltaTable(str(bench.target_path(model))).to_pyarrow_table().to_pylist()
    return Counter((row["id"], row["v"], row["__change_type"], row["__commit_version"]) for row in rows)


def create_sources() -> None:
    """`app.feed` with the change feed on and `app.tracked` with row tracking on, alike otherwise."""
    spark = shared_spark()
    spark.sql(
        "create table app.feed (id int, v string) using delta tblproperties ('delta.enableChangeDataFeed' = 'true')"
    )
    spark.sql(
        "create table app.tracked (id int, v string) using delta tblproperties ('delta.enableRowTracking' = 'true')"
    )


def both(statement: str) -> None:
    for table in ("app.feed", "app.tracked"):
        shared_spark().sql(statement.format(table=table))


@pytest.mark.scenarios
def test_the_five_commits_give_the_same_targets_through_changes_as_through_the_change_feed(tmp_path: Path) -> None:
    """v1 inserts (1,a), (2,b); v2 and v3 update 1 to a2, a3; v4 deletes 2; v5 inserts (3,c).

    Read in two windows, (-1, 2] (key 1 inserted and updated in it) and (2, 5]: the targets read
    through Delta's changelog, netted by the package or by Spark, equal those through the change feed."""
    bench = StreamBench(tmp_path, MODELS, sources=("feed", "tracked"))
    create_sources()
    both("insert into {table} values (1, 'a'), (2, 'b')")
    both("update {table} set v = 'a2' where id = 1")
    bench.run()
    assert Counter(row[:2] for row in bench.target_rows("merge_changes")) == Counter([(1, "a2"), (2, "b")])
    both("update {table} set v = 'a3' where id = 1")
    both("delete from {table} where id = 2")
    both("insert into {table} values (3, 'c')")
    bench.run()

    log = Counter(
        [
            (1, "a", "INSERT", 1),
            (2, "b", "INSERT", 1),
            (1, "a", "UPDATE_BEFORE", 2),
            (1, "a2", "UPDATE_AFTER", 2),
            (1, "a2", "UPDATE_BEFORE", 3),
            (1, "a3", "UPDATE_AFTER", 3),
            (2, "b", "DELETE", 4),
            (3, "c", "INSERT", 5),
        ]
    )
    assert logged(bench, "log_changes") == logged(bench, "log_feed") == log
    final = Counter([(1, "a3"), (3, "c")])
    for model in ("merge_feed", "merge_changes", "merge_spark_net"):
        assert Counter(row[:2] for row in bench.target_rows(model)) == final, model
    assert sorted(row["to_version"] for row in bench.offsets() if row["to_version"] is not None) == [2] * 5 + [5] * 5


def test_an_update_to_the_same_values_is_no_change_through_changes_as_through_the_change_feed(tmp_path: Path) -> None:
    """An UPDATE that sets every row to the values it had (as dbt's merge strategy updates every
    matched row) gives each row a new commit version: Delta's changelog shows it as an update with
    equal images, and the package drops those as carry-overs, as it does the change feed's
    (drop_carryovers). Only the row that changed is logged."""
    bench = StreamBench(
        tmp_path, {name: MODELS[name] for name in ("log_feed", "log_changes")}, sources=("feed", "tracked")
    )
    create_sources()
    both("insert into {table} values (1, 'a'), (2, 'b')")
    bench.run()
    both("update {table} set v = case when id = 2 then 'b2' else v end")
    bench.run()
    changed = Counter([(2, "b", "UPDATE_BEFORE", 2), (2, "b2", "UPDATE_AFTER", 2)])
    inserted = Counter([(1, "a", "INSERT", 1), (2, "b", "INSERT", 1)])
    assert logged(bench, "log_changes") == logged(bench, "log_feed") == inserted + changed


def test_changes_are_refused_without_row_tracking_and_before_it_was_enabled(tmp_path: Path) -> None:
    model = (
        "{{ config(materialized='stream_merge', unique_key='id', stream_read=var('read', 'changelog'), start_at='latest') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench = StreamBench(tmp_path, {"current": model})
    bench.create_source([(1, "a", 1)])  # the change data feed on, no row tracking
    bench.refused(
        "current",
        "Stream current__app_t: stream_read: changelog reads Delta's changelog",
        "needs row tracking on the source app.t",
        "enable_change_tracking --args '{relation: app.t, mode: changelog}'",
        "Nothing was written",
    )

    # Consumed through the change feed to v0; then a change, then row tracking turned on.
    bench.run_ok("run", "--vars", "{read: table_changes}")
    bench.source().update(updates={"age": "2"}, predicate="id = 1")
    enabled = bench.invoke(
        "run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: app.t, mode: changelog}"
    )
    assert enabled.success, enabled.exception
    shared_spark().sql("refresh table app.t")
    history = shared_spark().sql("describe history app.t").collect()
    set_at = max(int(row["version"]) for row in history if row["operation"] == "SET TBLPROPERTIES")
    message = bench.refused(
        "current",
        f"row tracking was enabled on app.t at version {set_at}, after the first version 1 of the stream's window (0, {set_at}]",
        "run the model once with stream_read: table_changes",
        "Nothing was written",
    )
    assert "DELTA_CHANGELOG" not in message

    # The remedy it names: one run through the change feed passes the enabling commit, and the
    # changelog reads from there on.
    bench.run_ok("run", "--vars", "{read: table_changes}")
    shared_spark().sql("update app.t set age = 3 where id = 1")
    bench.run()
    assert Counter(row[:3] for row in bench.target_rows("current")) == Counter([(1, "a", 3)])


def test_an_unknown_stream_read_is_refused(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "log": (
                "{{ config(materialized='table_stream', stream_read='change_feed') }}\n"
                "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
            ),
            "netted": (
                "{{ config(materialized='stream_merge', unique_key='id', spark_net_changes=true) }}\n"
                "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
            ),
            # Keyless: a table_stream without unique_key logs every change, so Spark cannot net them.
            "keyless": (
                "{{ config(materialized='table_stream', stream_read='changelog', spark_net_changes=true) }}\n"
                "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
            ),
        },
    )
    bench.create_source([(1, "a", 1)])
    bench.refused(
        "log",
        "Model log: invalid stream_read 'change_feed'",
        "Accepted values: table_changes (Delta's change data feed, the default), changelog (Delta's row-tracking changelog",
    )
    bench.refused(
        "netted", "spark_net_changes asks Spark's CHANGES clause to net the changes, so it needs stream_read: changelog"
    )
    bench.refused(
        "keyless",
        "Model keyless: spark_net_changes nets changes, and a table_stream without unique_key (or with net_changes: "
        "false) logs every change. Set unique_key, or remove spark_net_changes.",
    )
    # The value's old name, in the project var: refused with the new one, nothing written.
    (bench.project.root / "models" / "log.sql").write_text(
        "{{ config(materialized='table_stream') }}\nselect * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench.refused(
        "log",
        "Model log: stream_read 'changes' was renamed to 'changelog' in 0.2.0: set stream_read: changelog",
        "The old name is refused until 1.0.",
        args=("--vars", "{tablestream_stream_read: changes}"),
    )
    (bench.project.root / "models" / "log.sql").write_text(
        "{{ config(materialized='table_stream', stream_read='change_feed') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    result = bench.invoke("run", "-s", "log", "--vars", "{tablestream_stream_read: feed}")
    assert not result.success
    assert "invalid stream_read 'change_feed'" in str(model_results(result)[0].message)

    version = bench.source().version()
    logged: list[str] = []
    result = bench.invoke(
        "run-operation",
        "dbt_tablestream.enable_change_tracking",
        "--args",
        "{relation: app.t, mode: row_tracking}",
        callbacks=[lambda event: logged.append(str(event.info.msg))],
    )
    assert not result.success
    expected = "enable_change_tracking: invalid mode 'row_tracking'. Accepted values: change_data_feed"
    assert any(expected in line for line in logged), logged[-5:]
    assert bench.source().version() == version


def test_a_changes_stream_stays_healthy_when_the_change_feed_is_turned_off(tmp_path: Path, capsys: Any) -> None:
    """Moving a source from the change feed to the changelog: with the feed turned off inside a
    `changes` stream's window, the stream is neither refused nor shown stale."""
    model = (
        "{{ config(materialized='stream_merge', unique_key='id', stream_read='changelog') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench = StreamBench(tmp_path, {"current": model})
    spark = shared_spark()
    spark.sql(
        "create table app.t (id int, name string, age int) using delta"
        " tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableRowTracking' = 'true')"
    )
    spark.sql("insert into app.t values (1, 'a', 1)")
    bench.run()
    spark.sql("update app.t set age = 2 where id = 1")
    spark.sql("alter table app.t set tblproperties ('delta.enableChangeDataFeed' = 'false')")
    spark.sql("insert into app.t values (2, 'b', 2)")
    capsys.readouterr()
    bench.run_ok("run-operation", "dbt_tablestream.describe_stream", "--args", "{stream_name: current__app_t}")
    described = capsys.readouterr().out
    assert re.search(r"stale\s+no", described), described
    bench.run()
    assert Counter(row[:3] for row in bench.target_rows("current")) == Counter([(1, "a", 2), (2, "b", 2)])
