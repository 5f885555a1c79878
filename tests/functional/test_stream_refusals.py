"""The window refusals of docs/architecture.md ("One stream run, traced", step 2) for
table_stream: each refusal names the stream, the source and the remedy, and leaves the target and
the offsets log exactly as they were."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from tests.functional.streams import CDF, StreamBench, people, shown_streams, stream_model

STREAM = "log__app_t"
RESET = "dbt run --full-refresh -s log"


def established(tmp_path: Path, config: str = "start_at='latest'") -> StreamBench:
    """A stream that has run once and has a pending change."""
    bench = StreamBench(tmp_path, {"log": stream_model(config)})
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.append([(3, "c", 3)])
    bench.run()
    return bench


def test_source_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    shutil.rmtree(bench.source_path())
    bench.refused("log", f"Stream {STREAM}", "app.t does not exist")
    shown = shown_streams(bench.project.root, capsys)[STREAM]
    assert shown["stale"] is True and shown["refusal"] == "missing" and "does not exist" in shown["problem"]


def test_change_feed_not_enabled(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")})
    bench.create_source([(1, "a", 1)], change_feed=False)
    message = bench.refused(
        "log", f"Stream {STREAM}", "change data feed is not enabled on the source app.t", "enable_change_tracking"
    )
    assert "--full-refresh" not in message, "a stream that never ran has missed nothing"


def test_change_feed_turned_off_on_an_established_stream_names_the_rebuild(tmp_path: Path) -> None:
    bench = established(tmp_path)
    bench.source().alter.set_table_properties({"delta.enableChangeDataFeed": "false"})
    bench.append([(4, "d", 4)])  # in no feed
    bench.refused(
        "log",
        f"Stream {STREAM}",
        "change data feed is not enabled on the source app.t",
        "enable_change_tracking",
        "Changes committed while the feed was off are in no feed",
        "--full-refresh",
    )


def test_change_feed_disabled_inside_the_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    bench.source().alter.set_table_properties({"delta.enableChangeDataFeed": "false"})
    bench.append([(4, "d", 4)])  # not recorded
    bench.source().alter.set_table_properties(CDF)
    bench.append([(5, "e", 5)])
    message = bench.refused("log", f"Stream {STREAM}", "change data feed of app.t was not enabled at version", RESET)
    assert "enable_change_tracking" in message
    # The status says why the next run is refused: no on_stale recovers from this, on_feed_off does.
    shown = shown_streams(bench.project.root, capsys)[STREAM]
    assert (
        shown["stale"] is True and shown["refusal"] == "untracked" and "was not enabled at version" in shown["problem"]
    )
    bench.run_ok("run-operation", "dbt_tablestream.show_streams")
    table = capsys.readouterr().out
    assert any(line.startswith(STREAM) and "  UNTRACKED  " in line for line in table.splitlines()), table


def test_offset_older_than_retained_files_after_vacuum(tmp_path: Path) -> None:
    bench = established(tmp_path)
    bench.append([(4, "d", 4)])  # the stream needs this version's data file...
    bench.source().delete("id = 4")  # ...which this removes from the table...
    bench.source().vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)  # ...and this deletes
    bench.refused("log", f"Stream {STREAM} is stale", "app.t were removed (VACUUM)", "silently drop changes", RESET)


def test_offset_older_than_retained_log(tmp_path: Path) -> None:
    bench = established(tmp_path)
    bench.append([(4, "d", 4)])
    bench.append([(5, "e", 5)])
    source = bench.source()
    pending = source.version() - 1
    source.create_checkpoint()
    (Path(bench.source_path()) / "_delta_log" / f"{pending:020d}.json").unlink()  # log cleanup
    bench.refused(
        "log", f"Stream {STREAM} is stale", f"version {pending} of app.t is no longer in its Delta log", RESET
    )


def test_source_dropped_and_recreated(tmp_path: Path) -> None:
    bench = established(tmp_path)
    shutil.rmtree(bench.source_path())
    bench.create_source([(7, "x", 7)])
    for _ in range(5):
        bench.append([(8, "y", 8)])
    bench.refused("log", f"Stream {STREAM}", "app.t was dropped and recreated", RESET)


def test_recreated_source_with_fewer_versions_than_the_offset_is_refused(tmp_path: Path) -> None:
    """Offset 4; the source is dropped and created again, so it is at version 1. That window looks
    empty, and the new table's rows would never arrive: it is refused like any recreated source."""
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")})
    bench.create_source([(1, "a", 1)])
    for key in range(4):
        bench.append([(10 + key, "x", key)])
    bench.run()
    assert bench.offsets()[-1]["to_version"] == 4
    shutil.rmtree(bench.source_path())
    bench.create_source([(7, "x", 7)])
    bench.append([(8, "y", 8)])
    assert bench.source().version() == 1
    bench.refused("log", f"Stream {STREAM}", "app.t was dropped and recreated, or replaced", RESET)


@pytest.mark.parametrize(
    "config,fragments",
    [
        ("stream_mode='upsert'", ["invalid stream_mode 'upsert'", "Accepted values: standard, append_only"]),
        ("start_at='yesterday'", ["invalid start_at 'yesterday'", "snapshot, latest, earliest"]),
        ("start_at={'version': -1}", ["start_at version must be a whole number >= 0"]),
        ("start_at={'version': 99}", ["start_at version 99 is beyond the latest version 0 of app.t"]),
        ("on_schema_change='merge'", ["invalid on_schema_change 'merge'", "append_new_columns"]),
        (
            "stream_name='bad name'",
            ["stream_name must be letters, digits and underscores (or leave it unset), got bad name."],
        ),
        (
            "file_format='parquet'",
            [
                "invalid file_format 'parquet'",
                "Accepted values: delta (every table the package writes is a Delta table), or leave it unset.",
            ],
        ),
    ],
)
def test_unknown_config_values_are_refused_before_any_write(tmp_path: Path, config: str, fragments: list[str]) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model(config)})
    bench.create_source([(1, "a", 1)])
    bench.refused("log", *fragments)
    assert bench.target_version("log") is None and bench.offsets_version() is None


def test_schema_change_that_on_schema_change_does_not_allow(tmp_path: Path) -> None:
    bench = established(tmp_path, "start_at='latest', on_schema_change='fail'")
    wider = people([(9, "z", 9)]).append_column("email", pa.array(["z@x"], pa.string()))
    write_deltalake(bench.source_path(), wider, mode="append", schema_mode="merge")
    bench.refused("log", f"Stream {STREAM}", "columns of app.t no longer match", "added: email", "--full-refresh")


def test_schema_change_appended_when_allowed(tmp_path: Path) -> None:
    bench = established(tmp_path, "start_at='latest', on_schema_change='append_new_columns'")
    wider = people([(9, "z", 9)]).append_column("email", pa.array(["z@x"], pa.string()))
    write_deltalake(bench.source_path(), wider, mode="append", schema_mode="merge")
    bench.run()
    log = DeltaTable(str(bench.target_path("log"))).to_pyarrow_table()
    assert "email" in log.column_names
    assert {row["email"] for row in log.to_pylist() if row["id"] == 9} == {"z@x"}
