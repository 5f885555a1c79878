"""Streams without a change feed (`stream_read: delta_log`, `on_feed_off: delta_log`): the changes
of a commit read from the files the Delta log says it added and removed (docs/delta-log-read.md).

- Random histories of inserts, updates, deletes, MERGEs, overwrites with the same rows and OPTIMIZE,
  each applied to two tables, one with the change feed and one without: after every run a stream
  reading the log of the one and a stream reading the feed of the other each leave the
  `stream_merge` target and the keyed `table_stream` log that the steps themselves give (each
  key's values, and each run's net changes, tracked in Python as the steps are drawn).
- A window in which the feed was off for some commits is refused by default, and read with
  `on_feed_off: delta_log`: each commit the way it can be read.
- A change query (`changes()`) reads the log too, with the model's `stream_read` / `on_feed_off`.
- A vacuumed window is stale; a deletion-vector commit, a column-mapped table and a file written
  before its column's type was widened are read correctly; a RESTORE that puts back the same
  columns is read, a commit that changed the table's columns and rewrote its files at once is
  refused.
- The seed draws deletion vectors on both twins or neither; an extended example always has them.

The property test runs one example in the default suite (about 140 s here); the others run in the
extended tier. A longer soak:
    TABLESTREAM_PROPERTY_EXAMPLES=8 pytest -m soak tests/functional/test_delta_log_read.py
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given

from tests.functional.local import shared_spark, sql_path
from tests.functional.streams import StreamBench, property_settings, stream_model
from tests.seeds import seeds

FEED = "'delta.enableChangeDataFeed' = 'true'"
KEYED = "unique_key='id'"


def mirror(source: str, read: str = "") -> str:
    config = f"materialized='stream_merge', {KEYED}" + (f", stream_read='{read}'" if read else "")
    return f"{{{{ config({config}) }}}}\nselect * from {{{{ dbt_tablestream.source_stream('app', '{source}') }}}}"


def changes(source: str, read: str = "") -> str:
    config = KEYED + (f", stream_read='{read}'" if read else "")
    return stream_model(config, source=source, columns="id, name, age, __change_type, __commit_version")


def audit(source: str, config: str = "") -> str:
    """A change query (`dbt_tablestream.changes`) of ``source`` from `var('from')` to the latest version,
    its commit versions kept as `version` (target_rows leaves out `__commit_version`)."""
    return (
        "{{ config(materialized='table'" + (f", {config}" if config else "") + ") }}\n"
        "select id, name, age, __change_type, __commit_version as version\n"
        f"from {{{{ dbt_tablestream.changes(source('app', '{source}'), var('from')) }}}}"
    )


TWINS = {
    "mirror_feed": mirror("fed"),
    "mirror_log": mirror("plain", "delta_log"),
    "changes_feed": changes("fed"),
    "changes_log": changes("plain", "delta_log"),
}


class Twins:
    """Two Delta tables `app.fed` (change feed on) and `app.plain` (off) that every step changes alike."""

    def __init__(self, bench: StreamBench, properties: dict[str, str] | None = None) -> None:
        self.bench = bench
        self.tables = {name: f"delta.`{sql_path(Path(bench.source_path(name)))}`" for name in ("fed", "plain")}
        extra = ", ".join(f"'{key}' = '{value}'" for key, value in (properties or {}).items())
        for name, table in self.tables.items():
            listed = ", ".join(part for part in (FEED if name == "fed" else "", extra) if part)
            shared_spark().sql(
                f"create table {table} (id int, name string, age int) using delta"
                + (f" tblproperties ({listed})" if listed else "")
            )

    def sql(self, statement: str) -> None:
        """``statement`` on both tables (`{t}` names the table)."""
        for table in self.tables.values():
            shared_spark().sql(statement.format(t=table))

    def rows(self) -> Counter[tuple[Any, ...]]:
        return Counter(tuple(row) for row in shared_spark().sql(f"select * from {self.tables['fed']}").collect())


class StepOracle:
    """What the random steps do to the twins, tracked from the steps alone: each key's (name, age),
    and each run's net changes per key as a keyed stream logs them (docs/table-streams.md). A step
    that writes a key's own values back (an OPTIMIZE, an overwrite with the same rows, a MERGE
    setting the values a key has) is no change: it leaves carry-overs, which every read drops
    (docs/architecture.md, "Carry-overs, bounded runs and change queries")."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[str, int]] = {}
        self.next_key = 1
        self.logged: Counter[tuple[Any, ...]] = Counter()  # every run's net changes so far
        self._before: dict[int, tuple[str, int]] = {}
        self._changed: set[int] = set()

    def set(self, key: int, values: tuple[str, int] | None) -> None:
        """A step leaves ``key`` with ``values`` (None: deleted)."""
        if self.rows.get(key) == values:
            return
        self._changed.add(key)
        if values is None:
            del self.rows[key]
        else:
            self.rows[key] = values

    def mirror(self) -> Counter[tuple[Any, ...]]:
        return Counter((key, *values) for key, values in self.rows.items())

    def end_run(self) -> None:
        """Nets the run's changes per key, from its state before the run to its state after:
        absent to present an INSERT of the last values, present to absent a DELETE of the first,
        present to present the first values' UPDATE_BEFORE and the last's UPDATE_AFTER (even when
        they are equal: the key changed in between), absent to absent nothing."""
        for key in self._changed:
            before, after = self._before.get(key), self.rows.get(key)
            if before is None and after is not None:
                self.logged[(key, *after, "INSERT")] += 1
            elif before is not None and after is None:
                self.logged[(key, *before, "DELETE")] += 1
            elif before is not None and after is not None:
                self.logged[(key, *before, "UPDATE_BEFORE")] += 1
                self.logged[(key, *after, "UPDATE_AFTER")] += 1
        self._before = dict(self.rows)
        self._changed = set()


def random_step(rng: random.Random, oracle: StepOracle) -> str:
    """One random commit, as SQL over `{t}`; ``oracle`` is told what it does to each key."""
    keys = list(oracle.rows)
    kind = rng.choice(["insert", "update", "delete", "merge", "overwrite", "optimize"] if keys else ["insert"])
    if kind == "insert":
        new = list(range(oracle.next_key, oracle.next_key + rng.randint(1, 30)))
        oracle.next_key += len(new)
        for key in new:
            oracle.set(key, (f"n{key}", key % 7))
        return "insert into {t} select id, concat('n', id), id % 7 from " + f"range({new[0]}, {new[-1] + 1}) as r(id)"
    if kind == "update":
        chosen = rng.sample(keys, min(len(keys), rng.randint(1, 5)))
        for key in chosen:
            name, age = oracle.rows[key]
            oracle.set(key, (name + "u", age + 1))
        return (
            "update {t} set age = age + 1, name = concat(name, 'u') where id in " + f"({', '.join(map(str, chosen))})"
        )
    if kind == "delete":
        chosen = rng.sample(keys, min(len(keys), rng.randint(1, 4)))
        for key in chosen:
            oracle.set(key, None)
        return "delete from {t} where id in " + f"({', '.join(map(str, chosen))})"
    if kind == "merge":
        updated = rng.sample(keys, min(len(keys), rng.randint(0, 4)))
        deleted = [key for key in rng.sample(keys, min(len(keys), rng.randint(0, 2))) if key not in updated]
        new = list(range(oracle.next_key, oracle.next_key + rng.randint(0, 3)))
        oracle.next_key += len(new)
        for key in updated:
            oracle.set(key, (f"m{key}", key % 5))
        for key in deleted:
            oracle.set(key, None)
        for key in new:
            oracle.set(key, (f"i{key}", 1))
        rows = [f"({key}, 'm{key}', {key % 5}, 'u')" for key in updated]
        rows += [f"({key}, 'd', 0, 'd')" for key in deleted]
        rows += [f"({key}, 'i{key}', 1, 'u')" for key in new]
        if not rows:
            return "update {t} set age = age where id = -1"
        return (
            "merge into {t} as target using (select * from values "
            + ", ".join(rows)
            + " as s(id, name, age, op)) as source on target.id = source.id"
            " when matched and source.op = 'd' then delete"
            " when matched then update set name = source.name, age = source.age"
            " when not matched and source.op = 'u' then insert (id, name, age) values (source.id, source.name, source.age)"
        )
    if kind == "overwrite":
        return "insert overwrite {t} select * from {t}"
    return "optimize {t}"


@property_settings(1)
@given(seed=seeds())
def test_random_histories_read_from_the_delta_log_equal_the_change_feed(tmp_path_factory: Any, seed: int) -> None:
    check_random_history(tmp_path_factory, seed, runs=4)


@pytest.mark.soak
@property_settings(4)
# Seed 0's history, beside the run's own: the default tier's one example is the run's alone.
@example(seed=0)
@given(seed=seeds())
def test_random_histories_read_from_the_delta_log_soak(tmp_path_factory: Any, seed: int) -> None:
    check_random_history(tmp_path_factory, seed, runs=10)


@pytest.mark.extended
@property_settings(1)
@given(seed=seeds())
def test_random_histories_with_deletion_vectors_read_from_the_delta_log_equal_the_change_feed(
    tmp_path_factory: Any, seed: int
) -> None:
    check_random_history(tmp_path_factory, seed, runs=4, deletion_vectors=True)


def check_random_history(tmp_path_factory: Any, seed: int, runs: int, deletion_vectors: bool | None = None) -> None:
    """`runs` runs over one random history of 1-6 commits between runs, on the twins, with deletion
    vectors on both or neither (`None`: the seed decides). With them, an UPDATE, DELETE or MERGE
    changes a file's deletion vector instead of rewriting it. After each run both mirrors hold the
    oracle's rows and both keyed logs its net changes so far (so the log read equals the feed's)."""
    rng = random.Random(seed)
    if deletion_vectors is None:
        deletion_vectors = rng.random() < 0.5
    bench = StreamBench(tmp_path_factory.mktemp("log"), TWINS, sources=("fed", "plain"))
    twins = Twins(bench, {"delta.enableDeletionVectors": "true"} if deletion_vectors else None)
    oracle = StepOracle()
    history: list[str] = []
    for run in range(runs):
        for _ in range(rng.randint(1, 6)):
            history.append(random_step(rng, oracle))
            twins.sql(history[-1])
        oracle.end_run()
        bench.run()
        context = f"seed {seed}, deletion vectors {deletion_vectors}, run {run}, history:\n" + "\n".join(history)
        assert twins.rows() == oracle.mirror(), context  # the oracle's own bookkeeping
        for read in ("log", "feed"):
            assert bench.target_rows(f"mirror_{read}") == oracle.mirror(), f"mirror_{read}: {context}"
            # Versions are left out: an OPTIMIZE commits only where it found files to compact.
            logged = Counter(row[:4] for row in bench.target_rows(f"changes_{read}").elements())
            assert logged == oracle.logged, (
                f"changes_{read}: only in the log {dict(logged - oracle.logged)},"
                f" only in the oracle {dict(oracle.logged - logged)}; {context}"
            )


@pytest.mark.extended
def test_a_window_with_the_feed_off_for_some_commits_is_refused_by_default_and_read_with_on_feed_off(
    tmp_path: Path,
) -> None:
    """The feed is turned off, two commits land, it is turned on again: by default the window is
    refused, naming the version and on_feed_off; with `on_feed_off: delta_log` those commits are
    read from the log and the others from the feed."""
    models = {
        "mirror": mirror("fed"),
        "mixed": mirror("fed").replace(KEYED, KEYED + ", on_feed_off='delta_log'"),
        "mixed_changes": changes("fed").replace(KEYED, KEYED + ", on_feed_off='delta_log'"),
    }
    bench = StreamBench(tmp_path, models, sources=("fed", "plain"))
    twins = Twins(bench)
    fed = twins.tables["fed"]
    spark = shared_spark()
    spark.sql(f"insert into {fed} values (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)")
    bench.run()
    spark.sql(f"update {fed} set name = 'A' where id = 1")
    spark.sql(f"alter table {fed} set tblproperties ('delta.enableChangeDataFeed' = 'false')")
    off = [int(spark.sql(f"describe history {fed} limit 1").collect()[0]["version"]) + 1]
    spark.sql(f"update {fed} set name = 'B' where id = 2")
    spark.sql(f"delete from {fed} where id = 3")
    spark.sql(f"alter table {fed} set tblproperties ('delta.enableChangeDataFeed' = 'true')")
    spark.sql(f"insert into {fed} values (4, 'd', 4)")
    spark.sql(f"update {fed} set age = 40 where id = 4")
    bench.refused("mirror", "was not enabled at version " + str(off[0]), "on_feed_off: delta_log")
    appended = bench.run_appended("mixed_changes")
    bench.run("-s", "mixed")
    assert bench.target_rows("mixed") == twins.rows() == Counter([(1, "A", 1), (2, "B", 2), (4, "d", 40)])
    assert Counter(row[:4] for row in appended.elements()) == Counter(
        [
            *[(1, "a", 1, "UPDATE_BEFORE"), (1, "A", 1, "UPDATE_AFTER"), (2, "b", 2, "UPDATE_BEFORE")],
            *[(2, "B", 2, "UPDATE_AFTER"), (3, "c", 3, "DELETE"), (4, "d", 40, "INSERT")],
        ]
    ), appended


@pytest.mark.extended
def test_deletion_vectors_and_column_mapping_are_read_from_the_log(tmp_path: Path) -> None:
    """On a table with deletion vectors and column mapping (no feed; its files name the columns by
    physical names), an UPDATE and a DELETE that change a file's deletion vector are read as the
    changes they are (by row position, tests/spark_sql/test_delta_log_vectors.py); a RESTORE, which
    also commits metadata (the same columns) and puts a file's older, smaller vector back, is read
    too: the rows the file holds again are its inserts."""
    bench = StreamBench(
        tmp_path,
        {"mirror_log": mirror("plain", "delta_log"), "changes_log": changes("plain", "delta_log")},
        sources=("fed", "plain"),
    )
    twins = Twins(bench, {"delta.enableDeletionVectors": "true", "delta.columnMapping.mode": "name"})
    plain = twins.tables["plain"]
    spark = shared_spark()
    spark.sql(f"insert into {plain} select id, concat('n', id), 1 from range(1, 101) as r(id)")
    bench.run()
    inserted = int(spark.sql(f"describe history {plain} limit 1").collect()[0]["version"])
    spark.sql(f"update {plain} set age = 2 where id = 7")
    spark.sql(f"delete from {plain} where id in (8, 9)")
    appended = bench.run_appended("changes_log")
    bench.run("-s", "mirror_log")
    expected = Counter(tuple(row) for row in spark.sql(f"select * from {plain}").collect())
    assert bench.target_rows("mirror_log") == expected
    assert Counter(row[:4] for row in appended.elements()) == Counter(
        [(7, "n7", 1, "UPDATE_BEFORE"), (7, "n7", 2, "UPDATE_AFTER"), (8, "n8", 1, "DELETE"), (9, "n9", 1, "DELETE")]
    ), appended
    # A RESTORE puts the file's older vector back, removes the updated row's new file and commits
    # the old metadata (the same columns) with it.
    spark.sql(f"restore table {plain} to version as of {inserted}")
    operation = spark.sql(f"describe history {plain} limit 1").collect()[0]["operation"]
    assert operation == "RESTORE", operation
    appended = bench.run_appended("changes_log")
    bench.run("-s", "mirror_log")
    expected = Counter(tuple(row) for row in spark.sql(f"select * from {plain}").collect())
    assert len(expected) == 100 and bench.target_rows("mirror_log") == expected
    assert Counter(row[:4] for row in appended.elements()) == Counter(
        [(7, "n7", 2, "UPDATE_BEFORE"), (7, "n7", 1, "UPDATE_AFTER"), (8, "n8", 1, "INSERT"), (9, "n9", 1, "INSERT")]
    ), appended


@pytest.mark.extended
def test_a_deletion_vector_commit_is_read_from_its_vectors_bytes_without_time_travel(tmp_path: Path) -> None:
    """Deletion vectors read from their own bytes (macros/delta/deletion_vectors.sql), as each
    container of Delta's Roaring format holds them: runs of neighbouring rows, half of a
    10,000-row file as a bitmap, two scattered rows of another file as an array; each vector grows
    commit by commit. The reads select the rows at the positions each commit marked from the file
    by its path, each file scanned once for all the commits, so no statement travels in time, and the
    changes are what the commits changed."""
    bench = StreamBench(tmp_path, {"changes_log": changes("plain", "delta_log")}, sources=("fed", "plain"))
    plain = Twins(bench, {"delta.enableDeletionVectors": "true"}).tables["plain"]
    spark = shared_spark()
    for first, last in ((1, 10000), (20001, 20100)):
        spark.sql(
            f"insert into {plain} select /*+ REPARTITION(1) */ id, concat('n', id), 1 from range({first}, {last + 1}) as r(id)"
        )
    bench.run()
    spark.sql(f"delete from {plain} where id between 20 and 40")
    spark.sql(f"update {plain} set age = 2 where id in (7, 8999)")
    spark.sql(f"delete from {plain} where id % 2 = 0 and id > 100 and id < 20000")
    spark.sql(f"delete from {plain} where id in (3, 9001, 20005, 20050)")
    statements: list[str] = []

    def record(event: Any) -> None:
        if event.info.name == "SQLQuery":
            statements.append(str(event.data.sql))

    before = bench.target_rows("changes_log")
    result = bench.invoke("run", "-s", "changes_log", callbacks=[record])
    assert result.success, result.exception
    appended = Counter(row[:4] for row in (bench.target_rows("changes_log") - before).elements())
    deleted = [*range(20, 41), *range(102, 10001, 2), 3, 9001, 20005, 20050]
    updated = [
        (key, f"n{key}", age, kind) for key in (7, 8999) for age, kind in ((1, "UPDATE_BEFORE"), (2, "UPDATE_AFTER"))
    ]
    expected = Counter([*((key, f"n{key}", 1, "DELETE") for key in deleted), *updated])
    assert appended == expected, (appended - expected, expected - appended)
    reads = [sql for sql in statements if "_metadata.row_index in (" in sql]
    assert reads and not [sql for sql in statements if "version as of" in sql.lower()], statements
    # Four commits changed the first file's vector: it is scanned once for all of them.
    by_position = [
        re.findall(r"from parquet\.`([^`]+)`", part)[0]
        for part in reads[0].split("union all")
        if "_metadata.row_index in (" in part
    ]
    assert by_position and len(by_position) == len(set(by_position)), by_position


@pytest.mark.extended
def test_a_window_before_a_schema_change_is_read_with_its_own_columns(tmp_path: Path) -> None:
    """A window that ends before an ADD COLUMNS is read with the columns it had, as the change
    feed reads it: its files read by path select those columns, as do its time-travel reads (two
    DELETEs marking one file's rows: the first's side before it has no vector and is read by its
    path, the second's travels in time); the next window, from the change on, with the new ones."""
    bench = StreamBench(tmp_path, {"changes_log": changes("plain", "delta_log")}, sources=("fed", "plain"))
    plain = Twins(bench, {"delta.enableDeletionVectors": "true"}).tables["plain"]
    spark = shared_spark()
    spark.sql(f"insert into {plain} select id, concat('n', id), 1 from range(1, 11) as r(id)")
    bench.run()
    spark.sql(f"delete from {plain} where id = 1")
    spark.sql(f"delete from {plain} where id = 2")
    spark.sql(f"alter table {plain} add columns (note string)")
    spark.sql(f"insert into {plain} values (11, 'n11', 1, 'new')")
    appended = bench.run_appended("changes_log")
    assert Counter(row[:4] for row in appended.elements()) == Counter(
        [(1, "n1", 1, "DELETE"), (2, "n2", 1, "DELETE")]
    ), appended
    # The next window starts at the change and is read with the new columns.
    appended = bench.run_appended("changes_log")
    assert Counter(row[:4] for row in appended.elements()) == Counter([(11, "n11", 1, "INSERT")]), appended


@pytest.mark.extended
def test_a_delete_across_many_files_reads_at_most_50_of_them_by_path(tmp_path: Path) -> None:
    """A DELETE that marks rows in 60 files on a table with deletion vectors: every file could be
    read by its path, but the window reads at most 50 so (each may cost a DESCRIBE of its footer
    at compile time, and lengthens the SQL); the rest travel in time, and the deletes are the
    same. No footer is described: each file's statistics count every column."""
    bench = StreamBench(tmp_path, {"changes_log": changes("plain", "delta_log")}, sources=("fed", "plain"))
    plain = Twins(bench, {"delta.enableDeletionVectors": "true"}).tables["plain"]
    spark = shared_spark()
    spark.sql(
        f"insert into {plain} select /*+ REPARTITION_BY_RANGE(60, id) */ id, concat('n', id), 1 from range(1, 601) as r(id)"
    )
    bench.run()
    spark.sql(f"delete from {plain} where id % 2 = 0")
    metrics = spark.sql(f"describe history {plain} limit 1").collect()[0]["operationMetrics"]
    assert int(metrics["numDeletionVectorsAdded"]) > 50, metrics
    read = ReadFiles()
    before = bench.target_rows("changes_log")
    result = bench.invoke("run", "-s", "changes_log", callbacks=[read.record])
    assert result.success, result.exception
    appended = bench.target_rows("changes_log") - before
    assert Counter(row[:4] for row in appended.elements()) == Counter(
        (key, f"n{key}", 1, "DELETE") for key in range(2, 601, 2)
    ), appended
    assert 0 < len(read.by_path) <= 50, sorted(read.by_path)
    assert read.travelled, "the files past the window's 50 are read through time travel"
    assert not read.described, sorted(read.described)


def since(source: str, config: str = "") -> str:
    """A change query of ``source`` from `var('from')` with the column `note`, added to it later."""
    return (
        "{{ config(materialized='table'" + (f", {config}" if config else "") + ") }}\n"
        "select id, name, age, note, __change_type, __commit_version as version\n"
        f"from {{{{ dbt_tablestream.changes(source('app', '{source}'), var('from')) }}}}"
    )


def run_from_schema_change(
    bench: StreamBench, properties: dict[str, str], change: str, steps: list[str]
) -> tuple[Any, ReadFiles]:
    """Twins of ten rows, then ``change`` (a schema change) and ``steps`` on both; then a dbt run
    of the change queries from the change's version. The change's DESCRIBE HISTORY row, and what
    the run read."""
    twins = Twins(bench, properties)
    twins.sql("insert into {t} select id, concat('n', id), 1 from range(1, 11) as r(id)")
    twins.sql(change)
    commit = shared_spark().sql(f"describe history {twins.tables['plain']} limit 1").collect()[0]
    for step in steps:
        twins.sql(step)
    read = ReadFiles()
    result = bench.invoke("run", "--vars", f"{{from: {commit['version']}}}", callbacks=[read.record])
    assert result.success, result.exception
    return commit, read


@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "deletion_vectors"])
def test_a_file_written_before_a_column_was_added_is_read_with_the_column_null(
    tmp_path: Path, deletion_vectors: bool
) -> None:
    """An UPDATE after an ADD COLUMNS changes a file written before it: it rewrites the file, or
    marks the row in it with a deletion vector (the file added again with the statistics it was
    written with). That file lacks the column and no statistics of it count the column, so its
    footer is described and the column read as NULL; the UPDATE's new file's statistics count
    every column, so it is not described. The log read equals the feed's. Only the UPDATE's rows
    go through the cancellation of carry-overs and the pairing of updates: the INSERT's skip
    both, each a shuffle of every row."""
    bench = StreamBench(
        tmp_path,
        {"since_feed": since("fed"), "since_log": since("plain", f"stream_read='delta_log', {KEYED}")},
        sources=("fed", "plain"),
    )
    commit, read = run_from_schema_change(
        bench,
        {"delta.enableDeletionVectors": str(deletion_vectors).lower()},
        "alter table {t} add columns (note string)",
        ["update {t} set name = 'u' where id = 3", "insert into {t} values (11, 'n11', 1, 'new')"],
    )
    added = int(commit["version"])
    expected = Counter(
        [
            (3, "n3", 1, None, "UPDATE_BEFORE", added + 1),
            (3, "u", 1, None, "UPDATE_AFTER", added + 1),
            (11, "n11", 1, "new", "INSERT", added + 2),
        ]
    )
    assert bench.target_rows("since_feed") == expected
    assert bench.target_rows("since_log") == expected
    assert len(read.by_path) == 3 and len(read.described) == 1, (sorted(read.by_path), sorted(read.described))
    window = next(sql for sql in read.statements if " as __tablestream_rewritten" in sql)
    rewritten, after = window.split(" as __tablestream_rewritten", 1)
    # A version is a literal of its files' select, or an entry of the files' joined reads.
    update, insert = (
        re.compile(rf"cast\({version} as bigint\) as _commit_version|'(delete|insert)', {version}, \d+\)")
        for version in (added + 1, added + 2)
    )
    assert update.search(rewritten) and not update.search(after), window
    assert insert.search(after) and not insert.search(rewritten), window


@pytest.mark.extended
@pytest.mark.parametrize("deletion_vectors", [False, True], ids=["copy_on_write", "deletion_vectors"])
def test_a_file_written_before_its_column_was_widened_is_read_with_the_wider_type(
    tmp_path: Path, deletion_vectors: bool
) -> None:
    """Type widening (`ALTER COLUMN age TYPE bigint`) changes the table's type but not the files
    written before it: they keep `int`. An UPDATE then gives one of their rows a value only the
    wider type holds, rewriting the file or marking the row in it with a deletion vector. A table
    that may widen types has its files' columns described from their footers, not taken from their
    statistics, and each is read cast to the table's type. The log read equals the feed's."""
    bench = StreamBench(
        tmp_path,
        {"widened_feed": audit("fed"), "widened_log": audit("plain", f"stream_read='delta_log', {KEYED}")},
        sources=("fed", "plain"),
    )
    widened, read = run_from_schema_change(
        bench,
        {"delta.enableTypeWidening": "true", "delta.enableDeletionVectors": str(deletion_vectors).lower()},
        "alter table {t} alter column age type bigint",
        ["update {t} set age = 5000000000 where id = 3", "insert into {t} values (11, 'n11', 7)"],
    )
    assert widened["operation"] == "CHANGE COLUMN", widened["operation"]
    version = int(widened["version"])
    expected = Counter(
        [
            (3, "n3", 1, "UPDATE_BEFORE", version + 1),
            (3, "n3", 5000000000, "UPDATE_AFTER", version + 1),
            (11, "n11", 7, "INSERT", version + 2),
        ]
    )
    assert bench.target_rows("widened_feed") == expected
    assert bench.target_rows("widened_log") == expected
    # The file written as int is described from its footer; the files written after the widening are too.
    assert read.described and read.described <= read.by_path, (sorted(read.described), sorted(read.by_path))


class ReadFiles:
    """The data files a dbt run read by their path, the ones whose footer it described, whether it
    read any through time travel, and the statements it sent (`record`, a callback)."""

    def __init__(self) -> None:
        self.by_path: set[str] = set()
        self.described: set[str] = set()
        self.travelled = False
        self.statements: list[str] = []

    def record(self, event: Any) -> None:
        if event.info.name != "SQLQuery":
            return
        sql = str(event.data.sql)
        self.statements.append(sql)
        relations = re.findall(r"parquet\.`([^`]*)`", sql)
        if "describe query select * from parquet." in sql:
            self.described.update(relation.rsplit("/", 1)[-1] for relation in relations)
            return
        for relation in relations:
            self.by_path.update(relation.rsplit("/", 1)[-1].strip("{}").split(","))
        self.travelled = self.travelled or " version as of " in sql


@pytest.mark.extended
def test_a_restore_is_read_a_commit_that_changed_columns_and_files_is_refused_a_vacuumed_window_is_stale(
    tmp_path: Path,
) -> None:
    bench = StreamBench(tmp_path, {"mirror_log": mirror("plain", "delta_log")}, sources=("fed", "plain"))
    twins = Twins(bench)
    plain = twins.tables["plain"]
    spark = shared_spark()
    spark.sql(f"insert into {plain} values (1, 'a', 1), (2, 'b', 2)")
    inserted = int(spark.sql(f"describe history {plain} limit 1").collect()[0]["version"])
    bench.run()
    # A RESTORE commits the metadata it puts back with its files: the same columns, so it is read.
    spark.sql(f"update {plain} set name = 'A' where id = 1")
    spark.sql(f"restore table {plain} to version as of {inserted}")
    bench.run("-s", "mirror_log")
    assert bench.target_rows("mirror_log") == Counter([(1, "a", 1), (2, "b", 2)])
    spark.sql(f"update {plain} set name = 'A' where id = 1")
    # A MERGE that adds a column (schema evolution) changes the metadata and rewrites a file at once.
    spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "true")
    try:
        spark.sql(
            f"merge into {plain} as target using (select 2 as id, 'B' as name, 2 as age, 7 as extra) as source"
            " on target.id = source.id when matched then update set * when not matched then insert *"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.schema.autoMerge.enabled")
    merged = int(spark.sql(f"describe history {plain} limit 1").collect()[0]["version"])
    bench.refused(
        "mirror_log",
        f"Stream mirror_log__app_plain: version {merged} of app.plain (MERGE)",
        "changed the table's columns",
        "Nothing was written",
        f"leave version {merged} out of the read: reset the stream with `dbt run --full-refresh -s mirror_log`",
    )
    # A VACUUM that kept nothing took the files the window's update removed.
    bench.run("-s", "mirror_log", "--full-refresh")
    spark.sql(f"update {plain} set name = 'AA' where id = 1")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql(f"vacuum {plain} retain 0 hours")
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")
    bench.refused("mirror_log", "is stale", "VACUUM", "--full-refresh")


@pytest.mark.extended
def test_a_change_query_reads_the_delta_log_as_a_stream_does(tmp_path: Path) -> None:
    """`changes()` in a model with `stream_read: delta_log` reads a table without the feed from its
    log: the rows `changes()` gives on its twin with the feed, updates paired by the model's
    `unique_key`. With `on_feed_off: delta_log` it reads a range the feed recorded only in part.
    Without either, the table without the feed is refused, naming the log read; a log read across
    an ADD COLUMNS is refused, and a range from it on is read; a commit that changed the columns
    and rewrote files is refused with a range that leaves it out."""
    models = {
        "audit_feed": audit("fed"),
        "audit_log": audit("plain", f"stream_read='delta_log', {KEYED}"),
        "audit_plain": audit("plain"),
        "audit_mixed": audit("fed", f"on_feed_off='delta_log', {KEYED}"),
    }
    bench = StreamBench(tmp_path, models, sources=("fed", "plain"))
    twins = Twins(bench)
    twins.sql("insert into {t} values (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)")  # version 1
    twins.sql("update {t} set name = 'A' where id = 1")  # 2
    twins.sql("delete from {t} where id = 2")  # 3
    twins.sql(
        "merge into {t} as target using (select * from values (3, 'C', 3), (4, 'd', 4) as s(id, name, age)) as source"
        " on target.id = source.id when matched then update set * when not matched then insert *"
    )  # 4
    from_1 = ("--vars", "{from: 1}")
    bench.run("-s", "audit_feed", "audit_log", *from_1)
    expected = Counter(
        [
            *[(1, "a", 1, "INSERT", 1), (2, "b", 2, "INSERT", 1), (3, "c", 3, "INSERT", 1)],
            *[(1, "a", 1, "UPDATE_BEFORE", 2), (1, "A", 1, "UPDATE_AFTER", 2), (2, "b", 2, "DELETE", 3)],
            *[(3, "c", 3, "UPDATE_BEFORE", 4), (3, "C", 3, "UPDATE_AFTER", 4), (4, "d", 4, "INSERT", 4)],
        ]
    )
    assert bench.target_rows("audit_feed") == expected
    assert bench.target_rows("audit_log") == expected
    bench.refused(
        "audit_plain", "change data feed is not enabled on the source app.plain", "stream_read: delta_log", args=from_1
    )

    # The feed off for one update of the fed twin: refused by default, read with on_feed_off.
    fed = twins.tables["fed"]
    spark = shared_spark()
    spark.sql(f"alter table {fed} set tblproperties ('delta.enableChangeDataFeed' = 'false')")
    twins.sql("update {t} set age = 40 where id = 4")
    spark.sql(f"alter table {fed} set tblproperties ('delta.enableChangeDataFeed' = 'true')")
    twins.sql("delete from {t} where id = 1")
    bench.refused("audit_feed", "was not enabled at version 6", "on_feed_off: delta_log", args=from_1)
    bench.run("-s", "audit_mixed", "audit_log", *from_1)
    late = Counter([(4, "d", 4, "UPDATE_BEFORE"), (4, "d", 40, "UPDATE_AFTER"), (1, "A", 1, "DELETE")])
    without_versions = Counter(row[:4] for row in expected.elements()) + late
    assert Counter(row[:4] for row in bench.target_rows("audit_mixed").elements()) == without_versions
    assert Counter(row[:4] for row in bench.target_rows("audit_log").elements()) == without_versions

    # A log read takes each version's files with that version's columns: not across an ADD COLUMNS.
    twins.sql("alter table {t} add columns (note string)")
    added = int(spark.sql(f"describe history {twins.tables['plain']} limit 1").collect()[0]["version"])
    twins.sql("insert into {t} values (5, 'e', 5, 'new')")
    bench.refused(
        "audit_log", f"spans the schema change ADD COLUMNS at version {added} of app.plain", "Delta log", args=from_1
    )
    bench.run("-s", "audit_log", "--vars", f"{{from: {added}}}")
    assert bench.target_rows("audit_log") == Counter([(5, "e", 5, "INSERT", added + 1)])

    # A MERGE that adds a column changes the columns and rewrites a file in one commit: a change
    # query has no stream to reset, so its refusal advises a range without the version it names.
    plain = twins.tables["plain"]
    spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "true")
    try:
        spark.sql(
            f"merge into {plain} as target using (select 5 as id, 'E' as name, 5 as age, 'n' as note, 7 as extra) as source"
            " on target.id = source.id when matched then update set * when not matched then insert *"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.schema.autoMerge.enabled")
    merged = added + 2
    bench.refused(
        "audit_log",
        f"dbt_tablestream.changes(app.plain, {added}, latest): version {merged} of app.plain (MERGE) changed the table's columns",
        f"or leave version {merged} out of the read: read a range whose versions the source still keeps",
        args=("--vars", f"{{from: {added}}}"),
    )
