"""The shared session starts before any test's dbt could start it with its own profile's settings
(the first dbt invocation in a process starts the JVM), so every functional test runs on the JVM
the tests' settings describe (tests/functional/local.py)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def shared_session_first(spark: Any) -> Any:
    return spark
