"""bench/README.md's tables of measured figures, rendered from the results JSON under bench/results/.

A rendered region of bench/README.md opens with a line naming its JSON files,
`<!-- rendered from bench/results/a.json[, bench/results/b.json] by bench/render_readme.py -->`,
and closes with `<!-- end -->`; what lies between is this module's rendering of those files, the
benchmark's own `--report` format where it has one. A rerun rewrites its JSON, and this rewrites
the README's tables from it: the figures live in one place. tests/unit/test_bench_readme.py
fails while the README differs from the rendering, and while a region names files no renderer
here takes (or a renderer has no region).

    python bench/render_readme.py            # rewrite bench/README.md's rendered regions
    python bench/render_readme.py --check    # exit 1, naming the regions, if they differ
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aggregate
import run
import small_window
import view

BENCH = Path(__file__).resolve().parent
README = BENCH / "README.md"
RESULTS = BENCH / "results"
REGION = re.compile(
    r"(?P<open><!-- rendered from (?P<files>bench/results/[\w.]+\.json(?:, bench/results/[\w.]+\.json)*)"
    r" by bench/render_readme\.py -->\n)(?P<body>.*?)(?P<close><!-- end -->)",
    re.S,
)

Document = dict[str, Any]
Renderer = Callable[[list[Document]], list[str]]


def result_line(document: Document) -> str:
    return f"`{document['result']}`"


def seconds(value: float) -> str:
    return f"{value:.2f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def run_report(documents: list[Document]) -> list[str]:
    """bench/run.py's own report (`--report`), for its in-session variants and its cold starts."""
    (document,) = documents
    if "table" in document:
        return run.scale_markdown(document).split("\n")
    if "medians" in document:
        return run.markdown(document).split("\n")
    return [*run.cold_markdown(document["cold_start"]), "", result_line(document)]


def small_window_report(documents: list[Document]) -> list[str]:
    (document,) = documents
    return small_window.markdown(document).split("\n")


def aggregate_report(documents: list[Document]) -> list[str]:
    (document,) = documents
    medians = {
        pattern: {int(rows): variants for rows, variants in by_size.items()}
        for pattern, by_size in document["medians"].items()
    }
    return [*aggregate.markdown(medians), "", result_line(document)]


def view_report(documents: list[Document]) -> list[str]:
    """bench/view.py's own report (`--report`): each select's medians and ratios, each model's median warm run."""
    (document,) = documents
    return [*view.markdown(document), "", result_line(document)]


# bench/experiments/view_keys.py's parts of a view's window, as its points name them; its
# listing's selects (`variant_<n>`) are labelled from their own SQL (view_keys_variant).
VIEW_KEYS_PARTS = {
    "feed_sales": "the sales' change feed over the window, counted",
    "net_sales": "the sales' window netted per row (`stream_view_net_rows_sql`)",
    "feed_customers": "the customers' change feed over the window, counted",
    "net_customers": "the customers' window netted per row",
    "keys": "the listing as a run sends it (its selects' UNION)",
    "keys_hinted": "the same, a `BROADCAST` hint in each netted read's definition",
    "nets_written": "each window's netted rows written to a Delta table",
    "keys_over_written_nets": "the listing, reading the netted rows from those tables",
    "changes": "the change rows of the listed keys, as a run sends them",
    "rebuild_select": "the view's select over the sources, counted",
    "rebuild": "the view's select written as a table (a `table` model's run)",
}
VIEW_KEYS_READS = {"minus": "removed", "plus": "added", "changed": "removed and added", "old": "start", "new": "end"}


def view_keys_variant(sql: str) -> str:
    """A listing select's label from its reads: `listing: sales removed; customers, products at the start`."""
    reads = re.findall(r"__tablestream_read_\d+_(\w+) as (\w+)", sql)
    tables = {"s": "sales", "c": "customers", "p": "products"}
    changed = [
        f"{tables.get(alias, alias)} {VIEW_KEYS_READS[read]}"
        for read, alias in reads
        if read in ("minus", "plus", "changed")
    ]
    others = [
        f"{tables.get(alias, alias)} "
        + ("at the end with its removed rows" if read == "wide" else f"at the {VIEW_KEYS_READS[read]}")
        for read, alias in reads
        if read not in ("minus", "plus", "changed")
    ]
    return "listing: " + ", ".join(changed) + "; " + ", ".join(others)


def view_keys(documents: list[Document]) -> list[str]:
    """bench/experiments/view_keys.py's parts, the median of each part's repeats."""
    (document,) = documents
    (point,) = document["points"]
    labels = {f"variant_{n}": view_keys_variant(sql) for n, sql in enumerate(point["variants"])}
    order = [*list(VIEW_KEYS_PARTS)[:4], *labels, *list(VIEW_KEYS_PARTS)[4:]]
    labels |= VIEW_KEYS_PARTS
    rows = [[labels[part], seconds(statistics.median(point[part]))] for part in order if part in point]
    return [*table(["part of the keyed view's window", "seconds"], rows), "", result_line(document)]


def run_profile(documents: list[Document]) -> list[str]:
    """Each model's median run split into its statements' execution, their fetches and dbt's own work."""
    rows = [
        [
            f"`{model}`",
            *(seconds(figures[part]) for part in ("seconds", "execute", "fetch", "rest")),
            str(figures["statements"]),
        ]
        for document in documents
        for model, figures in document["models"].items()
    ]
    header = ["model", "run", "statements, executed", "fetches", "dbt's own", "statements"]
    return [*table(header, rows), "", *(line for document in documents for line in (result_line(document), ""))][:-1]


def long_run(documents: list[Document]) -> list[str]:
    (document,) = documents
    runs = document["runs"]
    spans = [(1, 5), (6, 20), (21, 40), (41, 60)]
    rows = [["built", "", str(document["built"]["files"]), f"{document['built']['median_span']:,}"]]
    for first, last in spans:
        kept = [entry for entry in runs if first <= entry["run"] <= last]
        if not kept:
            continue
        times = [entry["seconds"] for entry in kept]
        rows.append(
            [
                f"{first}-{last}",
                f"{min(times):.2f} / {statistics.median(times):.2f} / {max(times):.2f}",
                str(kept[-1]["files"]),
                f"{kept[-1]['median_span']:,}",
            ]
        )
    header = ["runs", "seconds: fastest / median / slowest", "target files after", "median key span of a file after"]
    return [*table(header, rows), "", result_line(document)]


def candidate_writes(documents: list[Document]) -> list[str]:
    """bench/experiments/scattered_writes.py's writes, one column per pattern: the median, then the
    first and last rounds' seconds; the fastest of each column in bold."""
    names = list(dict.fromkeys(name for document in documents for name in document["medians"] if name != "rebuild"))
    names.append("rebuild")
    columns = []
    for document in documents:
        fastest = min(document["medians"].values())
        cells = {}
        for name, median in document["medians"].items():
            shown = f"**{seconds(median)}**" if median == fastest else seconds(median)
            cells[name] = f"{shown} ({seconds(document['first_s'][name])} / {seconds(document['last_s'][name])})"
        columns.append(cells)
    rows = [[f"`{name}`", *(cells.get(name, "-") for cells in columns)] for name in names]
    header = ["write", *(f"{document['pattern']} 0.1%: median (first / last)" for document in documents)]
    lines = table(header, rows)
    for document in documents:
        lines += ["", f"{document['pattern'].capitalize()}: {result_line(document)}"]
    return lines


def writes_against_rebuild(documents: list[Document]) -> list[str]:
    (document,) = documents
    medians = document["medians"]
    names = [name for name in document["first_s"] if name != "rebuild"] + ["rebuild"]
    rows = [[f"`{name}`", seconds(medians[name]), seconds(medians[name] / medians["rebuild"])] for name in names]
    return [*table(["write", "seconds", "\N{MULTIPLICATION SIGN} `rebuild`"], rows), "", result_line(document)]


def replace_where_keys(documents: list[Document]) -> list[str]:
    (document,) = documents
    rows = [
        [
            f"{point['keys']:,}",
            f"{point['sql_bytes'] / 2**20:.2f} MB",
            f"{point['plan_s']:.2f} s",
            f"{point['checked_s']:.1f} s",
            f"{point['unchecked_s']:.1f} s",
        ]
        for point in document["points"]
    ]
    return [*table(["keys", "SQL", "plan (EXPLAIN)", "checked", "unchecked"], rows), "", result_line(document)]


# bench/experiments/window_read.py's steps, as its points name them.
WINDOW_STEPS = {
    "raw_count": "`table_changes` of the window, counted",
    "net_count": "its net changes (what a run reads), counted",
    "full_scan": "a scan of the source (`sum(amount), count(*)`)",
    "cache": "`CACHE TABLE` of the net changes",
    "cached_count": "a count of the cached table",
    "materialize": "the net changes written to a Delta table",
    "replace_from_table": "`INSERT ... REPLACE WHERE id IN (<the window's keys>)` from that table",
    "replace_from_query": "the same from the net changes' query, as a run writes it",
    "in_scan": "`count(*) WHERE id IN (<the window's keys>)` of the target's copy",
    "rebuild": "the source rewritten as a table (`CREATE OR REPLACE TABLE ... AS SELECT`, a rebuild)",
}


def window_read(documents: list[Document]) -> list[str]:
    """bench/experiments/window_read.py's steps, the median of each run's rounds, a column per run."""
    medians = [
        {
            step: statistics.median(point[step] for point in document["points"])
            for step in WINDOW_STEPS
            if step in document["points"][0]
        }
        for document in documents
    ]
    rows = [
        [label, *(seconds(column[step]) if step in column else "-" for column in medians)]
        for step, label in WINDOW_STEPS.items()
        if any(step in column for column in medians)
    ]
    header = ["step", *(f"`{Path(document['arguments']['out']).name}`" for document in documents)]
    return [*table(header, rows), "", *(result_line(document) for document in documents)]


def key_list_scan(documents: list[Document]) -> list[str]:
    (document,) = documents
    steps = ("id_scan", "in_list", "in_list_no_pushdown", "semi_join")
    rows = [
        [f"{point['keys']:,}", *(seconds(statistics.median(point[step])) for step in steps)]
        for point in document["points"]
    ]
    header = ["keys", "key column scan", "IN list", "IN list, `spark.sql.parquet.filterPushdown` off", "semi join"]
    return [*table(header, rows), "", result_line(document)]


def replace_where_history(documents: list[Document]) -> list[str]:
    (document,) = documents
    rows = [
        [
            f"{point['commits']:,}",
            *(seconds(point[read]) for read in ("history_1", "history_50", "snapshot", "detail")),
            f"{point['log_bytes'] / 2**20:.1f}",
            f"{point['commit_info_bytes'] / 1024:.0f}",
            "" if point["commit_s"] is None else seconds(point["commit_s"]),
        ]
        for point in document["points"]
    ]
    header = [
        "commits",
        "DESCRIBE HISTORY LIMIT 1",
        "LIMIT 50",
        "snapshot (count)",
        "DESCRIBE DETAIL",
        "_delta_log MB",
        "commitInfo KB",
        "a commit (median of the last 50)",
    ]
    return [*table(header, rows), "", result_line(document)]


def year(documents: list[Document]) -> list[str]:
    (document,) = documents
    fresh, after = document["fresh"], document["year"]
    rows = [
        [label, f"{fresh[key]:.2f} s", f"{after[key]:.2f} s", seconds(after[key] / fresh[key])]
        for label, key in (("no-op run", "noop_s"), ("`tablestream status` (delta-rs, a new process)", "status_s"))
    ]
    header = ["", "fresh log", f"after {document['arguments']['commits']:,} runs", "ratio"]
    return [*table(header, rows), "", result_line(document)]


def events(documents: list[Document]) -> list[str]:
    (document,) = documents
    total = document["arguments"]["events"]
    rows = [
        [
            f"{round(float(fraction) * total):,} events ({float(fraction):.1%})",
            seconds(variants["events"]),
            seconds(variants["events_ignore_nulls"]),
            seconds(variants["plain"]),
            seconds(variants["events"] / variants["plain"]),
        ]
        for fraction, variants in document["medians"].items()
    ]
    header = ["window", "`sequence_by`", "with `ignore_null_updates`", "plain `stream_merge`", "ratio"]
    return [*table(header, rows), "", result_line(document)]


def history(documents: list[Document]) -> list[str]:
    (document,) = documents
    arguments, medians = document["arguments"], document["medians"]
    keys = round(arguments["rows"] * arguments["fraction"])
    rows = [
        [
            f"{arguments['rows'] // 1_000_000}M",
            f"{keys:,}",
            f"{keys * arguments['changes_per_key']:,}",
            seconds(medians["scd2"]),
            seconds(medians["plain"]),
            seconds(medians["scd2"] / medians["plain"]),
        ]
    ]
    header = ["rows", "changed keys per run", "versions per run", "`scd_type: 2`", "`stream_merge`", "ratio"]
    return [*table(header, rows), "", result_line(document)]


def log_read(documents: list[Document]) -> list[str]:
    """bench/log_read.py's reads and runs, a row per results file, named by what it varied."""
    steps = ("feed_read", "log_read", "full_diff", "feed_run", "log_run")
    rows = []
    for document in documents:
        arguments = document["arguments"]
        label = [f"{arguments['rows'] // 1_000_000}M"]
        if arguments.get("changes_per_window", 1) > 1:
            label.append(f"{arguments['changes_per_window']} changes a window")
        if arguments["pattern"] != "clustered":
            label.append(arguments["pattern"])
        if arguments["file_rows"] != 250_000:
            label.append(f"files of {arguments['file_rows'] // 1000}k rows")
        if arguments["deletion_vectors"]:
            label.append("deletion vectors")
        rows.append([", ".join(label), *(seconds(document["medians"][step]) for step in steps)])
    header = ["rows", "feed read", "log read", "full diff", "`dbt run`, feed", "`dbt run`, log"]
    return [*table(header, rows), "", *(result_line(document) for document in documents)]


def ingest(documents: list[Document]) -> list[str]:
    (document,) = documents
    modes = {"AUTO_FLUSH_SYNC": "sync", "AUTO_FLUSH_BACKGROUND": "background"}
    rows = [
        [
            "append-only" if entry["keys"] is None else f"{entry['operation']} over {entry['keys']:,} keys",
            modes[entry["flush_mode"]],
            f"{entry['flush_rows']:,}",
            str(entry["commits"]),
            f"{entry['rows_per_second']:,}",
        ]
        for entry in document["results"]
    ]
    return table(["rows", "flush mode", "rows per flush", "commits", "rows/s"], rows)


RENDERERS: dict[tuple[str, ...], Renderer] = {
    ("cold.json",): run_report,
    ("run.json",): run_report,
    ("run_matrix.json",): run_report,
    ("scale.json",): run_report,
    ("scale_rewrite_10m_scattered.json",): run_report,
    ("scale_rewrite_100m_scattered.json",): run_report,
    ("scale_rewrite_cached_10m.json",): run_report,
    ("scale_rewrite_cached_10m_scattered.json",): run_report,
    ("carryovers.json",): run_report,
    ("warehouse.json",): run_report,
    ("changes.json",): run_report,
    ("small_window.json",): small_window_report,
    ("small_window_thrift.json",): small_window_report,
    ("small_window_thrift_rewrite.json",): small_window_report,
    ("small_window_local_rewrite.json",): small_window_report,
    ("aggregate.json",): aggregate_report,
    ("aggregate_groups.json",): aggregate_report,
    ("run_profile_aggregate.json", "run_profile_keyed.json"): run_profile,
    ("run_profile_aggregate_100m.json", "run_profile_keyed_100m.json"): run_profile,
    ("long_run.json",): long_run,
    ("scattered_writes.json", "scattered_writes_clustered.json"): candidate_writes,
    ("scattered_writes_ranges.json", "scattered_writes_ranges_clustered.json"): candidate_writes,
    ("scattered_writes_rewrite.json",): writes_against_rebuild,
    ("replace_where_keys.json",): replace_where_keys,
    ("window_read.json",): window_read,
    ("window_read_100m.json", "window_read_100m_cow_source.json"): window_read,
    ("key_list_scan.json",): key_list_scan,
    ("replace_where_history.json",): replace_where_history,
    ("year.json",): year,
    ("events.json",): events,
    ("history.json",): history,
    ("log_read.json",): log_read,
    ("log_read_50k.json", "log_read_dv_50k.json"): log_read,
    ("ingest.json",): ingest,
    ("view.json",): view_report,
    ("view_exact_listing.json",): view_report,
    ("view_keys.json",): view_keys,
    ("view_keys_grows.json",): view_keys,
}


def region_files(files: str) -> tuple[str, ...]:
    return tuple(path.removeprefix("bench/results/") for path in files.split(", "))


def render_region(files: tuple[str, ...], results: Path = RESULTS) -> str:
    if files not in RENDERERS:
        raise KeyError(f"bench/render_readme.py has no renderer for {', '.join(files)}")
    documents = [json.loads((results / name).read_text()) for name in files]
    return "\n".join(RENDERERS[files](documents)) + "\n"


def render(readme: str, results: Path = RESULTS) -> str:
    """`readme` with every rendered region's body rendered again from its JSON files."""
    return REGION.sub(
        lambda found: found["open"] + render_region(region_files(found["files"]), results) + found["close"], readme
    )


def regions(readme: str) -> list[tuple[str, ...]]:
    """The JSON files of each rendered region, in the README's order."""
    return [region_files(found["files"]) for found in REGION.finditer(readme)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a region differs")
    args = parser.parse_args(argv)
    readme = README.read_text()
    rendered = render(readme)
    if args.check:
        stale = [
            ", ".join(files)
            for files, old, new in zip(regions(readme), REGION.finditer(readme), REGION.finditer(rendered), strict=True)
            if old["body"] != new["body"]
        ]
        for files in stale:
            print(f"bench/README.md's region from {files} differs from its rendering")
        return 1 if stale else 0
    README.write_text(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
