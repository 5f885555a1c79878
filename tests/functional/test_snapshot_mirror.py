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


def files_rewritten(first: int, last: int, table: str = "analytics.mirror") -> int:
    """The data files the mirror's commits from ``first`` to ``last`` removed."""
    history = shared_spark().sql(f"describe history {table}").collect()
    return sum(
        int((row["operationMetrics"] or {}).get("numTargetFilesRemoved", 0))
        for row in history
        if first <= int(row["version"]) <= last
    )


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
        assert not shared_spark().catalog.tableExists("analytics.mirror__tablestream_diff"), night
    # The unchanged reload wrote nothing: no file of the mirror was rewritten (a MERGE of the whole
    # snapshot would have copied them all), and the streams saw nothing.
    assert files_rewritten(versions[0] + 1, versions[1]) == 0
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
    # Key 1 repeated exactly as the mirror holds it: no difference, yet refused.
    shared_spark().sql(f"insert into {raw} values (2, 'b2', 2), (2, 'b3', 2), (null, 'x', 0), (1, 'a', 1)")
    # A later run checks the rows its MERGE would apply, and drops them; a rebuild checks the query.
    for args in ((), ("--full-refresh",)):
        bench.refused(
            "mirror",
            "Model mirror (snapshot_mirror)",
            "id=2 (3 rows)",
            "id=NULL (1 rows)",
            "id=1 (2 rows)",
            "Nothing was written",
            args=args,
        )
        assert not shared_spark().catalog.tableExists("analytics.mirror__tablestream_diff")


@pytest.mark.extended
def test_a_bad_config_is_refused_naming_the_model_and_what_it_takes_and_nothing_is_written(tmp_path: Path) -> None:
    """The mirror's configs are checked by their spec entries (docs/configuration.md), on a later
    run and on a rebuild alike, before anything is written."""
    bench, raw = night_bench(tmp_path)
    load(raw, NIGHTS[0])
    bench.run("-s", "export_v", "mirror")
    model = bench.project.root / "models" / "mirror.sql"
    refusals = {
        "": [
            "Model mirror is a snapshot_mirror model and needs unique_key, the column or columns that identify a row",
            "config(materialized='snapshot_mirror', unique_key='order_id')",
            "It takes a column name or a non-empty list of column names. Nothing was written.",
        ],
        ", unique_key='id', delete_mode='purge'": [
            "Model mirror: invalid delete_mode 'purge'",
            "Accepted values: hard, soft, ignore",
        ],
        # dbt refuses a top-level unique_key of another type itself; under meta it is the package's.
        ", meta={'unique_key': 3}": [
            "Model mirror: unique_key must be a column name or a non-empty list of column names, got 3"
        ],
    }
    for config, fragments in refusals.items():
        model.write_text(MIRROR.replace(", unique_key='id'", config))
        for args in ((), ("--full-refresh",)):
            bench.refused("mirror", *fragments, args=args)
    assert bench.target_rows("mirror") == Counter(NIGHTS[0])


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


SOFT = MIRROR.replace("unique_key='id'", "unique_key='id', delete_mode='soft'")
IGNORE = MIRROR.replace("unique_key='id'", "unique_key='id', delete_mode='ignore'")


@pytest.mark.extended
def test_soft_and_ignore_keep_vanished_keys_and_a_returning_key_is_revived(tmp_path: Path) -> None:
    """Night 3 drops key 3, night 4 brings it back changed: soft marks it deleted and then revives
    it, ignore keeps it as it was until it changes; an unchanged night rewrites no file."""
    bench = StreamBench(tmp_path, {"export_v": EXPORT_VIEW, "soft": SOFT, "ignore": IGNORE}, sources=("raw",))
    raw = f"delta.`{sql_path(Path(bench.source_path('raw')))}`"
    shared_spark().sql(f"create table {raw} (id int, name string, age int) using delta")
    back = [(1, "a", 1), (2, "B", 2), (3, "C", 3), (4, "d", 4)]
    seen: dict[str, list[Counter[tuple[Any, ...]]]] = {"soft": [], "ignore": []}
    versions = []
    for rows in [*NIGHTS, back, back]:
        load(raw, rows)
        bench.run()
        versions.append(int(shared_spark().sql("describe history analytics.soft limit 1").collect()[0]["version"]))
        for model in seen:
            seen[model].append(bench.target_rows(model))
    live = [Counter((row[0], row[1], row[2]) for row in night if not row[3]) for night in seen["soft"]]
    assert live == [Counter(rows) for rows in [*NIGHTS, back, back]]
    assert (3, "c", 3, True) in {row[:4] for row in seen["soft"][2]}, seen["soft"][2]
    assert (3, "C", 3, False, None) in seen["soft"][3], seen["soft"][3]
    assert seen["ignore"][2] == Counter([(1, "a", 1), (2, "B", 2), (3, "c", 3), (4, "d", 4)])
    assert seen["ignore"][3] == seen["ignore"][4] == Counter(back)
    assert files_rewritten(versions[3] + 1, versions[4], "analytics.soft") == 0
    assert files_rewritten(versions[0] + 1, versions[1], "analytics.soft") == 0
