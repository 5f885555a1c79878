"""How many statements each kind of stream run sends, on the local profile and on the emulated SQL
warehouse (the reapply protocol): a first build, a window of a few changed rows, an empty window
and a rebuild (`--full-refresh`), for a `table_stream` and a `stream_merge`, each in a `dbt run` of
its own. A run costs at least its statements (each pays planning, and on a fresh JVM its
warm-up), so a statement added to a run fails here, printing every statement of each run; one
saved is recorded by lowering its count. BEFORE keeps the counts at 152fcc4, before the work of
cutting a run's fixed cost began."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.functional.local import local_profile
from tests.functional.streams import StreamBench, stream_model

MODELS = {
    "changes": stream_model(),
    "current": (
        "{{ config(materialized='stream_merge', unique_key='id') }}\n"
        "select * from {{ dbt_tablestream.source_stream('app', 't') }}"
    ),
}
KINDS = ("first build", "a window", "an empty window", "a rebuild")

# Every statement a `dbt run -s <model>` sends, dbt's own (its relation cache, the on-run-start
# hook) included, by protocol, model and kind of run.
STATEMENTS: dict[str, dict[str, dict[str, int]]] = {
    "marked": {
        "changes": {"first build": 16, "a window": 20, "an empty window": 8, "a rebuild": 18},
        # A window of this one-file target is rewritten from itself (_stream_net_write_choice), which
        # reads the target's columns first (one DESCRIBE): 23 when it was merged.
        "current": {"first build": 20, "a window": 24, "an empty window": 8, "a rebuild": 22},
    },
    "reapply": {
        "changes": {"first build": 11, "a window": 14, "an empty window": 8, "a rebuild": 13},
        # The same DESCRIBE: 14 when it was merged.
        "current": {"first build": 12, "a window": 15, "an empty window": 8, "a rebuild": 14},
    },
}
# At 152fcc4, before the work of cutting a run's fixed cost began: the counts this test started from.
BEFORE: dict[str, dict[str, dict[str, int]]] = {
    "marked": {
        "changes": {"first build": 17, "a window": 24, "an empty window": 10, "a rebuild": 19},
        "current": {"first build": 21, "a window": 25, "an empty window": 11, "a rebuild": 23},
    },
    "reapply": {
        "changes": {"first build": 12, "a window": 18, "an empty window": 10, "a rebuild": 14},
        "current": {"first build": 13, "a window": 16, "an empty window": 11, "a rebuild": 15},
    },
}


def first_line(sql: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("--")]
    return (lines[0] if lines else sql.strip())[:110]


@pytest.mark.parametrize("protocol", sorted(STATEMENTS))
def test_each_kind_of_run_sends_the_statements_it_did(tmp_path: Path, protocol: str) -> None:
    profile = local_profile(tmp_path / "warehouse", emulate_sql_warehouse=True) if protocol == "reapply" else None
    bench = StreamBench(tmp_path, MODELS, profile=profile)
    bench.create_source([(key, f"n{key}", key) for key in range(1, 21)])
    sent: dict[str, dict[str, list[str]]] = {model: {} for model in MODELS}

    def run(kind: str, *args: str) -> None:
        for model in MODELS:
            statements = sent[model].setdefault(kind, [])

            def record(event: Any, statements: list[str] = statements) -> None:
                if event.info.name == "SQLQuery":
                    statements.append(str(event.data.sql))

            result = bench.invoke("run", "-s", model, *args, callbacks=[record])
            assert result.success, result.exception

    run("first build")
    bench.source().update(updates={"age": "age + 100"}, predicate="id in (3, 4)")
    bench.source().delete("id = 5")
    run("a window")
    run("an empty window")
    run("a rebuild", "--full-refresh")

    counts = {model: {kind: len(sent[model][kind]) for kind in KINDS} for model in MODELS}
    report = "\n".join(
        f"{protocol} {model}, {kind}: {len(sent[model][kind])} statements (at 152fcc4: {BEFORE[protocol][model][kind]})\n"
        + "\n".join(f"  {number}. {first_line(sql)}" for number, sql in enumerate(sent[model][kind], 1))
        for model in MODELS
        for kind in KINDS
    )
    print(report)
    assert counts == STATEMENTS[protocol], report
