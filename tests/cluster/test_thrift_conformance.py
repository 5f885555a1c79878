"""The conformance suite (integration_tests/run.py) on the local cluster's stock dbt-spark
`method: thrift` profile: every stream model equals its expected rows after each step, and every
refusal is refused with nothing written. It covers the single-stream scenarios this folder's
earlier tests ran (a table_stream from `latest`, a stream_merge mirroring a keyed source)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.cluster.local_cluster import LocalCluster
from tests.functional.test_integration_project import check_passed, run_suite

# The same models and steps as on the local session (the default suite) through the same `spark__`
# macros; stock dbt-spark over Thrift is in CI through the extended tier's Thrift tests. In CI
# this run took 22 of 72 minutes of one worker (CONTRIBUTING.md).
pytestmark = pytest.mark.scenarios


def test_the_conformance_suite_passes_on_thrift(tmp_path: Path, thrift_cluster: LocalCluster) -> None:
    profile = thrift_cluster.profile(schema=f"it_{uuid.uuid4().hex[:8]}", threads=2)
    check_passed(*run_suite(tmp_path, profile))
