"""Pure Python pieces of the local adapter: profile checks, the session's settings, Java detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.tablestream._java import java_major_version
from dbt.adapters.tablestream._session import check_warehouse, delta_package, session_settings
from dbt.adapters.tablestream.connections import TablestreamCredentials
from dbt_tablestream.exceptions import EngineStartError


def test_check_warehouse(tmp_path: Path) -> None:
    created = check_warehouse(tmp_path / "new" / "warehouse")
    assert created.is_dir() and list(created.iterdir()) == []
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(EngineStartError, match="is not a directory"):
        check_warehouse(a_file)
    with pytest.raises(EngineStartError, match="cannot be created"):
        check_warehouse(a_file / "below")


def test_java_version_parsing(tmp_path: Path) -> None:
    def fake(name: str, banner: str) -> Path:
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
        path.chmod(0o755)
        return path

    assert java_major_version(fake("j17", 'openjdk version "17.0.15" 2025-04-15')) == 17
    assert java_major_version(fake("j8", 'java version "1.8.0_392"')) == 8
    assert java_major_version(fake("j21", 'openjdk version "21" 2023-09-19')) == 21


def test_delta_package_follows_the_installed_versions() -> None:
    from importlib import metadata

    spark_minor = ".".join(metadata.version("pyspark").split(".")[:2])
    assert delta_package() == f"io.delta:delta-spark_{spark_minor}_2.13:{metadata.version('delta-spark')}"


def test_session_settings_keep_the_warehouse_under_the_project_and_take_overrides(tmp_path: Path) -> None:
    settings = session_settings(tmp_path, {"spark.sql.shuffle.partitions": "8"})
    assert settings["spark.sql.warehouse.dir"] == tmp_path.as_posix()
    assert (
        f"databaseName={(tmp_path / 'metastore_db').as_posix()}"
        in settings["spark.hadoop.javax.jdo.option.ConnectionURL"]
    )
    assert f"-Dderby.system.home={tmp_path.as_posix()}" in settings["spark.driver.extraJavaOptions"]
    assert settings["spark.sql.shuffle.partitions"] == "8"
    assert settings["spark.jars.packages"] == delta_package()
    assert Path(settings["spark.jars.ivySettings"]).is_file()
    assert settings["spark.sql.catalog.spark_catalog"] == "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    # The offline way: the user's jars, and no package to fetch.
    offline = session_settings(tmp_path, {"spark.jars": "/jars/a.jar", "spark.driver.extraJavaOptions": "-Dx=1"})
    assert "spark.jars.packages" not in offline and offline["spark.jars"] == "/jars/a.jar"
    assert "spark.jars.ivySettings" not in offline
    assert offline["spark.driver.extraJavaOptions"].endswith(" -Dx=1")


def test_credentials_validation() -> None:
    good = {"schema": "analytics", "warehouse": "./wh", "threads": 2}
    TablestreamCredentials.validate(good)
    with pytest.raises(DbtRuntimeError, match="Unknown key\\(s\\) in the tablestream profile: warehose"):
        TablestreamCredentials.validate({**good, "warehose": "x"})
    with pytest.raises(DbtRuntimeError, match="needs `schema:`"):
        TablestreamCredentials.from_dict({"warehouse": "./wh"})
    with pytest.raises(DbtRuntimeError, match="use `type: spark` with that method"):
        TablestreamCredentials.from_dict({"schema": "s", "method": "thrift"})
    creds = TablestreamCredentials.from_dict({"schema": "s", "warehouse": "wh"})
    assert creds.warehouse_path("/projects/p") == Path("/projects/p/wh")
    assert creds.server_side_parameters["spark.sql.ansi.enabled"] == "false"


def test_the_stream_api_renders_the_package_macros() -> None:
    """The PySpark stream API's SQL comes from the dbt package's own macros (no second copy)."""
    from dbt_tablestream._macros import MACRO_FILES, macros_folder, render

    assert all((macros_folder() / name).is_file() for name in MACRO_FILES)
    stream = {
        "stream": "s",
        "stream_id": "tablestream/s/2",
        "epoch": 2,
        "after": 4,
        "through": 7,
        "source": "app.t",
        "subject": "Stream s",
        "remedy": "Reset it.",
    }
    opened = [
        sql
        for sql in render("stream_commit_open_sql", {**stream, "source_table_id": "x"}, invocation_id="run-1")
        if sql.startswith("set ")
    ]
    assert opened[:2] == [
        "set spark.databricks.delta.write.txnAppId = `tablestream/s/2`",
        "set spark.databricks.delta.write.txnVersion = 7",
    ]
    assert '"tablestream.invocation_id": "run-1"' in opened[2]
    # A default stream name holds dbt's source and table names as they are (docs/architecture.md, "Quoting").
    odd = {**stream, "stream": "s'`\\ é", "stream_id": "tablestream/s'`\\ é/2", "source_table_id": "x"}
    opened_odd = render("stream_commit_open_sql", odd, invocation_id="run-1")
    assert "set spark.databricks.delta.write.txnAppId = `tablestream/s'``\\ é/2`" in opened_odd
    assert "where stream_name = 's\\'`\\\\ é'" in render("read_stream_offset_sql", "analytics.log", odd["stream"])
    problem = render("_window_problem", "app.t", {**stream, "source_table_id": "new"}, "old", [])
    assert problem["kind"] == "recreated"
    message = problem["message"]
    assert message.startswith("Stream s: the source app.t was dropped and recreated") and message.endswith("Reset it.")


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"max_rows_per_file": 1000},
        {"compact": True},
        {"copy_files": True, "max_rows_per_file": 10},
        {"replaces": True, "max_rows_per_file": 10},
    ],
)
def test_a_marked_write_clears_the_package_settings_it_does_not_make_and_resets_the_ones_it_makes(
    layout: dict[str, object],
) -> None:
    """Its open resets every setting the package may make that this write does not, so one left
    by an earlier write that failed never applies to it, then sets its own; its close resets each
    one it set (docs/architecture.md, "A failed write")."""
    from dbt_tablestream._macros import render

    stream = {
        "stream": "s",
        "stream_id": "tablestream/s/0",
        "epoch": 0,
        "after": 0,
        "through": 3,
        "source": "app.t",
        "source_table_id": "x",
        "inputs": [],
    }
    stream["inputs"] = [dict(stream)]
    opened = render("stream_commit_open_sql", stream, layout, invocation_id="run-1")
    closed = render("stream_commit_close_sql", layout)
    every = [key for key, _ in render("_stream_marker_settings") + render("_stream_write_option_settings")]
    reset_first = [sql.split()[1] for sql in opened if sql.startswith("reset ")]
    made = [sql.split()[1] for sql in opened if sql.startswith("set ")]
    assert opened == [f"reset {key}" for key in reset_first] + [sql for sql in opened if sql.startswith("set ")]
    assert sorted(reset_first + made) == sorted(every)
    assert [sql.split()[1] for sql in closed] == made and all(sql.startswith("reset ") for sql in closed)


def test_window_checks_of_a_changes_stream_follow_row_tracking() -> None:
    """Delta's changelog reads a window only if row tracking is on at its first version and stays
    on; the change feed's settings do not matter to it."""
    from datetime import datetime

    from dbt_tablestream._macros import render

    stream = {
        "stream": "s",
        "subject": "Stream s",
        "remedy": "Reset it.",
        "source": "app.t",
        "after": 4,
        "through": 7,
        "read": "changelog",
    }

    def commit(version: int, operation: str, parameters: str = "") -> dict:
        return {
            "version": version,
            "timestamp": datetime(2026, 1, 1),
            "operation": operation,
            "operationParameters": parameters,
        }

    enable = '{"properties": "{\\"delta.enableRowTracking\\":\\"true\\"}"}'
    disable = '{"properties": "{\\"delta.enableRowTracking\\":\\"false\\"}"}'
    feed_off = '{"properties": "{\\"delta.enableChangeDataFeed\\":\\"false\\"}"}'
    late = [commit(5, "WRITE"), commit(6, "SET TBLPROPERTIES", enable), commit(7, "WRITE")]
    refusal = render("_window_commits_problem", stream, late)
    assert refusal["kind"] == "untracked"
    problem = refusal["message"]
    assert problem.startswith("Stream s: row tracking was enabled on app.t at version 6, after the first version 5")
    assert "run the model once with stream_read: table_changes" in problem and problem.endswith("reset it.")
    off = [commit(5, "WRITE"), commit(6, "SET TBLPROPERTIES", disable), commit(7, "WRITE")]
    assert (
        "row tracking was disabled on app.t at version 6" in render("_window_commits_problem", stream, off)["message"]
    )
    at_start = [commit(5, "SET TBLPROPERTIES", enable), commit(6, "WRITE"), commit(7, "SET TBLPROPERTIES", feed_off)]
    assert render("_window_commits_problem", stream, at_start) is None
    # The same history read through the change feed: only the feed's settings count.
    feed = {**stream, "read": "table_changes"}
    assert render("_window_commits_problem", feed, late) is None
    feed_turned_off = [commit(5, "WRITE"), commit(6, "SET TBLPROPERTIES", feed_off), commit(7, "WRITE")]
    assert (
        "change data feed of app.t was not enabled at version 7"
        in render("_window_commits_problem", feed, feed_turned_off)["message"]
    )
    assert render("_window_commits_problem", stream, feed_turned_off) is None


@pytest.mark.parametrize(
    "spark_version, delta_value, named",
    [
        ("4.2.0 32f7299", "false", None),
        ("4.3.1 abc", "true", None),
        ("3.5.1 abc", "false", "Spark is 3.5.1"),
        ("4.1.0", "<undefined>", "Spark is 4.1.0 and its Delta has no changelog reader"),
        ("4.2.0", "<undefined>", "its Delta has no changelog reader"),
    ],
)
def test_the_changelog_needs_spark_4_2_and_delta_4_4(spark_version: str, delta_value: str, named: str | None) -> None:
    from dbt_tablestream._macros import render

    problem = render("_changelog_session_problem", "s", spark_version, delta_value)
    if named is None:
        assert problem is None
        return
    assert problem.startswith("Stream s: stream_read: changelog needs Spark >= 4.2 and Delta >= 4.4")
    assert named in problem and "Nothing was written" in problem and "stream_read: table_changes" in problem


def test_markers_of_both_shapes_are_read_by_one_reader() -> None:
    """A target's history holds markers of one stream (the single shape an earlier version of the
    package wrote) and of a group (each input's marker under tablestream.inputs, the shape every
    commit has now); _find_marker, _find_commit_marker and _own_commit read both through
    _stream_commit_markers, newest commit first, and skip commits without a marker."""
    import json

    from dbt_tablestream._macros import render

    def marked(version: int, marker: dict | None) -> dict:
        metadata = json.dumps({f"tablestream.{key}": value for key, value in marker.items()}) if marker else None
        return {"version": version, "userMetadata": metadata}

    single = {
        "stream": "m__a",
        "stream_id": "tablestream/m__a/1",
        "epoch": 1,
        "from": 3,
        "to": 5,
        "invocation_id": "run-2",
    }
    inputs = [
        {
            f"tablestream.{key}": value
            for key, value in {"stream": name, "stream_id": f"tablestream/{name}/0", "epoch": 0, "to": to}.items()
        }
        for name, to in (("m__a", 2), ("m__b", 9))
    ]
    group = {
        "stream": "m__a+m__b",
        "stream_id": "tablestream/m__a+m__b/0+0",
        "to": 11,
        "invocation_id": "run-1",
        "inputs": inputs,
    }
    group_own = {key: value for key, value in group.items() if key != "inputs"}
    history = [
        marked(8, None),
        marked(7, single),
        marked(6, {"stream": "m__a", **single, "invocation_id": "run-2"}),
        marked(4, group),
    ]

    assert render("_find_marker", history, "m__a") == {"commit_version": 7, **single}
    assert render("_find_marker", history, "m__b") == {
        "commit_version": 4,
        "stream": "m__b",
        "stream_id": "tablestream/m__b/0",
        "epoch": 0,
        "to": 9,
    }
    assert render("_find_marker", history, "m__a+m__b") is None, "a group's own marker is not an input's"
    assert render("_find_commit_marker", history, "m__a+m__b") == {"commit_version": 4, **group_own}
    assert render("_find_commit_marker", history, "m__a") == {"commit_version": 7, **single}
    assert render("_find_marker", history, "m__c") is None
    # The oldest commit carrying this run's marker is its own (a compaction after it carries it too).
    assert render("_own_commit", history, {"stream_id": "tablestream/m__a/1", "through": 5}, invocation_id="run-2") == {
        "commit_version": 6,
        "stream_id": "tablestream/m__a/1",
        "to": 5,
    }
    assert (
        render("_own_commit", history, {"stream_id": "tablestream/m__a/1", "through": 5}, invocation_id="run-3") is None
    )
    group_stream = {"stream_id": "tablestream/m__a+m__b/0+0", "through": 11}
    assert render("_own_commit", history, group_stream, invocation_id="run-1")["commit_version"] == 4
