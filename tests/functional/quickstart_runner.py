"""Run a README walkthrough's files and dbt commands in order, in one process.

A user's shell starts Spark's JVM once per `dbt` command, 20 to 40 s each here; this runs every
command with dbtRunner in one process, which starts the profile's session once, as the example
project's main job does. Run by path with the dbt project as the working directory and a JSON
file of steps: ``{"write": path, "text": text}`` or ``{"dbt": [args]}``. It imports only the
standard library and dbt, so it needs nothing of the test tree on its path.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path


def main(steps_file: str) -> int:
    from dbt.cli.main import dbtRunner

    for step in json.loads(Path(steps_file).read_text()):
        if "write" in step:
            path = Path(step["write"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(step["text"])
            continue
        command = shlex.join(["dbt", *step["dbt"]])
        print(f"quickstart: $ {command}", flush=True)
        result = dbtRunner().invoke(step["dbt"])
        if not result.success:
            print(f"quickstart: `{command}` failed: {result.exception or 'see dbt output above'}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
