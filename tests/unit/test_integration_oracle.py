"""The conformance suite's expected seeds are the oracle's output: integration_tests/oracle.py,
run into a fresh folder, writes exactly the files committed under seeds/expected (no engine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "integration_tests" / "seeds" / "expected"


def test_the_expected_seeds_are_what_the_oracle_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("integration_oracle", ROOT / "integration_tests" / "oracle.py")
    assert spec and spec.loader
    oracle = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = oracle
    try:
        spec.loader.exec_module(oracle)
        oracle.SEEDS = tmp_path
        oracle.main()
    finally:
        del sys.modules[spec.name]
    written = {path.name: path.read_text() for path in tmp_path.glob("*.csv")}
    committed = {path.name: path.read_text() for path in EXPECTED.glob("*.csv")}
    assert sorted(written) == sorted(committed), "the oracle writes other seeds than those committed"
    differing = [name for name in sorted(written) if written[name] != committed[name]]
    assert not differing, f"committed seeds the oracle does not write (rerun integration_tests/oracle.py): {differing}"
    assert len(written) >= 10
