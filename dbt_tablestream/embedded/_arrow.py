"""Arrow type normalisation between delta-rs, Spark and Delta's type system."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

UTC = "UTC"


def normalize_type(arrow_type: pa.DataType) -> pa.DataType:
    """Map Arrow types that Spark or Delta cannot take to the nearest type they can.

    delta-rs 1.x hands out view types (`string_view`) and millisecond timestamps from its
    change feed; Spark's Arrow conversion wants plain strings and microseconds, and Delta
    stores timestamps with a UTC zone or without one.
    """
    if pa.types.is_string_view(arrow_type) or pa.types.is_large_string(arrow_type):
        return pa.string()
    if pa.types.is_binary_view(arrow_type) or pa.types.is_large_binary(arrow_type):
        return pa.binary()
    if pa.types.is_timestamp(arrow_type):
        return pa.timestamp("us", tz=UTC if arrow_type.tz else None)
    if pa.types.is_unsigned_integer(arrow_type):
        return pa.int64()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_list_view(arrow_type):
        return pa.list_(normalize_field(arrow_type.value_field))
    if pa.types.is_struct(arrow_type):
        return pa.struct([normalize_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)])
    if pa.types.is_map(arrow_type):
        return pa.map_(normalize_type(arrow_type.key_type), normalize_field(arrow_type.item_field))
    return arrow_type


def normalize_field(field: pa.Field) -> pa.Field:
    return pa.field(field.name, normalize_type(field.type), nullable=True)


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([normalize_field(field) for field in schema])


def normalize_table(table: pa.Table) -> pa.Table:
    """Cast a table to :func:`normalize_schema` of its schema; a no-op when nothing changes."""
    target = normalize_schema(table.schema)
    if target.equals(table.schema, check_metadata=False):
        return table
    return table.cast(target)


def as_pyarrow_schema(schema: Any) -> pa.Schema:
    """delta-rs 1.x returns arro3 objects; pyarrow takes them through the Arrow C interface."""
    return pa.schema(schema)


def read_all(reader: Any) -> pa.Table:
    """Read an arro3 or pyarrow record batch stream into one normalised pyarrow table."""
    return normalize_table(pa.RecordBatchReader.from_stream(reader).read_all())
