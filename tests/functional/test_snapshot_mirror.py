"""snapshot_mirror: any relation dbt can select from becomes a stream source (docs/snapshot-mirror.md).

A nightly full export lands in `app.raw` (replaced whole every night) behind the view
`export_v` (a dbt model); the mirror keeps a Delta copy of the view with the change feed on, and streams
read the mirror with ref_stream. Checked: the mirror equals the export after every night; its
change feed holds only the real changes (an unchanged reload writes nothing); NULL or repeated keys
are refused with the keys named and nothing written; a kill after the mirror's commit applies
nothing twice downstream.

In the extended tier (about 170 s here): the default suite must stay within 30 minutes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import StreamBench, sql_values

EXPORT_VIEW = "{{ config(materialized='view') }}\nselect * from {{ source('app', 'raw') }}"
MIRROR = "{{ config(materialized='snapshot_mirror', unique_key='id') }}\nselect * from {{ ref('export_v') }}"
CURRENT = (
    "{{ config(materialized='stream_merge', unique_key='id') }}\n"
    "select * from {{ dbt_tablestream.ref_stream('mirror') }}"
)
CHANGES = (
    "{{ config(materialized='table_stream', unique_key='id') }}\n"
    "select id, name, age, __change_type, __commit_version from {{ dbt_tablestream.ref_stream('mirror') }}"
)
NIGHTS = [
    [(1, "a", 1), (2, "b", 2), (3, "c", 3)],
    [(1, "a", 1), (2, "b", 2), (3, "c", 3)],  # an unchanged reload
    [(1, "a", 1), (2, "B", 2), (4, "d", 4)],  # 2 updated, 3 deleted, 4 inserted
]


def load(raw: str, rows: list[tuple[int, str, int]]) -> None:
    """A night's full export replaces the raw table."""
    shared_spark().sql(
        f"insert overwrite {raw} select cast(col1 as int), col2, cast(col3 as int) from values {sql_values(rows)}"
    )


def mirror_changes(first: int, last: int) -> Counter[tuple[Any, ...]]:
    """The mirror's change feed from version ``first`` to ``last`` (nothing when first > last)."""
    if first > last:
        return Counter()
    rows = shared_spark().sql(
        f"select id, name, age, _change_type from table_changes('analytics.mirror', {first}, {last})"
    )
    return Counter(tuple(row) for row in rows.collect())


def night_bench(tmp_path: Path, processes: bool = False) -> tuple[StreamBench, str]:
    bench = StreamBench(
        tmp_path,
        {"export_v": EXPORT_VIEW, "mirror": MIRROR, "current": CURRENT, "changes": CHANGES},
        sources=("raw",),
        processes=processes,
    )
    raw = f"delta.`{sql_path(Path(bench.source_path('raw')))}`"
    shared_spark().sql(f"create table {raw} (id int, name string, age int) using delta")
    return bench, raw


@pytest.mark.extended
def test_a_nightly_full_export_behind_a_view_streams_only_its_real_changes(tmp_path: Path) -> None:
    bench, raw = night_bench(tmp_path)
    appended: list[Counter[tuple[Any, ...]]] = []
    versions = []
    for night, rows in enumerate(NIGHTS):
        load(raw, rows)
        before = bench.target_rows("changes")
        bench.run()
        versions.append(int(shared_spark().sql("describe history analytics.mirror limit 1").collect()[0]["version"]))
        appended.append(bench.target_rows("changes") - before)
        assert bench.target_rows("mirror") == Counter(rows), night
        assert bench.target_rows("current") == Counter(rows), night
    # The unchanged reload wrote no row: its MERGE changed nothing, and the streams saw nothing.
    assert mirror_changes(versions[0] + 1, versions[1]) == Counter()
    assert appended[1] == Counter()
    assert mirror_changes(versions[1] + 1, versions[2]) == Counter(
        [(2, "b", 2, "update_preimage"), (2, "B", 2, "update_postimage"), (3, "c", 3, "delete"), (4, "d", 4, "insert")]
    )
    assert Counter(row[:4] for row in appended[2].elements()) == Counter(
        [(2, "b", 2, "UPDATE_BEFORE"), (2, "B", 2, "UPDATE_AFTER"), (3, "c", 3, "DELETE"), (4, "d", 4, "INSERT")]
    )


@pytest.mark.extended
def test_null_or_repeated_keys_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    bench, raw = night_bench(tmp_path)
    load(raw, NIGHTS[0])
    bench.run("-s", "export_v", "mirror")
    shared_spark().sql(f"insert into {raw} values (2, 'b2', 2), (2, 'b3', 2), (null, 'x', 0)")
    bench.refused(
        "mirror", "Model mirror (snapshot_mirror)", "id=2 (3 rows)", "id=NULL (1 rows)", "Nothing was written"
    )


@pytest.mark.extended
def test_a_kill_after_the_mirrors_commit_applies_nothing_twice_downstream(tmp_path: Path) -> None:
    bench, raw = night_bench(tmp_path, processes=True)
    # A process of its own knows no view: the mirror reads the export by path here.
    (bench.project.root / "models" / "mirror.sql").write_text(MIRROR.replace("{{ ref('export_v') }}", raw))
    load(raw, NIGHTS[0])
    bench.run()
    load(raw, NIGHTS[2])
    bench.crash("after_target_commit@mirror")
    before = bench.target_rows("changes")
    bench.run()
    assert bench.target_rows("mirror") == bench.target_rows("current") == Counter(NIGHTS[2])
    assert Counter(row[:4] for row in (bench.target_rows("changes") - before).elements()) == Counter(
        [(2, "b", 2, "UPDATE_BEFORE"), (2, "B", 2, "UPDATE_AFTER"), (3, "c", 3, "DELETE"), (4, "d", 4, "INSERT")]
    )
