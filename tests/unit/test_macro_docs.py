"""Every macro and materialization of the dbt package is documented in a yml beside it, whose
arguments are its signature's, each with a type dbt accepts."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import yaml

# dbt's own validator of a macro argument's type, the one `dbt parse` applies (dbt-core 1.11 and 1.12 alike).
from dbt.parser.schemas import is_valid_type
from dbt_common.clients import jinja

MACROS = Path(__file__).resolve().parents[2] / "macros"
DISPATCH_IMPLEMENTATION = re.compile(r"^(default|spark|databricks|tablestream)__")


def test_every_public_macro_is_documented() -> None:
    defined: set[str] = set()
    for path in MACROS.rglob("*.sql"):
        text = path.read_text()
        defined |= set(re.findall(r"{%-?\s*macro\s+(\w+)", text))
        defined |= {
            f"materialization_{name}_default" for name in re.findall(r"{%-?\s*materialization\s+(\w+),\s*default", text)
        }
        defined |= {f"test_{name}" for name in re.findall(r"{%-?\s*test\s+(\w+)", text)}
    documented: dict[str, str] = {}
    for path in MACROS.rglob("*.yml"):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            documented[entry["name"]] = entry.get("description", "")
    public = {name for name in defined if not DISPATCH_IMPLEMENTATION.match(name) and not name.startswith("_")}
    assert public, "no macros found"
    assert sorted(public - set(documented)) == []
    assert sorted(set(documented) - defined) == []
    # A private macro (`_name`, as dbt-utils marks its helpers) has no yml entry: a comment beside it.
    assert sorted(name for name in documented if name.startswith("_")) == []
    assert all(documented[name].strip() for name in public)
    # dbt renders descriptions as Jinja: a code example must sit inside {% raw %}.
    unescaped = [
        name for name, text in documented.items() if "{{" in re.sub(r"{% raw %}.*?{% endraw %}", "", text, flags=re.S)
    ]
    assert unescaped == []


def test_every_engine_piece_dispatches_and_nothing_calls_an_implementation() -> None:
    """docs/architecture.md, "Dispatch": each spark__X has a public X that dispatches to it, and
    nothing (macros, the Python package, the tests) calls spark__X by name."""
    sources = "".join(path.read_text() for path in MACROS.rglob("*.sql"))
    implemented = set(re.findall(r"{%-?\s*macro\s+spark__(\w+)\(", sources))
    dispatched = set(re.findall(r"adapter\.dispatch\('(\w+)', 'dbt_tablestream'\)", sources))
    assert implemented, "no spark__ macros found"
    assert sorted(implemented - dispatched) == []
    root = MACROS.parent
    callers = [*MACROS.rglob("*.sql"), *(root / "dbt_tablestream").rglob("*.py"), *(root / "tests").rglob("*.py")]
    direct = [
        f"{path.relative_to(root)}: {call}"
        for path in callers
        for call in re.findall(r"""(?:dbt_tablestream\.|["'])spark__\w+""", path.read_text())
    ]
    assert direct == []


def test_the_commit_protocol_is_chosen_in_one_place() -> None:
    """docs/architecture.md, "Exactly once without session settings": _stream_commit_protocol
    chooses the protocol, and every other macro reaches a protocol's step through _protocol_step,
    never testing which protocol runs; each protocol file defines the same steps."""
    chooser = MACROS / "protocols" / "commit_protocol.sql"
    tests = [
        f"{path.relative_to(MACROS)}: {match}"
        for path in MACROS.rglob("*.sql")
        if path != chooser
        for match in re.findall(r"""(?:==|!=|\bin\b)\s*\[?\s*'(?:marked|reapply)'""", path.read_text())
    ]
    assert tests == []
    steps = {
        protocol: set(
            re.findall(rf"{{%-?\s*macro\s+_{protocol}_(\w+)\(", (MACROS / "protocols" / f"{protocol}.sql").read_text())
        )
        for protocol in ("marked", "reapply")
    }
    assert steps["marked"] == steps["reapply"]
    called = set(re.findall(r"_protocol_step\('(\w+)'", "".join(path.read_text() for path in MACROS.rglob("*.sql"))))
    assert called == steps["marked"]


def test_names_and_values_reach_sql_only_through_the_quoting_macros() -> None:
    """docs/architecture.md, "Quoting": no macro quotes a name or a value by hand, nor with dbt's
    quoting, which leaves a backtick as it is; _sql_identifier and _sql_string do, in
    quoting.sql. Nor does the package's Python quote a name by hand."""
    hand_quoting = re.compile(
        r"adapter\.quote\(|\.quoted\b|attribute='quoted'"  # dbt's quoting
        r"""|'\{\{|`\{\{|\}\}`"""  # a value rendered between quotes or backticks
        r"""|["']`["']\s*~|~\s*["']`["']|\.`'\s*~"""  # backticks put around a name
    )
    # A quote put before a value; a message may end a quoted value so.
    quote_before = re.compile(r"""(?<!~ )"'"\s*~""")
    quoting = MACROS / "delta" / "quoting.sql"
    found = [
        f"{path.relative_to(MACROS)}: {line.strip()}"
        for path in MACROS.rglob("*.sql")
        if path != quoting
        for line in path.read_text().splitlines()
        if hand_quoting.search(line) or (quote_before.search(line) and "raise_compiler_error(" not in line)
    ]
    python = MACROS.parent / "dbt_tablestream"
    found += [
        f"{path.relative_to(python)}: {line.strip()}"
        for path in [*python.glob("*.py"), python / "ingest" / "_targets.py"]
        for line in path.read_text().splitlines()
        if re.search(r"""f["'][^"']*`\{""", line)
    ]
    assert found == []


def test_every_macro_argument_has_only_dbt_s_keys() -> None:
    """dbt refuses a macro argument with other keys than name, type and description; YAML reads a
    comma in an unquoted flow-mapping description as a new key, which only `dbt parse` would catch."""
    extra = [
        (path.name, entry["name"], sorted(set(argument) - {"name", "type", "description"}))
        for path in MACROS.rglob("*.yml")
        for entry in yaml.safe_load(path.read_text()).get("macros", [])
        for argument in entry.get("arguments") or []
        if set(argument) - {"name", "type", "description"}
    ]
    assert extra == []


def macro_signatures(root: Path) -> dict[str, list[tuple[str, bool]]]:
    """Each macro's, test's and materialization's arguments, in order, as dbt's own Jinja parse
    of the package reads them: (name, whether its default is `none`). A materialization takes no
    arguments (dbt's Jinja adds `supported_languages` to its macro, which no yml documents)."""
    signatures: dict[str, list[tuple[str, bool]]] = {}
    for path in root.rglob("*.sql"):
        for block in jinja.extract_toplevel_blocks(
            path.read_text(), allowed_blocks={"macro", "materialization", "test"}, collect_raw_data=False
        ):
            if not isinstance(block, jinja.BlockTag):
                continue
            (macro,) = jinja.parse(block.full_block).find_all(jinja2.nodes.Macro)
            name = macro.name.removeprefix("dbt_macro__")
            if block.block_type_name == "materialization":
                signatures[name] = []
                continue
            defaults = [None] * (len(macro.args) - len(macro.defaults)) + list(macro.defaults)
            signatures[name] = [
                (argument.name, isinstance(default, jinja2.nodes.Const) and default.value is None)
                for argument, default in zip(macro.args, defaults, strict=True)
            ]
    return signatures


def macro_argument_problems(root: Path) -> list[str]:
    """What `dbt parse` warns about in the macro ymls under `root` (dbt 1.12 validates macro
    arguments by default), and an argument defaulting to `none` whose type does not say so."""
    signatures = macro_signatures(root)
    problems: list[str] = []
    for path in sorted(root.rglob("*.yml")):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            name, arguments = entry["name"], entry.get("arguments")
            # A yml may leave its arguments out; a macro the package does not define is
            # test_every_public_macro_is_documented's to name.
            if arguments is None or name not in signatures:
                continue
            # dbt compares the yml's arguments with the Jinja signature by position.
            documented = [argument["name"] for argument in arguments]
            expected = [argument for argument, _ in signatures[name]]
            if documented != expected:
                problems.append(
                    f"{path.name}: {name} documents ({', '.join(documented)}), its signature is ({', '.join(expected)})"
                )
            takes_none = dict(signatures[name])
            for argument in arguments:
                kind = str(argument.get("type") or "")
                if not kind.strip():
                    problems.append(f"{path.name}: {name}.{argument['name']} has no type")
                elif not is_valid_type(kind):
                    problems.append(
                        f"{path.name}: {name}.{argument['name']} has type {kind!r}, which dbt does not accept"
                    )
                elif (
                    takes_none.get(argument["name"])
                    and kind.replace(" ", "") != "any"
                    and not kind.startswith("optional[")
                ):
                    problems.append(
                        f"{path.name}: {name}.{argument['name']} defaults to none, its type {kind!r} is not optional[...]"
                    )
    return problems


def test_every_macro_yml_matches_its_signature_and_dbt_s_types() -> None:
    """A yml's arguments are its macro's, in order, each with a type dbt's validator accepts
    (`str`, `int`, `bool`, `relation`, `list[T]`, `dict[K, V]`, `optional[T]`, ...: not `dict`,
    `list`, `Relation` or `boolean`)."""
    assert macro_signatures(MACROS), "no macros found"
    assert macro_argument_problems(MACROS) == []


def test_the_argument_check_finds_each_kind_of_problem(tmp_path: Path) -> None:
    (tmp_path / "m.sql").write_text(
        "{% macro m(relation, keys, limit=none) %}{% endmacro %}\n"
        "{% materialization x, default %}{% endmaterialization %}\n"
    )
    (tmp_path / "m.yml").write_text(
        yaml.safe_dump(
            {
                "version": 2,
                "macros": [
                    {
                        "name": "m",
                        "arguments": [
                            {"name": "relation", "type": "Relation"},
                            {"name": "limit", "type": "integer"},
                            {"name": "keys"},
                        ],
                    },
                    {
                        "name": "materialization_x_default",
                        "arguments": [{"name": "supported_languages", "type": "any"}],
                    },
                ],
            }
        )
    )
    assert macro_argument_problems(tmp_path) == [
        "m.yml: m documents (relation, limit, keys), its signature is (relation, keys, limit)",
        "m.yml: m.relation has type 'Relation', which dbt does not accept",
        "m.yml: m.limit defaults to none, its type 'integer' is not optional[...]",
        "m.yml: m.keys has no type",
        "m.yml: materialization_x_default documents (supported_languages), its signature is ()",
    ]
    (tmp_path / "m.yml").write_text(
        yaml.safe_dump(
            {
                "version": 2,
                "macros": [
                    {
                        "name": "m",
                        "arguments": [
                            {"name": "relation", "type": "relation"},
                            {"name": "keys", "type": "list[str]"},
                            {"name": "limit", "type": "optional[integer]"},
                        ],
                    },
                    {"name": "materialization_x_default"},
                ],
            }
        )
    )
    assert macro_argument_problems(tmp_path) == []


def test_a_stream_is_named_in_messages_by_stream_subject_alone() -> None:
    """How a refusal names a stream is spelled once (stream_value.sql, _stream_subject): a message
    that spells `Stream <name>` itself drifts from the others when the wording changes."""
    spelled = re.compile(r"""["']Stream ["']\s*~""")
    found = [
        f"{path.relative_to(MACROS)}:{number}"
        for path in sorted(MACROS.rglob("*.sql"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if spelled.search(line)
    ]
    lines = (MACROS / "streams" / "stream_value.sql").read_text().splitlines()
    definition = next(number for number, line in enumerate(lines, 1) if "macro _stream_subject" in line)
    assert found == [f"streams/stream_value.sql:{definition + 1}"]


# A statement a macro runs itself: dbt's and dbt-spark's ways to send SQL or touch a relation, and
# the adapter's own deletion-vector reader.
RUNS_A_STATEMENT = re.compile(
    r"run_query\(|\bstatement\(|load_result\(|adapter\.deletion_vector_positions\(|adapter\.(execute|get_columns_in_relation|"
    r"get_relation|drop_relation|rename_relation|truncate_relation|create_schema|drop_schema)\("
)
IMPLEMENTATION_PREFIXES = ("spark__", "default__", "tablestream__")


def test_exactly_the_macros_that_run_or_return_engine_sql_dispatch() -> None:
    """docs/architecture.md, "Dispatch": a public macro dispatches if and only if it runs a statement
    itself or through the private steps it calls (a protocol's steps among them), returns SQL (its
    name ends in `_sql`), or differs by adapter (an implementation besides `spark__`). A pure helper
    does not dispatch; an orchestrating macro does not either: the engine pieces it calls do."""
    bodies: dict[str, str] = {}
    for path in MACROS.rglob("*.sql"):
        for name, body in re.findall(r"{%-?\s*macro\s+(\w+)\(.*?\)\s*-?%}(.*?){%-?\s*endmacro", path.read_text(), re.S):
            bodies[name] = body

    def public_name(name: str) -> str:
        return next((name[len(prefix) :] for prefix in IMPLEMENTATION_PREFIXES if name.startswith(prefix)), name)

    implementations: dict[str, list[str]] = {}
    for name in bodies:
        if public_name(name) != name:
            implementations.setdefault(public_name(name), []).append(name)

    def code(name: str) -> str:
        return bodies[name] + "".join(bodies[each] for each in implementations.get(name, []))

    steps = {name for name in bodies if re.match(r"_(marked|reapply)_", name)}
    runs = {name: bool(RUNS_A_STATEMENT.search(code(name))) for name in bodies}
    callees = {
        name: set(re.findall(r"dbt_tablestream\.(_\w+)\(", code(name)))
        | (steps if "_protocol_step(" in code(name) else set())
        for name in bodies
    }
    grown = True
    while grown:
        grown = False
        for name in bodies:
            if not runs[name] and any(runs.get(callee) for callee in callees[name]):
                runs[name] = grown = True
    public = [name for name in bodies if not name.startswith("_") and public_name(name) == name]
    engine = {
        name
        for name in public
        if runs[name]
        or name.endswith("_sql")
        or any(not each.startswith("spark__") for each in implementations.get(name, []))
    }
    dispatched = {name for name in public if f"adapter.dispatch('{name}', 'dbt_tablestream')" in bodies[name]}
    assert sorted(engine - dispatched) == [], "these run or return engine SQL: dispatch them"
    assert sorted(dispatched - engine) == [], "these neither run nor return engine SQL: do not dispatch them"


def _user_name(macro: str) -> str:
    """The name a project writes: a materialization's and a generic test's, without dbt's affixes."""
    return re.sub(r"^materialization_(\w+)_default$|^test_(\w+)$", lambda found: found[1] or found[2], macro)


def test_every_documented_macro_is_marked_public_or_override() -> None:
    """docs/reference.md: each yml entry says in `config: {meta: {surface}}` whether it is the
    project's API or an override point, and the page's table lists exactly the public ones."""
    surfaces: dict[str, str] = {}
    for path in MACROS.rglob("*.yml"):
        for entry in yaml.safe_load(path.read_text()).get("macros", []):
            assert "meta" not in entry, f"{entry['name']}: dbt reads meta from config"
            surfaces[entry["name"]] = entry.get("config", {}).get("meta", {}).get("surface")
    assert sorted(name for name, surface in surfaces.items() if surface not in ("public", "override")) == []
    public = {_user_name(name) for name, surface in surfaces.items() if surface == "public"}
    # Implementations and names with dbt's dispatch prefix are never the project's API.
    assert sorted(name for name in public if DISPATCH_IMPLEMENTATION.match(name)) == []
    reference = (MACROS.parent / "docs" / "reference.md").read_text()
    table = reference.split("## The public API", 1)[1]
    listed = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(public)
