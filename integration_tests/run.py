"""The conformance suite: the package's stream models, driven through numbered source changes in
plain Delta SQL, each checked against its expected rows after every step; then the refusals.

    python integration_tests/run.py [--profiles-dir DIR] [--target T] [--prefix P] [--keep]

It runs unchanged on the local session, a `type: spark` cluster (thrift, http, session) and
`type: databricks`. Everything it builds is in the schemas `<prefix>` (models, seeds, offsets log)
and `<prefix>_src` (sources), dropped first and at the end (unless --keep). Exit 0: every model
equalled its expected rows at every step, every generic test passed and every refusal was refused
with nothing written; 1: the first difference, with the step, the model and the rows; 2: dbt could
not start (deps, seed, connection).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner

PROJECT = Path(__file__).resolve().parent
STEPS = 5
STEP_NODES = "resource_type:model resource_type:test"
STREAM_MATERIALIZATIONS = ("table_stream", "stream_merge", "stream_aggregate", "stream_view")


@dataclass(frozen=True)
class Refusal:
    """A stream model whose run must fail with `fragments` in its error, writing nothing.
    `established`: its stream ran in the steps, so its target and offsets must stay as they were;
    otherwise the target must not exist."""

    model: str
    fragments: tuple[str, ...]
    established: bool = True


REFUSALS = (
    Refusal(
        "refuse_feed_off",
        (
            "Stream refuse_feed_off__",
            "change data feed is not enabled on the source",
            "enable_change_tracking",
            "--full-refresh",
        ),
    ),
    Refusal(
        "refuse_feed_gap",
        ("Stream refuse_feed_gap__", "change data feed of", "was not enabled at version", "--full-refresh"),
    ),
    Refusal("refuse_recreated", ("Stream refuse_recreated__", "was dropped and recreated", "--full-refresh")),
    Refusal(
        "refuse_bad_config",
        ("Model refuse_bad_config", "invalid stream_mode 'sometimes'", "Accepted values: standard, append_only"),
        established=False,
    ),
)


class Failed(Exception):
    """The suite found a difference; the message says where."""


class Suite:
    def __init__(
        self,
        common: list[str],
        prefix: str,
        say: Callable[[str], None],
        directory: str | None,
        select: list[str] | None = None,
    ) -> None:
        self.common = common
        self.prefix = prefix
        self.say = say
        self.directory = directory
        self.select = select or STEP_NODES.split()
        self.at_step = 0

    def dbt(self, *args: str, callbacks: list[Callable[[Any], None]] | None = None) -> Any:
        """dbt in this process. Every call passes the same vars until the next step: dbt parses the
        whole project again whenever its vars change, so a step's calls share one parse."""
        variables: dict[str, object] = {"integration_prefix": self.prefix, "integration_step": self.at_step}
        if self.directory:
            variables["integration_directory"] = self.directory
        return dbtRunner(callbacks=callbacks or []).invoke([*args, "--vars", json.dumps(variables), *self.common])

    def operation(self, macro: str, callbacks: list[Callable[[Any], None]] | None = None, **arguments: object) -> Any:
        return self.dbt("run-operation", macro, "--args", json.dumps(arguments), callbacks=callbacks)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        shown = self.dbt("show", "--inline", sql, "--limit", "50")
        if not shown.success or not shown.result:
            raise Failed(f"the query failed: {sql}\n{shown.exception or ''}")
        table = shown.result.results[0].agate_table
        names = table.column_names
        return [tuple(f"{name}={value}" for name, value in zip(names, row, strict=True)) for row in table.rows]

    def drop_schemas(self) -> None:
        self.operation("integration_drop_schemas", schemas=[self.prefix, f"{self.prefix}_src"])

    def step(self, step: int) -> tuple[int, int]:
        self.at_step = step
        applied = self.operation("integration_step", step=step)
        if not applied.success:
            raise Failed(f"step {step}: the source changes failed: {applied.exception}")
        # The refusal models' sources change only in the refusal phase: after step 0 their runs are no-ops.
        excluded = ["tag:bad_config"] if step == 0 else ["tag:bad_config", "tag:refusal"]
        built = self.dbt("build", "--select", *self.select, "--exclude", *excluded)
        results = [] if built.result is None else list(built.result)
        failed = [r for r in results if str(r.status) in ("error", "fail")]
        models = sum(1 for r in results if r.node.resource_type == "model")
        streams = sum(1 for r in results if r.node.config.materialized in STREAM_MATERIALIZATIONS)
        tests = len(results) - models
        self.say(f"step {step}: {models} models built ({streams} stream models), {tests} tests, {len(failed)} failed")
        if built.result is None:
            raise Failed(f"step {step}: dbt build did not run: {built.exception}")
        if failed:
            lines = []
            for result in failed:
                attached = getattr(result.node, "attached_node", None) or result.node.unique_id
                lines.append(f"step {step}: model {attached.split('.')[-1]}: {result.node.name}: {result.message}")
                lines += [f"    {', '.join(row)}" for row in self.differing_rows(result)]
            raise Failed("\n".join(lines))
        return streams, tests

    def differing_rows(self, result: Any) -> list[tuple[Any, ...]]:
        """The rows a failing test returned, from its compiled SQL."""
        sql = getattr(result.node, "compiled_code", None)
        if result.node.resource_type != "test" or not sql:
            return []
        try:
            return self.query(sql)
        except Failed:
            return []

    def written(self, model: str) -> dict[str, Any]:
        """What a run of `model` could have written: the Delta version and a fingerprint of the rows
        of its target and of the offsets log (integration_written)."""
        logged: list[str] = []

        def capture(event: Any) -> None:
            if event.info.msg.startswith("integration_written "):
                logged.append(event.info.msg.split(" ", 1)[1])

        ran = self.operation("integration_written", callbacks=[capture], model=model)
        if not ran.success or len(logged) != 1:
            raise Failed(f"refusals: model {model}: its target and offsets could not be read: {ran.exception}")
        return dict(json.loads(logged[0]))

    def refuse(self, refusal: Refusal) -> None:
        before = self.written(refusal.model) if refusal.established else None
        ran = self.dbt("run", "--select", refusal.model)
        results = [] if ran.result is None else list(ran.result)
        message = " ".join(str(r.message) for r in results if r.node.name == refusal.model) or str(ran.exception)
        if ran.success:
            raise Failed(f"refusals: model {refusal.model}: the run succeeded; it must be refused")
        missing = [fragment for fragment in refusal.fragments if fragment not in message]
        if missing:
            raise Failed(f"refusals: model {refusal.model}: the error lacks {missing}:\n    {message}")
        after = self.written(refusal.model) if before is not None else None
        if after != before:
            raise Failed(f"refusals: model {refusal.model}: refused, but it wrote: {before} became {after}")
        if before is None and not self.operation("integration_expect_absent", model=refusal.model).success:
            raise Failed(f"refusals: model {refusal.model}: refused, but its target exists")
        reason = next((line.strip() for line in message.splitlines() if refusal.fragments[0] in line), message)
        self.say(f"refused: {refusal.model}: {reason[:200]}")

    def run(self) -> tuple[int, int]:
        models = tests = 0
        for step in range(STEPS):
            step_models, step_tests = self.step(step)
            models = max(models, step_models)
            tests += step_tests
        if not self.operation("integration_refusal_step").success:
            raise Failed("refusals: the source changes failed")
        for refusal in REFUSALS:
            self.refuse(refusal)
        return models, tests


def main(argv: list[str] | None = None, say: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--profiles-dir", default=str(PROJECT), help="where profiles.yml is (default: this folder)")
    parser.add_argument("--target", help="the profile's target (default: its own default)")
    parser.add_argument("--prefix", default="tablestream_it", help="the suite's schemas: <prefix> and <prefix>_src")
    parser.add_argument("--keep", action="store_true", help="leave the schemas in place at the end")
    parser.add_argument(
        "--directory",
        help="a folder (path or URI) the cluster can write with INSERT OVERWRITE DIRECTORY and list, for the "
        "directory_table models; each run writes under a new subfolder of it. Unset: those models are skipped",
    )
    parser.add_argument(
        "--select",
        nargs="+",
        help="build only these nodes at each step (dbt selectors, e.g. `orders_current+`); default every model and test",
    )
    args = parser.parse_args(argv)
    common = ["--project-dir", str(PROJECT), "--profiles-dir", args.profiles_dir]
    if args.target:
        common += ["--target", args.target]
    directory = None
    if args.directory:
        directory = f"{args.directory.rstrip('/')}/{args.prefix}-{datetime.now(UTC):%Y%m%d%H%M%S}"
    else:
        say("directory_table models skipped: no --directory")
    suite = Suite(common, args.prefix, say, directory, args.select)
    if not suite.dbt("deps").success:
        say("dbt deps failed")
        return 2
    suite.drop_schemas()
    if not suite.dbt("seed", "--full-refresh").success:
        say("dbt seed failed: see the log above (is the profile right?)")
        return 2
    try:
        models, tests = suite.run()
    except Failed as failure:
        say(f"FAILED {failure}")
        return 1
    finally:
        if not args.keep:
            suite.drop_schemas()
    say(
        f"passed: {models} stream models over {STEPS} steps ({STEPS - 1} of changes), {tests} tests,"
        f" {len(REFUSALS)} refusals"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
