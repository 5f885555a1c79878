"""A `dbt run` SIGKILLed at every step of the commit protocol (window_pinned, before_target_commit,
after_target_commit, after_offsets_append), in each kind of stream model: a stream_merge (written
by MERGE, merge_write merge, and by replacing the window's keys, merge_write replace_where), a
table_stream, a stream_aggregate, a stream_merge over several streams (a UNION of two sources,
merge_write auto: its small target is rewritten from itself), and a stream_view (a left join of two
sources).

The six models are independent and run in parallel threads, and the fault names them all
(``DBT_TABLESTREAM_FAULT=<step>@current+replaced+log+totals+shards``): each waits at the step until the others have
reached it, then the process dies, so one crash process leaves every kind of model at that step.
After it, each target is as it was (the step is before the target commit) or has the window
(after it), and the offsets log has the window only after its append. More changes land, an
in-process run recovers them all, and every target is checked against its oracle: the mirror and
the union equal their sources, the totals their GROUP BY, and the log holds every change exactly
once. Each test crashes at
the four steps in turn, recovering after each, and before them the first build (the offsets log's
creation) and after them a --full-refresh (a new epoch), each at a step drawn from the run's seed:
once with the marked protocol, once on an emulated SQL warehouse (the reapply protocol).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from tests.functional.local import local_profile
from tests.functional.streams import StreamBench, assert_no_refused_setting
from tests.opt_in_slices import kill_steps_in_run
from tests.seeds import run_seed

pytestmark = pytest.mark.extended

# Independent models: with a thread each they run side by side and all reach the fault's step.
MODELS = {
    "current": (
        "{{ config(materialized='stream_merge', unique_key='id', merge_write='merge') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    # The same mirror written by replacing the window's keys (stream_replace_where_sql).
    "replaced": (
        "{{ config(materialized='stream_merge', unique_key='id', merge_write='replace_where') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    "log": (
        "{{ config(materialized='table_stream') }}\n"
        "select id, name, age, __change_type from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    # Totals per parity of the key (docs/stream-aggregate.md); each round's update and delete move
    # a group's extremes.
    "totals": (
        "{{ config(materialized='stream_aggregate', group_by='parity',"
        " aggregates={'n': 'count(*)', 'total': 'sum(age)', 'low': 'min(age)', 'high': 'max(age)'}) }}\n"
        "select id % 2 as parity, age, __change_type from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
    # A target of one file, whose every window touches half its files or more: rewritten from
    # itself (stream_rewrite_sql).
    "shards": (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 'a') }}\n"
        "union all\n"
        "select * from {{ dbt_tablestream.source_stream('app', 'b') }}"
    ),
    # A view over two sources (docs/stream-view.md): t's rows with a's name for the same key, NULL
    # where a has none; each round's changes move rows between matched and NULL-extended.
    "joined": (
        "{{ config(materialized='stream_view', unique_key='id') }}\n"
        "select t.id, t.name, t.age, a.name as a_name\n"
        "from {{ source('app', 't') }} as t left join {{ source('app', 'a') }} as a on t.id = a.id"
    ),
}
# On a SQL warehouse a table_stream keeps __commit_version, by which a window applied again is
# recognised (docs/architecture.md, "Exactly once without session settings").
WAREHOUSE_MODELS = {
    **MODELS,
    "log": MODELS["log"].replace("__change_type from", "__change_type, __commit_version from"),
}
STREAMS = {
    "current": ("current__app_t",),
    "replaced": ("replaced__app_t",),
    "log": ("log__app_t",),
    "totals": ("totals__app_t",),
    "shards": ("shards__app_a", "shards__app_b"),
    "joined": ("joined__app_a", "joined__app_t"),
}
COMMITTED_AT = ("after_target_commit", "after_offsets_append")
Row = tuple[Any, ...]


class Sources:
    """The sources under changes, and what each model should hold: the mirror and the union the
    sources' state, the log every change row once (its first run: the snapshot's rows as INSERTs)."""

    def __init__(self, bench: StreamBench, models: list[str]) -> None:
        self.bench = bench
        self.models = models
        self.rows: dict[str, dict[int, Row]] = {"t": {}, "a": {}, "b": {}}
        self.log: Counter[Row] = Counter()
        for name, keys in (("t", (1, 2, 3)), ("a", (1, 2)), ("b", (50, 51))):
            initial = [(key, f"{name}{key}", key) for key in keys]
            bench.create_source(initial, name=name)
            self.rows[name] = {row[0]: row for row in initial}
        self.log.update((*row, "INSERT") for row in self.rows["t"].values())

    def change(self, round: int) -> None:
        """An insert, an update and a delete in each source, in their own commits."""
        for name, base in (("t", 10), ("a", 10), ("b", 60)):
            key = base + round
            self.insert(name, (key, f"{name}{key}", round))
            first = min(self.rows[name])
            self.update(name, first, round)
            self.delete(name, max(other for other in self.rows[name] if other not in (key, first)))

    def insert(self, name: str, row: Row) -> None:
        self.bench.append([row], name=name)
        self.rows[name][row[0]] = row
        if name == "t":
            self.log[(*row, "INSERT")] += 1

    def update(self, name: str, key: int, round: int) -> None:
        old = self.rows[name][key]
        new = (key, f"{old[1]}+", old[2] + 100 + round)
        self.bench.source(name).update(updates={"name": f"'{new[1]}'", "age": str(new[2])}, predicate=f"id = {key}")
        self.rows[name][key] = new
        if name == "t":
            self.log.update([(*old, "UPDATE_BEFORE"), (*new, "UPDATE_AFTER")])

    def delete(self, name: str, key: int) -> None:
        old = self.rows[name].pop(key)
        self.bench.source(name).delete(f"id = {key}")
        if name == "t":
            self.log[(*old, "DELETE")] += 1

    def rebuilt(self) -> None:
        """A --full-refresh committed: the log starts again from the sources' rows, as INSERTs."""
        self.log = Counter((*row, "INSERT") for row in self.rows["t"].values())

    def expected(self, model: str) -> Counter[Row]:
        if model in ("current", "replaced"):
            return Counter(self.rows["t"].values())
        if model == "shards":
            return Counter(self.rows["a"].values()) + Counter(self.rows["b"].values())
        if model == "totals":
            groups: dict[int, list[int]] = {}
            for key, _, age in self.rows["t"].values():
                groups.setdefault(key % 2, []).append(age)
            return Counter((parity, len(ages), sum(ages), min(ages), max(ages)) for parity, ages in groups.items())
        if model == "joined":
            names = {key: row[1] for key, row in self.rows["a"].items()}
            return Counter((*row, names.get(row[0])) for row in self.rows["t"].values())
        return +self.log

    def target(self, model: str) -> Counter[Row]:
        rows = self.bench.target_rows(model)
        return Counter(row[: {"log": 4, "totals": 5, "joined": 4}.get(model, 3)] for row in rows.elements())


def assert_every_model_at_its_oracle(bench: StreamBench, sources: Sources) -> None:
    """The targets equal their oracles, every stream's offset is at its source's latest version,
    and no stream logged one window twice."""
    for model in sources.models:
        assert sources.target(model) == sources.expected(model), model
    for model, streams in STREAMS.items():
        if model not in sources.models:
            continue
        for stream in streams:
            rows = [row for row in bench.offsets() if row["stream_name"] == stream]
            source = stream.rsplit("_", 1)[1]
            assert rows[-1]["to_version"] == DeltaTable(bench.source_path(source)).version(), (model, stream)
            windows = [(row["from_version"], row["to_version"]) for row in rows if row["rows_written"]]
            assert len(windows) == len(set(windows)), f"{stream} applied a window twice: {windows}"


def offsets_rows(bench: StreamBench) -> Counter[str]:
    return Counter(row["stream_name"] for row in bench.offsets())


STEPS = ["window_pinned", "before_target_commit", "after_target_commit", "after_offsets_append"]


def crash_at(bench: StreamBench, sources: Sources, step: str, *args: str) -> None:
    """A `dbt run` (with ``args``) of every model in a process SIGKILLed once all of them reached
    ``step``: each target has the run's write exactly when the step is after its commit, and the
    offsets log has the run's rows only after its append."""
    before = {model: sources.target(model) for model in sources.models}
    logged = offsets_rows(bench)
    # A thread for each only in the crash process: in-process runs share the session one at a time.
    bench.crash(f"{step}@{'+'.join(sources.models)}", "run", "--threads", str(len(sources.models)), *args)
    committed = step in COMMITTED_AT
    if committed and "--full-refresh" in args:
        sources.rebuilt()
    for model in sources.models:
        # Changes landed before every crash, so a target without the run's write differs from its oracle.
        assert (sources.target(model) == sources.expected(model)) == committed, (step, model)
        if not committed:
            assert sources.target(model) == before[model], (step, model)
    appended = offsets_rows(bench) - logged
    streams = sorted(stream for model in sources.models for stream in STREAMS[model])
    assert sorted(appended) == (streams if step == "after_offsets_append" else []), (step, appended)


@pytest.mark.parametrize("sql_warehouse", [False, True], ids=["marked", "sql_warehouse"])
def test_a_kill_at_every_step_of_each_kind_of_model_loses_nothing_and_applies_nothing_twice(
    tmp_path: Path, sql_warehouse: bool
) -> None:
    """One crash per step of a window's run, in order, each recovered before the next; before them
    a crash of the first build, and after them one of a --full-refresh (a new epoch), each at a step
    drawn from the run's seed (tests/seeds.py); on an emulated SQL warehouse (the reapply protocol:
    no session setting) as on a cluster (the marked protocol). In a CI slice the window's run is
    killed at half the steps, the other half in the next CI run (tests/opt_in_slices.py)."""
    seed = run_seed() + (1 if sql_warehouse else 0)
    first_build_step, full_refresh_step = STEPS[seed % len(STEPS)], STEPS[seed // len(STEPS) % len(STEPS)]
    steps = kill_steps_in_run(STEPS)
    print(
        f"seed {run_seed()}: the first build is killed at {first_build_step}, the full refresh at {full_refresh_step}, "
        f"the window's run at {', '.join(steps)}"
    )
    warehouse = tmp_path / "warehouse"
    bench = StreamBench(
        tmp_path,
        WAREHOUSE_MODELS if sql_warehouse else MODELS,
        sources=("t", "a", "b"),
        processes=True,
        profile=local_profile(warehouse, emulate_sql_warehouse=True) if sql_warehouse else None,
    )
    sources = Sources(bench, list(WAREHOUSE_MODELS if sql_warehouse else MODELS))
    crash_at(bench, sources, first_build_step)
    bench.run()
    assert_every_model_at_its_oracle(bench, sources)
    for round, step in enumerate(steps):
        sources.change(2 * round + 1)
        crash_at(bench, sources, step)
        sources.change(2 * round + 2)
        bench.run()
        assert_every_model_at_its_oracle(bench, sources)
    sources.change(2 * len(steps) + 1)
    crash_at(bench, sources, full_refresh_step, "--full-refresh")
    sources.change(2 * len(steps) + 2)
    bench.run()
    assert_every_model_at_its_oracle(bench, sources)
    if sql_warehouse:
        assert_no_refused_setting(warehouse)
