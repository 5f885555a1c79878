"""Deletion vectors as delta-spark writes them, decoded by the local profile's
`deletion_vector_positions` (dbt_tablestream/_deletion_vectors.py): a DELETE, an UPDATE and a MERGE
on one file of 100,000 rows mark rows in array, run and bitmap containers of both of its 32-bit
Roaring bitmaps' 16-bit halves; after each commit the decoded positions are the row indexes of the
file's rows that Spark's time travel no longer reads. The same bytes inline in the descriptor
decode alike; a byte changed in the file, a count the log does not give, or a location not on this
machine decode to nothing, so the window reads those files by time travel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow
from deltalake import DeltaTable
from pyroaring import BitMap

from dbt_tablestream import _deletion_vectors
from dbt_tablestream._deletion_vectors import Z85_ALPHABET, serialized_positions, stored_bytes, vector_positions
from tests.functional.local import shared_spark

ROWS = 100_000
COMMITS = {
    "array": "delete from {t} where id in (3, 70000, 99999)",
    "run": "delete from {t} where id between 1000 and 1999",
    "bitmap": "delete from {t} where id % 3 = 0 and id < 60000",
    "update": "update {t} set v = 'updated' where id in (5, 80001) or id between 90000 and 90099",
    "merge": (
        "merge into {t} as target using (select id from range(66000, 66300, 7) as r(id)) as source "
        "on target.id = source.id when matched and source.id % 2 = 0 then delete "
        "when matched then update set v = 'merged'"
    ),
}


def z85(data: bytes) -> str:
    padded = data + b"\0" * (-len(data) % 4)
    encoded = []
    for start in range(0, len(padded), 4):
        value = int.from_bytes(padded[start : start + 4], "big")
        encoded.append("".join(Z85_ALPHABET[value // 85**power % 85] for power in range(4, -1, -1)))
    return "".join(encoded)


def file_vector(table: Path, version: int, name: str) -> dict[str, Any] | None:
    """The deletion vector descriptor the commit of `version` gave the file `name`."""
    for line in (table / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
        add = json.loads(line).get("add")
        if add and add["path"] == name:
            return add.get("deletionVector")
    raise AssertionError(f"version {version} did not add {name} again")


def container_kinds(serialized: bytes) -> set[str]:
    """The kinds of Roaring container a vector's one 32-bit bitmap holds (array, run, bitmap)."""
    statistics = BitMap.deserialize(serialized[16:]).get_statistics()
    # CRoaring calls a bitmap container a bitset.
    return {
        kind
        for kind, counted in (("array", "array"), ("run", "run"), ("bitmap", "bitset"))
        if statistics[f"n_{counted}_containers"]
    }


def test_vectors_delta_spark_wrote_decode_to_the_rows_its_time_travel_no_longer_reads(tmp_path: Path) -> None:
    spark = shared_spark()
    table = tmp_path / "dv"
    name = f"delta.`{table}`"
    spark.sql(
        f"create table {name} (id bigint, v string) using delta tblproperties ('delta.enableDeletionVectors' = 'true')"
    )
    spark.sql(f"insert into {name} select /*+ REPARTITION(1) */ id, 'v' from range({ROWS}) as r(id)")
    (file_name,) = [row[0] for row in spark.sql(f"select distinct _metadata.file_name from {name}").collect()]
    first = spark.sql(f"describe history {name}").first()[0]  # type: ignore[index]
    position_of = dict(
        spark.sql(f"select id, _metadata.row_index from {name} version as of {first}").collect()  # type: ignore[arg-type]
    )
    location = spark.sql(f"describe detail {name}").first()["location"]  # type: ignore[index]
    kinds: set[str] = set()
    for operation, statement in COMMITS.items():
        spark.sql(statement.format(t=name))
        version = first + list(COMMITS).index(operation) + 1
        descriptor = file_vector(table, version, file_name)
        assert descriptor and descriptor["storageType"] == "u", (operation, descriptor)
        still_read = {
            row[0]
            for row in spark.sql(
                f"select id from {name} version as of {version} where _metadata.file_name = '{file_name}'"
            ).collect()
        }
        expected = sorted(position_of[key] for key in set(position_of) - still_read)
        assert vector_positions(location, [descriptor]) == [expected], operation
        serialized = stored_bytes(table, descriptor)
        assert serialized is not None
        kinds |= container_kinds(serialized)
        # The same bytes inline in the log decode alike.
        inline = {**descriptor, "storageType": "i", "pathOrInlineDv": z85(serialized), "offset": None}
        assert vector_positions(location, [inline, None]) == [expected, []], operation
    assert kinds == {"array", "run", "bitmap"}, kinds

    # delta-rs reads the last vector alike: False in its keep-mask where the vector marks a row.
    masks = pyarrow.RecordBatchReader.from_stream(DeltaTable(str(table)).deletion_vectors()).read_all().to_pylist()
    (mask,) = [entry["selection_vector"] for entry in masks if entry["filepath"].endswith(file_name)]
    assert [index for index, keep in enumerate(mask) if not keep] == expected

    # What does not match what the log says decodes to nothing: a wrong count, a changed byte
    # (the checksum), a location off this machine, another format.
    assert vector_positions(location, [{**descriptor, "cardinality": descriptor["cardinality"] + 1}]) is None
    assert vector_positions("s3a://bucket/dv", [descriptor]) is None
    copy = tmp_path / "copy"
    shutil.copytree(table, copy)
    stored = copy / str(_deletion_vectors.vector_file(descriptor))
    data = bytearray(stored.read_bytes())
    data[int(descriptor.get("offset") or 0) + 20] ^= 1
    stored.write_bytes(bytes(data))
    assert stored_bytes(copy, descriptor) is None
    assert vector_positions(str(copy), [descriptor]) is None
    assert serialized_positions(b"\0" * 4 + serialized[4:]) is None
    assert serialized_positions(serialized + b"\0") is None
