"""Shared fixtures: one local delta-spark session (the tablestream adapter's) for the whole run.

dbt runs in-process (dbtRunner, also through dbt-tests-adapter's `run_dbt`), so Spark and its
JVM start once and every test reuses them (tests/functional/local.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]

os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


# Variables that narrow or bypass what a run checks: fewer lanes or examples, a replayed seed, golden
# files rewritten instead of compared. Fine on a developer's machine; refused in CI.
NARROWING_VARIABLES = (
    "TABLESTREAM_UPDATE_GOLDEN",
    "TABLESTREAM_LANES",
    "TABLESTREAM_PROPERTY_EXAMPLES",
    "TABLESTREAM_SEED",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--opt-in-slice",
        type=int,
        default=None,
        metavar="N",
        help="of the selected tests marked soak, scenarios or changes_full, run only slice N (modulo "
        "the number of slices, balanced by their measured times), a soak with fewer examples "
        "(tests/opt_in_slices.py); .ci/run passes its commit count",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Every process notes a slice run; the controller refuses, under CI=true, a variable that
    would narrow the run, then draws the run's seed before pytest-xdist starts its workers, which
    inherit it (tests/seeds.py)."""
    from tests.opt_in_slices import enter_slice
    from tests.seeds import draw_run_seed

    if config.getoption("--opt-in-slice") is not None:
        enter_slice(config.getoption("--opt-in-slice"))
    if hasattr(config, "workerinput"):
        return
    if os.environ.get("CI", "").lower() == "true":
        narrowing = [name for name in NARROWING_VARIABLES if os.environ.get(name)]
        if narrowing:
            raise pytest.UsageError(
                f"{', '.join(narrowing)} would narrow or bypass what this run checks, and CI=true: "
                "unset them in CI (they are for replaying and rewriting on a developer's machine)."
            )
    draw_run_seed()


def pytest_report_header(config: pytest.Config) -> list[str]:
    from tests.seeds import SEED_VARIABLE, run_seed

    seed = run_seed()
    lines = [f"tablestream: random histories from seed {seed} (replay: {SEED_VARIABLE}={seed})"]
    chosen = config.getoption("--opt-in-slice")
    if chosen is not None:
        lines.append(f"tablestream: the opt-in tiers' slice {chosen}, modulo their number (tests/opt_in_slices.py)")
    return lines


@pytest.fixture(scope="session")
def tablestream_warehouse() -> Path:
    from tests.functional.local import shared_warehouse

    return shared_warehouse()


@pytest.fixture(scope="session")
def spark(tablestream_warehouse: Path):
    from tests.functional.local import shared_spark

    return shared_spark()


@pytest.fixture(scope="class")
def dbt_profile_target(tablestream_warehouse: Path) -> dict[str, object]:
    return {"type": "tablestream", "warehouse": str(tablestream_warehouse), "threads": 1}


@pytest.fixture(autouse=True)
def forget_the_dbt_adapter(request: pytest.FixtureRequest):
    """A dbt invocation leaves its adapter registered (dbt resets adapters when an invocation
    starts, not when it ends), and dbt's class-scoped `adapter` fixture keeps an adapter already
    registered: the next test class would then format `{schema}` with the last test's schema.
    dbt's own fixtures reset the adapter when their class ends; this does it after every other test."""
    yield
    if "project" not in request.fixturenames:
        from dbt.adapters.factory import reset_adapters

        reset_adapters()


# pytest-xdist hands the work out in collection order, so the longest tests (minutes each) go
# first: the workers then finish together instead of one waiting on the other's last long test.
LONGEST_FIRST = (
    "tests/cluster/",
    "tests/functional/test_kills.py",
    "tests/functional/test_integration_project.py",
    "tests/functional/test_stream_properties.py",
    "tests/functional/test_cdc_events.py",
    "tests/functional/test_history.py",
    "tests/functional/test_target_layout.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    chosen = config.getoption("--opt-in-slice")
    if chosen is not None:
        from tests.opt_in_slices import choose_slice

        kept, dropped = choose_slice(items, chosen)
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

    def rank(item: pytest.Item) -> int:
        return next(
            (index for index, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)),
            len(LONGEST_FIRST),
        )

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """How pytest-xdist spreads the suite over its workers (`-n 2`, pyproject.toml): a test
    class whole on one worker, so its class-scoped dbt project is set up once; the Thrift tests
    whole on one worker, so one local cluster serves them; every other test on its own."""
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith("tests/cluster/"):
                return "tests/cluster"
            parts = nodeid.split("::")
            return "::".join(parts[:2]) if len(parts) > 2 else nodeid

    return SuiteScheduling(config, log)
