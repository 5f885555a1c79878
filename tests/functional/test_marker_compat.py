"""A target an earlier version of the package marked: its commits carry one stream's marker alone
(the single shape), where every commit now carries a group's (docs/architecture.md, "The stream
value"). The next run must continue from such a marker, and apply nothing twice."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from tests.functional.streams import StreamBench, stream_model


def test_a_target_marked_in_the_old_shape_continues_without_reapplying(tmp_path: Path) -> None:
    bench = StreamBench(tmp_path, {"log": stream_model("stream_mode='append_only'")})
    bench.create_source([(1, "a", 1)])
    bench.run()
    assert [(row["to_version"], row["epoch"]) for row in bench.offsets()] == [(0, 0)]

    # An earlier version's run of the window (0, 2]: its target commit, with the marker in the
    # single shape and the stream's SetTransaction, and then a crash before its offsets row.
    bench.append([(2, "b", 2)])
    bench.append([(3, "c", 3)])
    target = DeltaTable(str(bench.target_path("log")))
    schema = pa.schema(target.schema().to_arrow())
    committed = datetime.now(timezone.utc).replace(tzinfo=None)
    window_rows = pa.Table.from_pylist(
        [
            {
                "id": 2,
                "name": "b",
                "age": 2,
                "__change_type": "INSERT",
                "__commit_version": 1,
                "__commit_timestamp": committed,
            },
            {
                "id": 3,
                "name": "c",
                "age": 3,
                "__change_type": "INSERT",
                "__commit_version": 2,
                "__commit_timestamp": committed,
            },
        ],
        schema=schema,
    )
    source_table_id = DeltaTable(bench.source_path()).metadata().id
    old_marker = {
        "tablestream.stream": "log__app_t",
        "tablestream.stream_id": "tablestream/log__app_t/0",
        "tablestream.epoch": 0,
        "tablestream.from": 0,
        "tablestream.to": 2,
        "tablestream.source": "app.t",
        "tablestream.source_table_id": source_table_id,
        "tablestream.invocation_id": "an-earlier-version",
    }
    write_deltalake(
        target,
        window_rows,
        mode="append",
        commit_properties=CommitProperties(
            custom_metadata={"userMetadata": json.dumps(old_marker)},
            app_transactions=[Transaction("tablestream/log__app_t/0", 2)],
        ),
    )
    assert [(row["to_version"], row["epoch"]) for row in bench.offsets()] == [(0, 0)], "the offset is behind"

    bench.append([(4, "d", 4)])
    bench.run()
    expected = Counter((key, name, key, "INSERT") for key, name in ((1, "a"), (2, "b"), (3, "c"), (4, "d")))
    assert bench.target_rows("log") == expected, "the window (0, 2] was applied once, by the old version's commit"
    logged = bench.offsets()[-1]
    assert (logged["from_version"], logged["to_version"], logged["epoch"]) == (2, 3, 0)

    # This version's commit carries the group shape, whose one input continues the same stream id.
    metadata = json.loads(DeltaTable(str(bench.target_path("log"))).history(1)[0]["userMetadata"])
    assert metadata["tablestream.stream_id"] == "tablestream/log__app_t/0"
    assert [
        (m["tablestream.stream"], m["tablestream.from"], m["tablestream.to"]) for m in metadata["tablestream.inputs"]
    ] == [("log__app_t", 2, 3)]
