"""What only a cluster shows: dbt clients that run one stream at once, and a client that dies while
its write is still on the server. Each dbt run is a process of its own on the Thrift profile.

- Two `dbt run`s of one stream_merge held at a barrier until both pinned the window, then both
  writing it: one applies the window; the other is a no-op, or fails and is explained as "being
  consumed" (Delta lets one of two commits carrying the stream's marker through); never both.
- A run that pinned the window first and writes after the other committed it: a no-op.
- A client killed while its MERGE is on the server: when the server still commits it, and when
  the server cancels it with the dropped session. The next run applies nothing twice and loses
  nothing.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.cluster.local_cluster import LocalCluster
from tests.cluster.thrift_project import project, source_with_rows, start_dbt, wait_for_line
from tests.functional.dbt_project_helper import DbtProject
from tests.functional.local import release_pause

pytestmark = pytest.mark.extended

# Every window merged (merge_write merge): the killed client dies under its MERGE, which the
# server is watched for; under auto this one-file target would be rewritten from itself.
MIRROR = (
    "{{ config(materialized='stream_merge', unique_key='id', merge_write='merge') }}\n"
    "select id, name, __change_type, __commit_version from {{ dbt_tablestream.source_stream('app', 't') }}"
)
# The same mirror, each change row held `sleep_ms` on the executor: a MERGE that stays on the server
# long enough for its client to die under it.
SLOW_MIRROR = MIRROR + (
    "\nwhere java_method('java.lang.Thread', 'sleep', cast({{ var('sleep_ms', 0) }} as bigint)) is not null"
)
NO_OP = "was already applied by a concurrent run; no-op"
BEING_CONSUMED = "is being consumed by another run"
HISTORY_USER_METADATA = 13  # DESCRIBE HISTORY's userMetadata column
# How long a racing run may hold its pinned window before it goes on alone: the test releases both
# as soon as both have pinned it (a dbt process starts in about 15 s here).
RACE_PAUSE = 300


class Mirror:
    """A stream_merge `current` of the source `t`, on the cluster."""

    def __init__(self, tmp_path: Path, cluster: LocalCluster, model: str = MIRROR) -> None:
        self.cluster = cluster
        self.schema = source_with_rows(cluster, "(1, 'a'), (2, 'b'), (3, 'c')")
        self.dbt: DbtProject = project(tmp_path, cluster, self.schema, {"current": model})
        self.dbt.run_ok("run")

    def change_source(self, round: int) -> int:
        """Inserts, updates and deletes in three commits; returns the source's latest version."""
        self.cluster.sql(f"insert into {self.schema}_app.t values ({10 + round}, 'n{round}')")
        self.cluster.sql(f"update {self.schema}_app.t set name = concat(name, '+') where id = 1")
        self.cluster.sql(f"delete from {self.schema}_app.t where id = {9 + round}")
        return int(self.cluster.sql(f"describe history {self.schema}_app.t limit 1")[0][0])

    def window_commits(self, through: int) -> list[str]:
        """The invocations whose commit of the target carries the marker of the window ending at `through`."""
        invocations = []
        for row in self.cluster.sql(f"describe history {self.schema}.current"):
            marker = json.loads(str(row[HISTORY_USER_METADATA] or "null"))
            if isinstance(marker, dict) and marker.get("tablestream.to") == through:
                invocations.append(marker["tablestream.invocation_id"])
        return invocations

    def offsets_through(self, through: int) -> list[str]:
        return [
            str(row[0])
            for row in self.cluster.sql(
                f"select invocation_id from {self.schema}.tablestream_offsets where to_version = {through}"
            )
        ]

    def assert_mirrors_the_source(self) -> None:
        assert sorted(self.cluster.sql(f"select id, name from {self.schema}.current")) == sorted(
            self.cluster.sql(f"select id, name from {self.schema}_app.t")
        )


def test_two_runs_that_pinned_one_window_race_and_apply_it_once(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    """Both runs hold at the barrier (the window_pinned pause) until each has pinned the window,
    then both write it: one commits, the other is a no-op or is refused as being consumed."""
    mirror = Mirror(tmp_path, thrift_cluster)
    through = mirror.change_source(1)
    released = tmp_path / "released"
    released.mkdir()
    barrier = {"DBT_TABLESTREAM_PAUSE": f"window_pinned:{RACE_PAUSE}", "DBT_TABLESTREAM_RELEASE": str(released)}
    runs = [start_dbt(mirror.dbt, env=barrier), start_dbt(mirror.dbt, env=barrier)]
    # Both pinned the window before either is let go to write it.
    read = [wait_for_line(run, "tablestream test pause at window_pinned") for run in runs]
    release_pause(released, "current")
    outputs = ["".join(lines) + run.communicate(timeout=600)[0] for lines, run in zip(read, runs, strict=True)]
    applied = mirror.window_commits(through)
    assert len(applied) == 1, f"the window was committed by {applied}"
    assert mirror.offsets_through(through) == applied, f"the offsets log moved for {applied}"
    winners = [index for index, output in enumerate(outputs) if f"offset now {through}" in output]
    assert len(winners) == 1, f"exits {[run.returncode for run in runs]}:\n" + "\n".join(outputs)
    loser, output = runs[1 - winners[0]], outputs[1 - winners[0]]
    if loser.returncode == 0:
        assert NO_OP in output, output
    else:
        assert BEING_CONSUMED in output and "Nothing was written by this run" in output, output
    mirror.assert_mirrors_the_source()


def test_a_run_that_pinned_the_window_first_and_writes_second_is_a_no_op(
    tmp_path: Path, thrift_cluster: LocalCluster
) -> None:
    mirror = Mirror(tmp_path, thrift_cluster)
    through = mirror.change_source(1)
    released = tmp_path / "released"
    released.mkdir()
    held = {"DBT_TABLESTREAM_PAUSE": f"window_pinned:{RACE_PAUSE}", "DBT_TABLESTREAM_RELEASE": str(released)}
    late = start_dbt(mirror.dbt, env=held)
    wait_for_line(late, "tablestream test pause at window_pinned")
    mirror.dbt.run_ok("run")
    winner = mirror.window_commits(through)
    release_pause(released, "current")
    output = late.communicate(timeout=600)[0]
    assert late.returncode == 0, output
    assert NO_OP in output, output
    assert mirror.window_commits(through) == winner and len(winner) == 1
    assert mirror.offsets_through(through) == winner
    mirror.assert_mirrors_the_source()


@pytest.mark.parametrize("server", ["commits", "cancels"])
def test_a_client_killed_during_its_merge_applies_nothing_twice(
    tmp_path: Path, thrift_cluster: LocalCluster, server: str
) -> None:
    mirror = Mirror(tmp_path, thrift_cluster, SLOW_MIRROR)
    through = mirror.change_source(1)
    client = start_dbt(
        mirror.dbt, "run", "--vars", "{sleep_ms: 5000}", env={"DBT_TABLESTREAM_PAUSE": "before_target_commit:0.1"}
    )
    wait_for_line(client, "tablestream test pause at before_target_commit")
    # The MERGE is running on the server, its change rows held 5 s each.
    merge = thrift_cluster.wait_for_statement(f"merge into {mirror.schema}.current")
    thrift_cluster.wait_for_log(f"Running query with {merge}")
    if server == "commits":
        # A stopped client keeps its session open: the server finishes the MERGE, then the client dies
        # without having read the result, so the offsets log was never appended.
        os.kill(client.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 180
        while not mirror.window_commits(through) and time.monotonic() < deadline:
            time.sleep(2)
        assert len(mirror.window_commits(through)) == 1, "the server did not commit the stopped client's MERGE"
    os.kill(client.pid, signal.SIGKILL)
    client.wait()
    if server == "cancels":
        # The dropped session cancels the MERGE on the server, whose run then ends in an exception
        # it ignores: nothing of the window was committed.
        thrift_cluster.wait_for_log(f"Ignore exception in terminal state with {merge}")
        assert mirror.window_commits(through) == []
    assert mirror.offsets_through(through) == []

    mirror.dbt.run_ok("run")
    mirror.assert_mirrors_the_source()
    assert len(mirror.window_commits(through)) == 1  # applied once, by the killed run or by the next
    mirror.change_source(2)
    mirror.dbt.run_ok("run")
    mirror.assert_mirrors_the_source()
