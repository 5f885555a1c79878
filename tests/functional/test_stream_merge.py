"""stream_merge: keyed MERGE of net changes, its configs and refusals, crashes and concurrent runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from deltalake import DeltaTable

from tests.functional.local import shared_spark
from tests.functional.streams import STREAM_READS_FULL, StreamBench, commit_adds_vectors, stream_model

MERGE = "materialized='stream_merge', unique_key='id'"


def merge_model(config: str = "", columns: str = "*") -> str:
    return (
        f"{{{{ config({MERGE}{', ' + config if config else ''}) }}}}\n"
        f"select {columns} from {{{{ dbt_tablestream.source_stream('app', 't') }}}}"
    )


def source_state(bench: StreamBench, version: int | None = None) -> Counter:
    table = DeltaTable(bench.source_path()) if version is None else DeltaTable(bench.source_path(), version=version)
    return Counter((row["id"], row["name"], row["age"]) for row in table.to_pyarrow_table().to_pylist())


def target_state(bench: StreamBench, model: str = "current") -> Counter:
    return Counter(row[:3] for row in bench.target_rows(model))


def churn(bench: StreamBench) -> None:
    """The same keys changed many times inside one window, a delete then re-insert, an insert then delete."""
    source = bench.source
    source().update(updates={"age": "age + 10"}, predicate="id = 1")
    source().update(updates={"age": "age + 10"}, predicate="id = 1")
    source().delete("id = 2")
    bench.append([(2, "B", 22), (4, "d", 4)])
    source().delete("id = 4")
    source().delete("id = 3")
    bench.append([(5, "e", 5)])
    source().update(updates={"name": "'E'"}, predicate="id = 5")


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_churny_keys_merge_to_the_source_state(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"current": merge_model()}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    assert target_state(bench) == source_state(bench)  # the first run mirrors the source (start_at snapshot)
    churn(bench)
    bench.run()
    assert target_state(bench) == source_state(bench) == Counter({(1, "a", 21): 1, (2, "B", 22): 1, (5, "E", 5): 1})
    version = bench.target_version("current")
    bench.run()
    assert bench.target_version("current") == version  # an empty window makes no target commit
    # The last commit is the window's write (a one-file target is rewritten from itself), not a rebuild.
    assert written_by(DeltaTable(str(bench.target_path("current"))).history(1)[0]) in ("MERGE", "REWRITE")


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_soft_and_ignored_deletes(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(
        tmp_path,
        {"soft": merge_model("delete_mode='soft'"), "kept": merge_model("delete_mode='ignore'")},
        stream_read=stream_read,
    )
    bench.create_source([(1, "a", 1), (2, "b", 2)])
    bench.run()
    bench.source().delete("id = 2")
    delete_version = bench.source().version()
    bench.run()
    soft = {row["id"]: row for row in DeltaTable(str(bench.target_path("soft"))).to_pyarrow_table().to_pylist()}
    assert soft[1]["_deleted"] is False and soft[1]["_deleted_version"] is None
    assert soft[2]["_deleted"] is True and soft[2]["_deleted_version"] == delete_version
    assert soft[2]["_deleted_at"] is not None and soft[2]["age"] == 2
    assert target_state(bench, "kept") == Counter({(1, "a", 1): 1, (2, "b", 2): 1})
    bench.append([(2, "back", 20)])  # a re-insert revives the soft-deleted row
    bench.run()
    soft = {row["id"]: row for row in DeltaTable(str(bench.target_path("soft"))).to_pyarrow_table().to_pylist()}
    assert soft[2]["_deleted"] is False and soft[2]["name"] == "back" and soft[2]["_deleted_at"] is None


@pytest.mark.scenarios
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_merge_update_and_exclude_columns(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(
        tmp_path,
        {
            "only_age": merge_model("merge_update_columns=['age']"),
            "not_age": merge_model("merge_exclude_columns=['age']"),
        },
        stream_read=stream_read,
    )
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.source().update(updates={"age": "9", "name": "'z'"}, predicate="id = 1")
    bench.append([(2, "b", 2)])
    bench.run()
    assert target_state(bench, "only_age") == Counter({(1, "a", 9): 1, (2, "b", 2): 1})
    assert target_state(bench, "not_age") == Counter({(1, "z", 1): 1, (2, "b", 2): 1})


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_model_may_filter_join_and_compute_over_the_stream(tmp_path: Path, stream_read: str) -> None:
    model = (
        f"{{{{ config({MERGE}) }}}}\n"
        "select id, upper(name) as name, age * 2 as age, __change_type, __commit_version\n"
        "from {{ dbt_tablestream.source_stream('app', 't') }}\nwhere id < 100"
    )
    bench = StreamBench(tmp_path, {"current": model}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (100, "big", 0)])
    bench.run()
    bench.source().update(updates={"age": "5"}, predicate="id = 1")
    bench.run()
    assert target_state(bench) == Counter({(1, "A", 10): 1})


def written_by(commit: dict) -> str:
    """How a commit of DeltaTable.history wrote: MERGE, REPLACE (an overwrite with a predicate:
    INSERT ... REPLACE WHERE) or REWRITE (an overwrite of the whole table)."""
    if commit["operation"] != "WRITE":
        return str(commit["operation"])
    parameters = commit.get("operationParameters") or {}
    assert parameters.get("mode") == "Overwrite", commit
    return "REPLACE" if parameters.get("predicate") not in (None, "", "[]") else "REWRITE"


def test_a_scattered_window_rewrites_the_target_and_a_clustered_one_merges(tmp_path: Path) -> None:
    """merge_write auto (_stream_net_write_choice): a window whose keys fall in half the target's
    key-ordered files (of max_rows_per_file rows) or more is written by rewriting the target from
    itself (INSERT OVERWRITE), a window of neighbouring keys by MERGE. Each commit carries the
    stream's marker, and leaves the source's rows. With merge_write replace_where the scattered
    window replaces its keys (INSERT ... REPLACE WHERE); with merge_write merge, and with more keys
    than replace_where_max_keys, it is merged. On a target the model gives deletion vectors the
    scattered window replaces its keys, marking rows in vectors, and the clustered window's MERGE
    copies the files it touches instead (read with Spark: delta-rs's pyarrow reader refuses such a
    table)."""
    models = {
        "current": merge_model("max_rows_per_file=100"),
        "replaced": merge_model("max_rows_per_file=100, merge_write='replace_where'"),
        "merged": merge_model("max_rows_per_file=100, merge_write='merge'"),
        "capped": merge_model("max_rows_per_file=100, merge_write='replace_where', replace_where_max_keys=5"),
        "vectors": merge_model("max_rows_per_file=100, tblproperties={'delta.enableDeletionVectors': 'true'}"),
    }
    bench = StreamBench(tmp_path, models)
    bench.create_source([(key, f"n{key}", key) for key in range(1000)])
    bench.run()
    writes = []
    for predicate in ("id % 97 = 3", "id >= 500 and id < 510"):
        bench.source().update(updates={"age": "age + 1000"}, predicate=predicate)
        bench.source().delete(predicate.replace("3", "5") if "%" in predicate else "id = 510")
        bench.append([(5000 + len(writes), "new", 0)])
        bench.run()
        for model in ("current", "replaced", "merged", "capped"):
            assert target_state(bench, model) == source_state(bench), model
        vectors = Counter(
            tuple(row) for row in shared_spark().sql("select id, name, age from analytics.vectors").collect()
        )
        assert vectors == source_state(bench)
        history = DeltaTable(str(bench.target_path("current"))).history(1)[0]
        assert "current__app_t" in history["userMetadata"]
        writes.append(
            tuple(
                written_by(DeltaTable(str(bench.target_path(model))).history(1)[0])
                for model in ("current", "replaced", "merged", "capped")
            )
        )
        vectors_table = DeltaTable(str(bench.target_path("vectors")))
        writes.append(
            (
                written_by(vectors_table.history(1)[0]),
                commit_adds_vectors(bench.target_path("vectors"), vectors_table.version()),
            )
        )
    assert writes == [
        ("REWRITE", "REPLACE", "MERGE", "MERGE"),
        ("REPLACE", True),
        ("MERGE", "REPLACE", "MERGE", "MERGE"),
        ("MERGE", False),
    ]
    # A rewrite keeps each file's key range: every file of the rewritten target holds keys of one
    # 100-key run of the build's key order, or only the window's upserts.
    spans = (
        shared_spark()
        .sql("select min(id) as lo, max(id) as hi from analytics.current group by _metadata.file_path")
        .collect()
    )
    assert sum(1 for row in spans if row.hi - row.lo >= 100) <= 2, spans


@pytest.mark.parametrize(
    "model,fragments",
    [
        (
            merge_model(columns="name, age, __change_type, __commit_version"),
            ["lacks id", "keep its unique_key columns"],
        ),
        (merge_model(columns="id, name, age, __commit_version"), ["lacks __change_type"]),
        (
            "{{ config(materialized='stream_merge') }}\nselect * from {{ dbt_tablestream.source_stream('app', 't') }}",
            ["needs unique_key"],
        ),
        (merge_model("delete_mode='purge'"), ["invalid delete_mode 'purge'", "Accepted values: hard, soft, ignore"]),
        (
            merge_model("merge_update_columns=['age'], merge_exclude_columns=['name']"),
            ["merge_update_columns or merge_exclude_columns, not both"],
        ),
        (
            merge_model("merge_write='replace_where', delete_mode='soft'"),
            [
                "merge_write: replace_where deletes every row of a key it replaces",
                "delete_mode: hard (delete_mode is soft)",
                "Use merge_write: auto",
            ],
        ),
        (
            merge_model("merge_write='rewrite', merge_update_columns=['age']"),
            [
                "merge_write: rewrite writes every column of a changed row",
                "Use merge_write: auto (replace_where or rewrite for the windows that qualify) or merge",
            ],
        ),
        (
            merge_model("merge_write='upsert'"),
            ["invalid merge_write 'upsert'", "Accepted values: auto", "rewrite (every window"],
        ),
    ],
    ids=[
        "key-missing",
        "change-type-missing",
        "no-unique-key",
        "bad-delete-mode",
        "both-column-lists",
        "replace-where-soft",
        "rewrite-update-columns",
        "bad-merge-write",
    ],
)
def test_bad_models_are_refused_before_any_write(tmp_path: Path, model: str, fragments: list[str]) -> None:
    bench = StreamBench(tmp_path, {"current": model})
    bench.create_source([(1, "a", 1)])
    bench.refused("current", *fragments)
    assert bench.target_version("current") is None and bench.offsets_version() is None


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_null_key_in_a_change_row_is_refused(tmp_path: Path, stream_read: str) -> None:
    model = (
        f"{{{{ config({MERGE}) }}}}\n"
        "select case when age = 0 then null else id end as id, name, age, __change_type, __commit_version\n"
        "from {{ dbt_tablestream.source_stream('app', 't') }}"
    )
    bench = StreamBench(tmp_path, {"current": model}, stream_read=stream_read)
    bench.create_source([(1, "a", 1)])
    bench.run()
    bench.append([(2, "zero", 0)])
    bench.refused("current", "Stream current__app_t on app.t: 1 change rows", "NULL unique_key (id)")


@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_keyed_table_stream_logs_net_changes(tmp_path: Path, stream_read: str) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("unique_key='id', start_at='latest'")}, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    churn(bench)
    assert bench.run_appended("log") == Counter(
        {
            (1, "a", 1, "UPDATE_BEFORE"): 1,
            (1, "a", 21, "UPDATE_AFTER"): 1,
            (2, "b", 2, "UPDATE_BEFORE"): 1,
            (2, "B", 22, "UPDATE_AFTER"): 1,
            (3, "c", 3, "DELETE"): 1,
            (5, "E", 5, "INSERT"): 1,
        }
    )


# --- crashes (every dbt step a process of its own) ------------------------------------------------------


# Each crash is a `dbt run` process of its own (about a minute here), so these are in the soak
# (`-m soak`). The default suite crashes a stream_merge after its target commit in
# test_several_streams (the union of two streams, recovered from its inputs' markers by the same
# resolve_stream and stream_commit), and a table_stream after its target commit and after the offsets
# append (_finish_stream_run, shared by both materializations) in test_table_stream.
CRASH_POINTS = [
    pytest.param(["before_target_commit", "after_target_commit"], id="target-commit", marks=pytest.mark.soak),
    pytest.param(["after_offsets_append"], id="offsets-append", marks=pytest.mark.soak),
]


@pytest.mark.parametrize("points", CRASH_POINTS)
@pytest.mark.parametrize("stream_read", STREAM_READS_FULL)
def test_kill_at_each_step_then_rerun_leaves_the_target_as_without_the_crash(
    tmp_path: Path, stream_read: str, points: list[str]
) -> None:
    """A `dbt run` process SIGKILLed at steps of the commit protocol in turn, each followed by
    a normal run: the target equals the source after every rerun, and no window is applied twice."""
    bench = StreamBench(tmp_path, {"current": merge_model()}, processes=True, stream_read=stream_read)
    bench.create_source([(1, "a", 1), (2, "b", 2), (3, "c", 3)])
    bench.run()
    for round, point in enumerate(points):
        source = bench.source
        source().update(updates={"age": "age + 10"}, predicate="id = 1")
        source().update(updates={"age": "age + 10"}, predicate="id = 1")
        source().delete("id = 2")
        bench.append([(2, f"B{round}", 22 + round), (10 + round, "d", 4)])
        source().delete(f"id = {10 + round}")
        bench.append([(20 + round, "e", 5)])
        bench.crash(point)
        applied = target_state(bench) == source_state(bench)
        assert applied == (point != "before_target_commit"), point
        # The crashed run continued the stream (a MERGE, or a one-file target rewritten from itself), it
        # did not rebuild the target (CREATE OR REPLACE TABLE).
        operation = written_by(DeltaTable(str(bench.target_path("current"))).history(1)[0])
        is_window_write = operation in ("MERGE", "REWRITE")
        assert is_window_write or (point == "before_target_commit" and round == 0), (point, operation)

        bench.run()
        assert target_state(bench) == source_state(bench), point
        windows = [(row["from_version"], row["to_version"]) for row in bench.offsets() if row["rows_written"]]
        assert len(windows) == len(set(windows)), f"a window was applied twice after a kill at {point}"
        assert bench.offsets()[-1]["to_version"] == bench.source().version()
