"""Delta's SQL extensions that Spark's own parser does not know, checked against Delta's grammar.

Transcribed from delta-io/delta `DeltaSqlBase.g4`:

    | (DESC | DESCRIBE) DETAIL (path=STRING | table=qualifiedName)                  #describeDeltaDetail
    | (DESC | DESCRIBE) HISTORY (path=STRING | table=qualifiedName)
        (LIMIT limit=INTEGER_VALUE)?                                                #describeDeltaHistory

Spark's parser would read `DESCRIBE HISTORY t` as a DESCRIBE of a table named `history`, so
these statements must not be sent to it. The table name is a qualifiedName, which Spark's
parser checks (`parseMultipartIdentifier`).
"""

from __future__ import annotations

import re
from typing import Any

_DELTA_STATEMENT = re.compile(r"^\s*(desc|describe)\s+(history|detail)\b", re.IGNORECASE)
_DESCRIBE = re.compile(
    r"^\s*(?:desc|describe)\s+(?P<kind>history|detail)\s+(?P<target>'[^']*'|\"[^\"]*\"|[^\s'\"]+)"
    r"(?:\s+limit\s+(?P<limit>\S+))?\s*$",
    re.IGNORECASE,
)


def is_delta_statement(sql: str) -> bool:
    return bool(_DELTA_STATEMENT.match(sql))


def check_delta_statement(sql: str, parser: Any) -> None:
    """Raise ValueError unless ``sql`` is a statement of Delta's grammar above."""
    match = _DESCRIBE.match(sql)
    if not match:
        raise ValueError(f"not a Delta DESCRIBE HISTORY / DETAIL statement: {sql!r}")
    limit = match.group("limit")
    if limit is not None:
        if match.group("kind").lower() != "history":
            raise ValueError(f"DESCRIBE DETAIL takes no LIMIT: {sql!r}")
        if not limit.isdigit():
            raise ValueError(f"LIMIT takes an integer: {sql!r}")
    target = match.group("target")
    if target[0] not in "'\"":
        parser.parseMultipartIdentifier(target)
