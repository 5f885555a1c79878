"""A year of runs: the offsets log and a table_stream target gain small files on every run, and
every `tablestream_compact_every`-th run of a stream (50 by default, 100 here: fewer dbt runs for
the same 300 commits) has Delta compact them, in commits that change no data
(docs/architecture.md, "Cost")."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake

from tests.functional.streams import StreamBench, people

LOG = (
    "{{ config(materialized='table_stream', tblproperties={'delta.enableChangeDataFeed': 'true'}) }}\n"
    "select id, name, age from {{ dbt_tablestream.source_stream('app', 't') }}"
)
DOWNSTREAM = (
    "{{ config(materialized='table_stream', start_at='earliest') }}\n"
    "select id, name, age, __change_type from {{ dbt_tablestream.ref_stream('log') }}"
)
STREAM = "log__app_t"
EVERY = 100


def log_rows(bench: StreamBench) -> pa.Table:
    return DeltaTable(str(bench.warehouse / "analytics.db" / "tablestream_offsets")).to_pyarrow_table()


def test_file_counts_stay_bounded_over_300_runs_commits_and_compactions_are_no_change(tmp_path: Path) -> None:
    bench = StreamBench(
        tmp_path, {"log": LOG, "downstream": DOWNSTREAM}, project_vars={"tablestream_compact_every": EVERY}
    )
    bench.create_source([(1, "a", 1)])
    bench.run()
    offsets_path = str(bench.warehouse / "analytics.db" / "tablestream_offsets")
    target_path = str(bench.target_path("log"))
    appended: Counter[tuple[int, str, int]] = Counter({(1, "a", 1): 1})
    for cycle in range(1, 300 // EVERY + 1):
        # The commits of the runs between two compactions, made fast by delta-rs: the stream's
        # latest offsets row again (its position does not move) and one row appended to the
        # target per commit, as a run would.
        logged = log_rows(bench)
        mine = logged.filter(pc.equal(logged["stream_name"], STREAM))
        latest = mine.sort_by([("to_version", "descending")]).slice(0, 1)
        for _ in range(EVERY - 1 - mine.num_rows % EVERY):
            write_deltalake(offsets_path, latest, mode="append")
        for index in range(EVERY - 1):
            row = (1000 * cycle + index, f"r{cycle}", index)
            write_deltalake(target_path, people([row]), mode="append")
            appended[row] += 1
        before = (len(DeltaTable(offsets_path).file_uris()), len(DeltaTable(target_path).file_uris()))
        assert min(before) >= EVERY, before
        row = (100 + cycle, "s", cycle)
        bench.append([row])
        appended[row] += 1
        bench.run("-s", "log")  # the stream's EVERY-th run since the last compaction
        after = (len(DeltaTable(offsets_path).file_uris()), len(DeltaTable(target_path).file_uris()))
        assert max(after) <= 5, (before, after)
    bench.run("-s", "downstream")
    operations = [entry["operation"] for entry in DeltaTable(target_path).history()]
    assert operations.count("OPTIMIZE") == 300 // EVERY, operations
    # The downstream stream read across the compactions of its source and saw each row once.
    assert bench.target_rows("log") == appended
    assert bench.target_rows("downstream") == Counter({(*row, "INSERT"): n for row, n in appended.items()})
