"""One deletion vector decoded in Python and in Jinja: run for issue 77 at 61a3ab0 (2026-12-05);
bench/README.md, "The Delta log read" ("Decoded in Python, not Jinja"), keeps what it decided: the
local profile decodes vectors in Python (f0f4716), where a 1M-position vector takes 0.08 s
against Jinja's 2.25 s.

One deletion vector decoded from its bytes, as the local profile's
`deletion_vector_positions` decodes it (dbt_tablestream/_deletion_vectors.py, with pyroaring), and,
given `--jinja`, as the Jinja macro it replaced decoded it (main 1923182), for comparison.

    python bench/experiments/vector_decode.py
    git show 1923182:macros/delta/deletion_vectors.sql > /tmp/jinja_decoder.sql
    python bench/experiments/vector_decode.py --jinja /tmp/jinja_decoder.sql

Reported: seconds per vector for each shape, in bench/results/vector_decode.json.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyroaring import BitMap

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dbt_tablestream._deletion_vectors import MAGIC_NUMBER, serialized_positions

RESULTS = Path(__file__).resolve().parents[1] / "results"
SHAPES: dict[str, list[int]] = {
    "1M scattered (bitmap containers)": list(range(0, 2_000_000, 2)),
    "100k scattered (bitmap containers)": list(range(0, 200_000, 2)),
    "10k in runs of 10": [p for start in range(0, 1_000_000, 1000) for p in range(start, start + 10)],
    "1k scattered (array containers)": list(range(0, 1_000_000, 1000)),
}


def serialized(positions: list[int]) -> bytes:
    """The bytes of a vector from its magic number on, as delta-spark writes them (run-optimised)."""
    bitmap = BitMap(positions)
    bitmap.run_optimize()
    return struct.pack("<IQI", MAGIC_NUMBER, 1, 0) + bitmap.serialize()


def jinja_decoder(path: Path) -> Callable[[bytes], list[int]]:
    """The Jinja macro deletion_vector_positions of `path`, called as dbt calls a package macro."""
    import jinja2

    class Returned(Exception):
        def __init__(self, value: Any) -> None:
            self.value = value

    def returned(value: Any) -> None:
        raise Returned(value)

    class Namespace:
        def __getattr__(self, name: str) -> Callable[..., Any]:
            found = getattr(module, name)

            def call(*args: Any) -> Any:
                try:
                    return str(found(*args))
                except Returned as done:
                    return done.value

            return call

    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    environment.globals.update({"return": returned, "modules": type("Modules", (), {"re": re})})
    module = environment.from_string(path.read_text()).make_module({"dbt_tablestream": Namespace()})
    decode = Namespace().deletion_vector_positions
    return lambda data: list(decode(data.hex()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jinja", type=Path, help="the Jinja decoder's macro file, to time beside Python")
    parser.add_argument("--out", type=Path, default=RESULTS / "vector_decode.json")
    args = parser.parse_args()
    decoders: dict[str, Callable[[bytes], list[int] | None]] = {"python": serialized_positions}
    if args.jinja:
        decoders["jinja"] = jinja_decoder(args.jinja)
    seconds: dict[str, dict[str, float]] = {}
    for shape, positions in SHAPES.items():
        data = serialized(positions)
        for name, decode in decoders.items():
            started = time.perf_counter()
            decoded = decode(data)
            elapsed = time.perf_counter() - started
            assert decoded == positions, f"{name} decoded {shape} wrong"
            seconds.setdefault(shape, {})[name] = elapsed
        print(f"{shape}: " + ", ".join(f"{name} {value:.3f} s" for name, value in seconds[shape].items()), flush=True)
    args.out.write_text(json.dumps({"seconds": seconds, "measured_at": time.strftime("%Y-%m-%d")}, indent=2) + "\n")


if __name__ == "__main__":
    main()
