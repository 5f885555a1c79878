"""Stream operations and observability: `tablestream status / history / reset`, show / describe /
reset / drop operations, and the generic tests stream_not_stale, stream_lag and mirrors_source."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from dbt.cli.main import dbtRunner
from deltalake import DeltaTable, write_deltalake

from dbt_tablestream.cli import main as tablestream
from tests.functional.local import relocate_schemas
from tests.functional.streams import StreamBench, shown_streams, stream_model

ROOT = Path(__file__).resolve().parents[2]
STREAM = "log__app_t"


def established(tmp_path: Path) -> StreamBench:
    bench = StreamBench(tmp_path, {"log": stream_model("start_at='latest'")})
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.append([(3, "c", 3)])
    bench.run()
    return bench


def vacuum_past_the_offset(bench: StreamBench) -> None:
    bench.append([(4, "d", 4)])
    bench.source().delete("id = 4")
    bench.source().vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)


@pytest.mark.parametrize(
    "recovery",
    [
        pytest.param("tablestream reset", marks=pytest.mark.extended),
        # The same refusal and stale status as with the reset; a --full-refresh's new epoch is in the
        # default suite (test_table_stream.py, test_full_refresh_starts_a_new_epoch).
        pytest.param("--full-refresh", marks=pytest.mark.scenarios),
    ],
)
def test_vacuumed_source_is_refused_shown_stale_and_recovers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recovery: str
) -> None:
    bench = established(tmp_path)
    vacuum_past_the_offset(bench)
    bench.refused("log", f"Stream {STREAM} is stale", "were removed (VACUUM)", "--full-refresh -s log")

    shown = shown_streams(bench.project.root, capsys)[STREAM]
    assert shown["stale"] is True and shown["refusal"] == "stale" and "is stale" in shown["problem"]
    assert shown["to_version"] == 1 and shown["lag_versions"] == bench.source().version() - 1

    latest = bench.source().version()
    if recovery == "--full-refresh":
        bench.run("--full-refresh")
        assert bench.offsets()[-1]["epoch"] == 1
    else:
        assert (
            tablestream(["reset", STREAM, "--project-dir", str(bench.project.root), "--to-version", str(latest)]) == 0
        )
        assert bench.offsets()[-1]["mode"] == "reset" and bench.offsets()[-1]["to_version"] == latest
        before = bench.target_rows("log")
        bench.append([(5, "e", 5)])
        assert bench.run_appended("log") == {(5, "e", 5, "INSERT"): 1}
        assert bench.target_rows("log") - before == {(5, "e", 5, "INSERT"): 1}
    after = shown_streams(bench.project.root, capsys)[STREAM]
    assert after["stale"] is False and after["refusal"] is None and after["lag_versions"] == 0


def test_recreated_source_is_refused_and_shown_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    shutil.rmtree(bench.source_path())
    bench.create_source([(7, "x", 7)])
    for _ in range(3):
        bench.append([(8, "y", 8)])
    bench.refused("log", f"Stream {STREAM}", "app.t was dropped and recreated", "--full-refresh -s log")
    shown = shown_streams(bench.project.root, capsys)[STREAM]
    assert shown["stale"] is True and shown["refusal"] == "recreated" and "dropped and recreated" in shown["problem"]


def test_reset_to_start_drop_describe_and_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    project = bench.project
    bench.append([(4, "d", 4)])

    project.run_ok("run-operation", "dbt_tablestream.describe_stream", "--args", f"{{stream_name: {STREAM}}}")
    described = capsys.readouterr().out
    assert "goes stale" in described and "from " in described and "1 versions" in described
    assert "passes the source's log or file retention" in described

    project.run_ok("run-operation", "dbt_tablestream.reset_stream", "--args", f"{{stream_name: {STREAM}}}")
    assert "its next run rebuilds analytics.log from its start_at" in capsys.readouterr().out
    bench.run()  # start_at latest: a new epoch with an empty target
    assert bench.offsets()[-1]["epoch"] == 1 and bench.target_rows("log") == {}

    project.run_ok("run-operation", "dbt_tablestream.drop_stream", "--args", f"{{stream_name: {STREAM}}}")
    assert shown_streams(project.root, capsys) == {}
    bench.append([(5, "e", 5)])
    bench.run()
    assert bench.offsets()[-1]["epoch"] == 2  # a dropped stream starts over, in the epoch its drop opened
    assert set(shown_streams(project.root, capsys)) == {STREAM}

    capsys.readouterr()
    assert tablestream(["history", STREAM, "--project-dir", str(project.root), "--json"]) == 0
    modes = [row["mode"] for row in json.loads(capsys.readouterr().out)]
    assert modes == ["standard", "dropped", "standard", "reset", "standard", "standard"], "newest first"
    assert tablestream(["history", "nope", "--project-dir", str(project.root)]) == 1


def test_reset_refuses_an_unknown_stream_and_a_bad_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = established(tmp_path)
    state = bench.offsets()
    capsys.readouterr()
    unknown = bench.project.invoke("run-operation", "dbt_tablestream.reset_stream", "--args", "{stream_name: nope}")
    logged = capsys.readouterr().out
    assert (
        not unknown.success
        and "No stream or stream model nope in analytics.tablestream_offsets" in logged
        and STREAM in logged
    )
    beyond = bench.project.invoke(
        "run-operation", "dbt_tablestream.reset_stream", "--args", f"{{stream_name: {STREAM}, to_version: 99}}"
    )
    assert not beyond.success and "to_version must be a version of app.t from 0 to" in capsys.readouterr().out
    assert bench.offsets() == state


def example_main() -> Any:
    """example_project/main.py as a module, for its `orders` table builder."""
    spec = importlib.util.spec_from_file_location("example_main", ROOT / "example_project" / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.extended
def test_example_project_status_lag_and_generic_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "example_project"
    shutil.copytree(
        ROOT / "example_project", project, ignore=shutil.ignore_patterns("warehouse", "target", "logs", "dbt_packages")
    )
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT.as_posix()}\n")
    schema = project / "models" / "schema.yml"
    by_age = (
        "    data_tests:\n"
        "      - dbt_tablestream.stream_lag:\n          name: orders_changes_lag_within_a_day\n"
        "          arguments: {max_age: '1 day'}\n"
        "      - dbt_tablestream.stream_lag:\n          name: orders_changes_lag_within_no_time\n"
        "          arguments: {max_age: 0}\n"
    )
    log_model = "    description: The change log of app.orders, appended by a table stream.\n"
    assert log_model + "    data_tests:\n" in schema.read_text()
    schema.write_text(schema.read_text().replace(log_model + "    data_tests:\n", log_model + by_age))
    source = project / "warehouse" / "app.db" / "orders"
    orders = example_main().orders
    # The shared session's catalog: this project's schemas live in its own warehouse folder.
    relocate_schemas(project / "warehouse", ("app", "analytics", "analytics_dbt_test__audit"))
    (project / "landing").mkdir(exist_ok=True)
    (project / "landing" / "partner_a.json").write_text('{"order_id": 101, "customer": "Erin", "amount": 1.5}\n')
    (project / "exports").mkdir(exist_ok=True)
    (project / "exports" / "customers.json").write_text('{"customer_id": 1, "name": "Ann", "segment": "retail"}\n')
    args = ["--project-dir", str(project), "--profiles-dir", str(project)]

    def dbt(*command: str) -> Any:
        return dbtRunner().invoke([*command, *args])

    assert dbt("deps").success
    assert dbt("run-operation", "create_app_tables").success
    write_deltalake(
        str(source), orders([(1, "Alice", "1000.00", "placed"), (2, "Bob", "2000.00", "placed")]), mode="append"
    )
    assert dbt("run-operation", "dbt_tablestream.enable_change_tracking", "--args", "{relation: app.orders}").success
    assert dbt("build").success
    DeltaTable(str(source)).update(updates={"status": "'shipped'"}, predicate="order_id = 2")
    assert dbt("build").success
    streams = shown_streams(project, capsys)
    orders_streams = {"orders_changes__app_orders", "orders_current__app_orders", "order_history__app_orders"}
    others = {
        "landing_file_events__landing_files",
        "landing_loaded__landing_files",
        "order_events_current__app_order_events",
        "customers_current__customers_mirror",
    }
    assert set(streams) == orders_streams | others
    assert all(entry["lag_versions"] == 0 and entry["stale"] is False for entry in streams.values())

    write_deltalake(str(source), orders([(3, "Carol", "500.00", "placed")]), mode="append")
    lags = {name: entry["lag_versions"] for name, entry in shown_streams(project, capsys).items()}
    assert lags == {name: 1 if name in orders_streams else 0 for name in streams}

    tested = dbt("test")
    outcomes = {result.node.name: (str(result.status), result.failures) for result in tested.result}
    lag = {name: outcome for name, outcome in outcomes.items() if "stream_lag" in name}
    assert len(lag) == 2 and all(outcome == ("fail", 1) for outcome in lag.values()), outcomes
    # By age: the source's newest commit is seconds newer than the stream's offset.
    assert outcomes["orders_changes_lag_within_a_day"] == ("pass", 0), outcomes
    assert outcomes["orders_changes_lag_within_no_time"] == ("fail", 1), outcomes
    passing = [name for name in outcomes if "stream_not_stale" in name or "mirrors_source" in name]
    assert [outcome for name, outcome in outcomes.items() if "valid_history" in name] == [("pass", 0)], outcomes
    assert len(passing) == 6 and all(outcomes[name][0] == "pass" for name in passing), outcomes

    DeltaTable(str(project / "warehouse" / "analytics.db" / "orders_current")).update(
        updates={"amount": "amount + 1"}, predicate="order_id = 1"
    )
    mirrored = dbt("test", "-s", "orders_current", "--store-failures")
    outcome = {result.node.name: result for result in mirrored.result if "mirrors_source" in result.node.name}
    (result,) = outcome.values()
    assert str(result.status) == "fail" and result.failures == 2
    failing = DeltaTable(
        str(project / "warehouse" / "analytics_dbt_test__audit.db" / result.node.alias)
    ).to_pyarrow_table()
    differences = sorted((row["difference"], row["order_id"], str(row["amount"])) for row in failing.to_pylist())
    assert differences == [("missing from target", 1, "1000.00"), ("not in source", 1, "1001.00")]
