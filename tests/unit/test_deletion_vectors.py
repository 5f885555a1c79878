"""Deletion vectors decoded from their bytes (dbt_tablestream/_deletion_vectors.py), against
vectors serialized here as the format lays them out: a magic number and a RoaringBitmapArray in the
portable format, each 32-bit bitmap as the RoaringFormatSpec lays it out. Hypothesis draws the
positions and, per container, whether it is stored as runs, so every container kind, both cookies
and several 32-bit bitmaps (positions past 2**32, which no test table reaches) are read. Vectors
that delta-spark wrote are read in tests/functional/test_deletion_vector_bytes.py."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dbt_tablestream._deletion_vectors import (
    MAGIC_NUMBER,
    Z85_ALPHABET,
    serialized_positions,
    vector_file,
    vector_positions,
    z85_decoded,
)


def runs_of(values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for value in values:
        if runs and runs[-1][0] + runs[-1][1] + 1 == value:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((value, 0))
    return runs


def roaring(values: list[int], as_runs: list[bool]) -> bytes:
    """One 32-bit Roaring bitmap of sorted ``values``; container i is stored as runs where
    ``as_runs[i]`` holds, else as an array (at most 4,096 values) or a bitmap."""
    chunks: dict[int, list[int]] = {}
    for value in values:
        chunks.setdefault(value >> 16, []).append(value & 0xFFFF)
    keys = sorted(chunks)
    run_flags = [as_runs[index % len(as_runs)] if as_runs else False for index in range(len(keys))]
    bodies = []
    for key, is_run in zip(keys, run_flags, strict=True):
        low = chunks[key]
        if is_run:
            runs = runs_of(low)
            bodies.append(struct.pack("<H", len(runs)) + b"".join(struct.pack("<HH", *run) for run in runs))
        elif len(low) <= 4096:
            bodies.append(b"".join(struct.pack("<H", value) for value in low))
        else:
            words = [0] * 1024
            for value in low:
                words[value // 64] |= 1 << (value % 64)
            bodies.append(struct.pack("<1024Q", *words))
    header = b"".join(struct.pack("<HH", key, len(chunks[key]) - 1) for key in keys)
    if any(run_flags):
        flags = bytearray((len(keys) + 7) // 8)
        for index, is_run in enumerate(run_flags):
            flags[index // 8] |= is_run << (index % 8)
        start = struct.pack("<I", 12347 | ((len(keys) - 1) << 16)) + bytes(flags) + header
        with_offsets = len(keys) >= 4
    else:
        start = struct.pack("<II", 12346, len(keys)) + header
        with_offsets = True
    offsets = b""
    if with_offsets:
        position = len(start) + 4 * len(keys)
        for body in bodies:
            offsets += struct.pack("<I", position)
            position += len(body)
    return start + offsets + b"".join(bodies)


def serialized_vector(positions: list[int], as_runs: list[bool]) -> bytes:
    """What Delta stores: the magic number, the count of 32-bit bitmaps (every key up to the
    highest, empty ones included), then each key and its bitmap."""
    by_key: dict[int, list[int]] = {}
    for position in sorted(positions):
        by_key.setdefault(position >> 32, []).append(position & 0xFFFFFFFF)
    count = max(by_key) + 1 if by_key else 0
    out = struct.pack("<Iq", MAGIC_NUMBER, count)
    for key in range(count):
        out += struct.pack("<I", key) + roaring(by_key.get(key, []), as_runs)
    return out


def z85(data: bytes) -> str:
    text = ""
    for start in range(0, len(data), 4):
        value = int.from_bytes(data[start : start + 4], "big")
        text += "".join(Z85_ALPHABET[value // 85**power % 85] for power in (4, 3, 2, 1, 0))
    return text


# Positions within up to seven 16-bit containers, a dense block (a bitmap container unless stored as
# runs), and now and then one past 2**32 (a second bitmap of the array).
POSITIONS = st.builds(
    lambda scattered, block, far: sorted(set(scattered) | set(block) | set(far)),
    st.lists(st.integers(0, 400_000), max_size=60),
    st.one_of(st.just(range(0)), st.integers(0, 120_000).map(lambda start: range(start, start + 5_000, 1 + start % 2))),
    st.lists(st.integers(2**32, 2**32 + 70_000), max_size=3),
)


@settings(max_examples=25, deadline=None)
@given(positions=POSITIONS, as_runs=st.lists(st.booleans(), max_size=5))
# With run containers, the offset header is there from four containers on.
@example(positions=[1, 70_000, 140_000, 200_000], as_runs=[True, False])
@example(positions=[1, 70_000, 140_000], as_runs=[True])
def test_a_vector_decodes_to_the_positions_it_was_serialized_from(positions: list[int], as_runs: list[bool]) -> None:
    serialized = serialized_vector(positions, as_runs)
    assert serialized_positions(serialized) == positions
    inline = {"storageType": "i", "pathOrInlineDv": z85(serialized + bytes(-len(serialized) % 4))}
    descriptor = {**inline, "sizeInBytes": len(serialized), "cardinality": len(positions)}
    assert vector_positions("file:/nowhere", [descriptor]) == [positions]


def test_bytes_that_are_not_the_portable_format_decode_to_nothing() -> None:
    native = struct.pack("<Ii", MAGIC_NUMBER - 1, 0)
    assert serialized_positions(native) is None
    unknown_cookie = struct.pack("<IqI", MAGIC_NUMBER, 1, 0) + struct.pack("<I", 12345)
    assert serialized_positions(unknown_cookie) is None
    assert serialized_positions(struct.pack("<Iq", MAGIC_NUMBER, 2)) is None


@given(data=st.binary(max_size=40).map(lambda raw: raw + bytes(-len(raw) % 4)))
@settings(max_examples=25, deadline=None)
def test_z85_decodes_what_it_encodes(data: bytes) -> None:
    assert z85_decoded(z85(data)) == data


@pytest.mark.parametrize("prefix", ["", "ab"])
def test_a_stored_vector_names_its_file_by_its_uuid_under_its_prefix(prefix: str) -> None:
    identity = uuid.UUID("5b1e2f3a-9c4d-4e8f-a1b2-c3d4e5f60718")
    vector: dict[str, Any] = {"storageType": "u", "pathOrInlineDv": prefix + z85(identity.bytes)}
    expected = (f"{prefix}/" if prefix else "") + f"deletion_vector_{identity}.bin"
    assert vector_file(vector) == expected
    assert vector_file({**vector, "storageType": "p"}) is None
