"""The seed's type mapping: which Python values a column of each Delta type takes.

A value is checked (and normalised) when it is set on a row, so a wrong value fails at
``set_value`` with the column's name, never later inside a commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

Check = Callable[[Any], Any]

INTEGER_RANGES = {
    pa.int8(): ("INT8", -(2**7), 2**7 - 1),
    pa.int16(): ("INT16", -(2**15), 2**15 - 1),
    pa.int32(): ("INT32", -(2**31), 2**31 - 1),
    pa.int64(): ("INT64", -(2**63), 2**63 - 1),
}


class ValueRejected(ValueError):
    """A value a column cannot take; the message says what it takes instead."""


def sql_type(arrow_type: pa.DataType) -> str:
    """The Delta / Spark SQL name of an Arrow type, for messages."""
    if arrow_type in INTEGER_RANGES:
        return INTEGER_RANGES[arrow_type][0]
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMP" if arrow_type.tz else "TIMESTAMP_NTZ"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"ARRAY<{sql_type(arrow_type.value_type)}>"
    if pa.types.is_map(arrow_type):
        return f"MAP<{sql_type(arrow_type.key_type)},{sql_type(arrow_type.item_type)}>"
    if pa.types.is_struct(arrow_type):
        return "STRUCT<" + ",".join(f"{f.name}:{sql_type(f.type)}" for f in arrow_type) + ">"
    names = {
        pa.bool_(): "BOOLEAN",
        pa.string(): "STRING",
        pa.large_string(): "STRING",
        pa.string_view(): "STRING",
        pa.binary(): "BINARY",
        pa.large_binary(): "BINARY",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.date32(): "DATE",
    }
    return names.get(arrow_type, str(arrow_type).upper())


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def value_check(arrow_type: pa.DataType, nullable: bool = True) -> Check:
    """A function that returns ``value`` as the column stores it, or raises :class:`ValueRejected`."""
    check = _non_null_check(arrow_type)

    def checked(value: Any) -> Any:
        if value is None:
            if not nullable:
                raise ValueRejected(f"is NOT NULL ({sql_type(arrow_type)}) and cannot take None")
            return None
        return check(value)

    return checked


def _non_null_check(arrow_type: pa.DataType) -> Check:
    name = sql_type(arrow_type)

    def reject(value: Any, takes: str) -> ValueRejected:
        return ValueRejected(f"is {name} and takes {takes}; got {_describe(value)}")

    if pa.types.is_boolean(arrow_type):

        def boolean(value: Any) -> bool:
            if not isinstance(value, bool):
                raise reject(value, "a bool")
            return value

        return boolean
    if arrow_type in INTEGER_RANGES:
        _, low, high = INTEGER_RANGES[arrow_type]

        def integer(value: Any) -> int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise reject(value, "an int")
            if not low <= value <= high:
                raise ValueRejected(f"is {name} and takes ints from {low} to {high}; got {value}")
            return value

        return integer
    if pa.types.is_floating(arrow_type):

        def floating(value: Any) -> float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise reject(value, "a float (or an int)")
            return float(value)

        return floating
    if pa.types.is_decimal(arrow_type):
        scale, integer_digits = arrow_type.scale, arrow_type.precision - arrow_type.scale

        def decimal(value: Any) -> Decimal:
            if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
                raise reject(value, "a decimal.Decimal (or an int)")
            try:
                exact = Decimal(value).quantize(Decimal(1).scaleb(-scale))
            except InvalidOperation as error:
                raise reject(value, f"a Decimal with at most {integer_digits} digits before the point") from error
            if exact != Decimal(value):
                raise ValueRejected(f"is {name} and keeps {scale} decimal places; {value} would be rounded")
            if exact.adjusted() >= integer_digits:
                raise ValueRejected(
                    f"is {name} and takes at most {integer_digits} digits before the point; got {value}"
                )
            return exact

        return decimal
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_string_view(arrow_type):

        def string(value: Any) -> str:
            if not isinstance(value, str):
                raise reject(value, "a str")
            return value

        return string
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):

        def binary(value: Any) -> bytes:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise reject(value, "bytes")
            return bytes(value)

        return binary
    if pa.types.is_date(arrow_type):

        def day(value: Any) -> date:
            if isinstance(value, datetime) or not isinstance(value, date):
                raise reject(value, "a datetime.date")
            return value

        return day
    if pa.types.is_timestamp(arrow_type):
        aware = arrow_type.tz is not None

        def instant(value: Any) -> datetime:
            if not isinstance(value, datetime):
                raise reject(value, "a datetime")
            if aware and value.tzinfo is None:
                raise ValueRejected(f"is {name} (an instant) and takes a timezone-aware datetime; got a naive {value}")
            if not aware and value.tzinfo is not None:
                raise ValueRejected(f"is {name} (no time zone) and takes a naive datetime; got {value}")
            return value

        return instant
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        element = value_check(arrow_type.value_type, arrow_type.value_field.nullable)

        def array(value: Any) -> list[Any]:
            if not isinstance(value, (list, tuple)):
                raise reject(value, "a list")
            return [element(item) for item in value]

        return array
    if pa.types.is_map(arrow_type):
        key_check = value_check(arrow_type.key_type, False)
        item_check = value_check(arrow_type.item_type, arrow_type.item_field.nullable)

        def mapping(value: Any) -> list[tuple[Any, Any]]:
            if not isinstance(value, Mapping):
                raise reject(value, "a dict")
            return [(key_check(key), item_check(item)) for key, item in value.items()]

        return mapping
    if pa.types.is_struct(arrow_type):
        fields = {f.name: value_check(f.type, f.nullable) for f in arrow_type}

        def struct(value: Any) -> dict[str, Any]:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as error:
                    raise reject(value, "a dict, a namedtuple or a JSON object") from error
            elif hasattr(value, "_asdict"):
                value = value._asdict()
            if not isinstance(value, Mapping):
                raise reject(value, "a dict, a namedtuple or a JSON object")
            unknown = sorted(set(value) - set(fields))
            if unknown:
                raise ValueRejected(f"is {name} and has no field {', '.join(unknown)}")
            return {key: check(value.get(key)) for key, check in fields.items()}

        return struct
    raise ValueRejected(f"is {name}, which the realtime writer does not support")
