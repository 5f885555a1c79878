"""The row positions a Delta deletion vector marks, read from its own bytes on the local profile
(the adapter's `deletion_vector_positions`), so that a commit which changed a file's vector is
read as the file's rows at the positions that changed (docs/architecture.md, "Three ways to read
changes").

Delta's format (delta-spark's DeletionVectorStore and RoaringBitmapArray): the log's descriptor
says where the bytes are. Storage type `u`: in `deletion_vector_<uuid>.bin` under the table, the
uuid Z85-encoded in the last 20 characters of `pathOrInlineDv` after an optional directory
prefix; at `offset` a 4-byte big-endian size, the bytes, and their CRC-32, big-endian. Storage
type `i`: the bytes themselves, Z85-encoded. The bytes are a 4-byte magic number and a
RoaringBitmapArray in the portable format, little-endian: a 64-bit count of bitmaps, then each
one's 32-bit key (the positions' upper half) and a Roaring bitmap as the RoaringFormatSpec lays it
out, which pyroaring reads.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pyroaring import BitMap

MAGIC_NUMBER = 1681511377
Z85_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_VALUES = {character: value for value, character in enumerate(Z85_ALPHABET)}


def z85_decoded(text: str) -> bytes:
    """Z85 (the ZeroMQ base-85 alphabet: 5 characters for each 4 bytes, big-endian) decoded."""
    if len(text) % 5:
        raise ValueError(f"Z85 text must be a multiple of 5 characters long, not {len(text)}")
    blocks = []
    for start in range(0, len(text), 5):
        value = 0
        for character in text[start : start + 5]:
            value = value * 85 + _Z85_VALUES[character]
        blocks.append(value.to_bytes(4, "big"))
    return b"".join(blocks)


def vector_file(descriptor: Mapping[str, Any]) -> str | None:
    """The file that holds a vector stored beside the data (`u`), relative to the table's
    location; none for any other storage."""
    encoded = str(descriptor.get("pathOrInlineDv") or "")
    if descriptor.get("storageType") != "u" or len(encoded) < 20:
        return None
    prefix, digits = encoded[:-20], z85_decoded(encoded[-20:]).hex()
    uuid = "-".join((digits[0:8], digits[8:12], digits[12:16], digits[16:20], digits[20:32]))
    return f"{prefix}/deletion_vector_{uuid}.bin" if prefix else f"deletion_vector_{uuid}.bin"


def serialized_positions(serialized: bytes) -> list[int] | None:
    """The positions a serialized vector (from its magic number on) marks, in order; none where the
    bytes are not the portable RoaringBitmapArray, or hold anything after it."""
    if len(serialized) < 12 or struct.unpack_from("<I", serialized, 0)[0] != MAGIC_NUMBER:
        return None
    (count,) = struct.unpack_from("<Q", serialized, 4)
    cursor = 12
    positions: list[int] = []
    for _ in range(count):
        if cursor + 4 > len(serialized):
            return None
        (key,) = struct.unpack_from("<I", serialized, cursor)
        try:
            bitmap = BitMap.deserialize(serialized[cursor + 4 :])
        except ValueError:
            return None
        # A portable bitmap serializes to the bytes it was read from, so their length is where
        # the next one starts.
        cursor += 4 + len(bitmap.serialize())
        high = key << 32
        positions.extend(high + position for position in bitmap)
    return positions if cursor == len(serialized) else None


def stored_bytes(table_directory: Path, descriptor: Mapping[str, Any]) -> bytes | None:
    """A stored vector's bytes, checked against the size and checksum written beside them; none
    when its file is not there or they do not match."""
    relative = vector_file(descriptor)
    if relative is None:
        return None
    size = int(descriptor["sizeInBytes"])
    try:
        with open(table_directory / relative, "rb") as stored:
            stored.seek(int(descriptor.get("offset") or 0))
            framed = stored.read(size + 8)
    except OSError:
        return None
    if len(framed) != size + 8:
        return None
    (written_size,), data, (checksum,) = struct.unpack(">I", framed[:4]), framed[4:-4], struct.unpack(">I", framed[-4:])
    if written_size != size or zlib.crc32(data) != checksum:
        return None
    return data


def local_directory(location: str) -> Path | None:
    """The folder of a table whose location is on this machine's file system; none for any other."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file") and parsed.netloc in ("", "localhost"):
        return Path(unquote(parsed.path))
    return None


def vector_positions(location: str, descriptors: Sequence[Mapping[str, Any] | None]) -> list[list[int]] | None:
    """The positions each descriptor's vector marks ([] for none), in order, when every one can be
    read: inline or stored under `location` on this machine, in the portable format, its checksum
    and its count of marked rows as the log says. Else none, and the caller reads those files by
    time travel, where Delta applies the vectors."""
    directory = local_directory(location)
    decoded: list[list[int]] = []
    # A file whose vector several commits of a window changed names each vector twice: as one
    # commit's new vector and the next one's old. Each is read and decoded once.
    known: dict[tuple[Any, ...], list[int]] = {}
    for descriptor in descriptors:
        if not descriptor:
            decoded.append([])
            continue
        identity = tuple(descriptor.get(key) for key in ("storageType", "pathOrInlineDv", "offset", "sizeInBytes"))
        if identity not in known:
            try:
                positions = _positions(directory, descriptor)
            except (KeyError, ValueError):
                return None
            if positions is None or len(positions) != int(descriptor["cardinality"]):
                return None
            known[identity] = positions
        decoded.append(known[identity])
    return decoded


def _positions(directory: Path | None, descriptor: Mapping[str, Any]) -> list[int] | None:
    if descriptor.get("storageType") == "i":
        serialized = z85_decoded(str(descriptor["pathOrInlineDv"]))[: int(descriptor["sizeInBytes"])]
    elif directory is not None:
        stored = stored_bytes(directory, descriptor)
        if stored is None:
            return None
        serialized = stored
    else:
        return None
    return serialized_positions(serialized)
