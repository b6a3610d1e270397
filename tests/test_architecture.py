"""The shape of the house: the pure core imports no terminal, file, clock or
platform module, and start-up loads only what the command needs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import ansi2048

PACKAGE = Path(ansi2048.__file__).parent

# The functional core: computes, never touches the outside world. Whole
# subpackages, so that a module added to one is held to the rule at once.
PURE_PACKAGES = ("ansi2048.game", "ansi2048.records", "ansi2048.render", "ansi2048.loop")


def is_pure(module: str) -> bool:
    return module == "ansi2048" or any(module == p or module.startswith(p + ".") for p in PURE_PACKAGES)


# The subpackages from the bottom up: a module imports only from its own
# subpackage and those below it (the root's lazy Game and Direction come
# from the rules). Each layer's role is in the package docstring.
LAYERS = (
    ("ansi2048.game",),  # the rules
    ("ansi2048.records",),  # recordings, history records, statistics
    ("ansi2048.render",),  # frames
    ("ansi2048.loop",),  # the loop as a state machine
    # The data directory; the consoles; the AI (its weights are read as the
    # game's other files are, through storage.files).
    ("ansi2048.storage", "ansi2048.terminal", "ansi2048.ai"),
    ("ansi2048.options",),  # the command line, the config file, the run's context
    ("ansi2048.play",),  # the drivers of the loop, the screen they draw on
    ("ansi2048.serve",),  # the game over SSH
    ("ansi2048.cli", "ansi2048.__main__"),  # the command
)


def layer_of(module: str) -> int:
    for level, packages in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return level
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


# What a pure module may not import: streams, files, processes, the clock,
# signals, threads, the terminal and the platform.
FORBIDDEN = {
    "os",
    "sys",
    "io",
    "time",
    "datetime",
    "signal",
    "select",
    "threading",
    "subprocess",
    "socket",
    "shutil",
    "pathlib",
    "tempfile",
    "termios",
    "tty",
    "fcntl",
    "msvcrt",
    "readchar",
    "colorama",
    "platformdirs",
    "random",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, type_only: bool = False) -> Set[str]:
    """Every module ``path`` imports, relative imports resolved, including
    those inside functions; those under TYPE_CHECKING only if ``type_only``
    (an idea's arrow is an arrow, even when the interpreter never follows it)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: Set[int] = set()
    for node in ast.walk(tree):
        if not type_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for child in ast.walk(node)}
    found: Set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x: x may be a module
                    found |= {f"{target}.{alias.name}" for alias in node.names}
                found.add(target)
            else:
                found.add(node.module or "")
    return found


def all_modules(type_only: bool = False) -> Dict[str, Set[str]]:
    return {module_name(path): imports_of(path, type_only) for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_core_imports_nothing_of_the_outside_world() -> None:
    modules = all_modules()
    pure = sorted(name for name in modules if is_pure(name))
    assert len(pure) > 20, "the core's packages were renamed: update PURE_PACKAGES"
    for name in pure:
        outside = {imported.split(".")[0] for imported in modules[name]} & FORBIDDEN
        assert not outside, f"{name} imports {sorted(outside)}"


def test_the_core_imports_only_the_core() -> None:
    modules = all_modules()
    for name in sorted(name for name in modules if is_pure(name)):
        own = {imported for imported in modules[name] if imported.startswith("ansi2048") and imported in modules}
        shell = sorted(imported for imported in own if not is_pure(imported))
        assert not shell, f"{name} imports shell modules {shell}"


def test_nothing_imports_upward() -> None:
    modules = all_modules()
    for name, imports in sorted(modules.items()):
        if name == "ansi2048":
            continue  # the root fetches Game and Direction lazily, from the rules
        upward = sorted(
            imported
            for imported in imports
            if imported in modules and imported != "ansi2048" and layer_of(imported) > layer_of(name)
        )
        assert not upward, f"{name} (layer {layer_of(name)}) imports upward: {upward}"


def test_the_layer_rule_sees_an_upward_import() -> None:
    # A rule that cannot fail proves nothing: the serve layer is above the play layer.
    assert layer_of("ansi2048.serve.server") > layer_of("ansi2048.play.performer")
    assert layer_of("ansi2048.game.engine") < layer_of("ansi2048.loop.step")


def test_the_rule_sees_imports_inside_functions(tmp_path: Path) -> None:
    # The check itself must not be blind to a lazy import.
    sample = PACKAGE / "render" / "frame.py"
    assert "ansi2048.game.session" in imports_of(sample)
    assert "os" in imports_of(PACKAGE / "storage" / "data_dir.py")


def loaded_after(code: str) -> Set[str]:
    """The ansi2048 modules loaded in a fresh interpreter after ``code``."""
    script = f"import sys\n{code}\nprint('LOADED', *(m for m in sys.modules if m.startswith('ansi2048')))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, encoding="utf-8", check=True, timeout=60
    )
    last = result.stdout.splitlines()[-1].split()
    assert last[0] == "LOADED"
    return set(last[1:])


def test_importing_the_package_loads_no_game() -> None:
    assert loaded_after("import ansi2048") == {"ansi2048"}
    assert "ansi2048.game.engine" in loaded_after("from ansi2048 import Game")


def test_version_and_help_load_nothing_of_the_game() -> None:
    for option in ("--version", "--help"):
        code = f"from ansi2048.cli import main\ntry:\n    main([{option!r}])\nexcept SystemExit:\n    pass"
        light = {"ansi2048", "ansi2048.cli", "ansi2048.options", "ansi2048.options.parser"}
        assert loaded_after(code) <= light | {"ansi2048.game", "ansi2048.game.limits"}


def find_circle(graph: Dict[str, Set[str]]) -> List[str]:
    """A circle of imports in ``graph`` (module -> the modules it imports), as
    the path around it; [] if there is none. Depth-first, colouring modules
    grey while on the path."""
    state: Dict[str, int] = {}  # 1: on the path, 2: done
    path: List[str] = []

    def visit(module: str) -> List[str]:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == 1:
                return [*path[path.index(imported) :], imported]
            if imported not in state:
                found = visit(imported)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return []

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return []


def test_the_circle_finder_finds_circles() -> None:
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    assert find_circle({"a": {"a"}}) == ["a", "a"]


def test_no_module_imports_itself_back_even_lazily() -> None:
    # Issue 16: config imported options' private checks while options
    # imported config back. Imports inside functions count: they are real.
    modules = all_modules()
    graph = {
        name: {imported for imported in imports if imported in modules and imported != name}
        for name, imports in modules.items()
    }
    assert find_circle(graph) == []


# Issue 24: a module says what it holds, and holds one role; past this many
# lines it holds several. No exceptions: every module of the package.
MOST_LINES = 450


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_the_size_rule() -> None:
    too_long = {
        path.relative_to(PACKAGE.parent).as_posix(): lines_of(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if lines_of(path) > MOST_LINES
    }
    assert too_long == {}


def test_the_size_rule_counts_lines(tmp_path: Path) -> None:
    sample = tmp_path / "long.py"
    sample.write_text("x = 1\n" * (MOST_LINES + 1), encoding="utf-8")
    assert lines_of(sample) == MOST_LINES + 1 > MOST_LINES


# Issue 35: serve/ from the bottom up. A module imports only from its own
# layer and those below it, type-only imports (TYPE_CHECKING) counted: an
# arrow is an arrow. The request path of a key climbs these layers and
# comes back down (docs/serving.md, "The request path"). A new module of
# serve/ is placed here, or this test says it is nowhere.
SERVE_LAYERS = (
    # 0. Foundations: pure rules and leaf shells that know nothing of a
    # session: names and sanitizing, limits and settings, the store, the
    # daily game's rules, what a channel carries (link), the log, the AI pool.
    (
        "ansi2048.serve",
        "accounting",
        "backup",
        "daily",
        "guard",
        "host_key",
        "kexguess",
        "limits",
        "link",
        "log",
        "moderation",
        "names",
        "pool",
        "relay",
        "replay_clock",
        "requests",
        "secrecy",
        "settings",
        "snapshot",
        "store",
        "takeover",
        "watch_list",
        "workers",
        "web",
        "web.link_page",
        "web.links",
        "web.protocol",
    ),
    # 1. The server's shared state: the live games, the saving pauses, the
    # races (race_hall, which verifies a racer's keys as keeping replays a
    # game's, and keeps the result; race_friends, its book of who waits for
    # whom; race_records lists them).
    # The server's numbers (metrics) read the pauses, the admission, the pool.
    # far_live mirrors the other servers' live games into this one's.
    # far_races finds the other servers' races (a player is relayed there: relay, relay_door).
    ("live", "pauses", "keeping", "metrics", "race_friends", "race_hall", "race_records", "far_live", "far_races"),
    # 2. The one context every handler is given.
    ("context",),
    # 3. The parts a command is made of: a game's driver (game) and its
    # parts (game_parts, saving), the daily game's rules (ranked_game) and
    # opening (ranked), a replay, a watcher, the verification, a race's replay.
    ("game", "game_parts", "ranked", "ranked_game", "replay", "saving", "verify", "watch", "race_replay"),
    # 4. The commands' entry points (each given the context and a Client).
    ("play_commands", "record_commands", "viewer_commands", "race_session", "web.link_commands"),
    # 5. The one table of commands.
    ("commands",),
    # 6. A channel (its limits as layers), 7. a connection.
    ("ssh_channel",),
    ("connection",),
    # 8. The browser door: its socket is a channel and connection.
    # --metrics's page is served as the door's is (web.site's Listener).
    # The relay's door (another server's player) is a channel and connection as the socket is.
    ("web.pages", "web.site", "web.socket", "metrics_page", "relay_door"),
    # 9. The server, which builds the context; 10. the command line.
    ("server",),
    ("cli",),
)


def serve_layer_of(module: str) -> int:
    short = module[len("ansi2048.serve.") :] if module != "ansi2048.serve" else module
    for level, members in enumerate(SERVE_LAYERS):
        if any(short == member or short.startswith(member + ".") for member in members if member != "web"):
            return level
        if short == "web" and "web" in members:
            return level
    raise AssertionError(f"{module} is in no layer of serve/: add it to SERVE_LAYERS")


def serve_graph() -> Dict[str, Set[str]]:
    modules = all_modules(type_only=True)
    serve = {name: imports for name, imports in modules.items() if name.startswith("ansi2048.serve")}
    return {
        name: {imported for imported in imports if imported in serve and imported not in (name, "ansi2048.serve")}
        for name, imports in serve.items()
    }


def test_serve_has_no_circle_even_through_type_only_imports() -> None:
    assert find_circle(serve_graph()) == []


def test_serve_imports_nothing_upward_even_type_only() -> None:
    for name, imports in sorted(serve_graph().items()):
        upward = sorted(imported for imported in imports if serve_layer_of(imported) > serve_layer_of(name))
        assert not upward, f"{name} (serve layer {serve_layer_of(name)}) imports upward: {upward}"


def test_the_serve_rules_see_type_only_imports() -> None:
    # A rule that cannot fail proves nothing: ranked's import of the context
    # is one an old TYPE_CHECKING back edge (to the server) would have hidden.
    sample = PACKAGE / "serve" / "web" / "pages.py"
    assert "ansi2048.serve.context" in imports_of(sample, type_only=True)
    assert "ansi2048.serve.context" not in imports_of(sample)
    assert serve_layer_of("ansi2048.serve.server") > serve_layer_of("ansi2048.serve.context")
    assert serve_layer_of("ansi2048.serve.store.sqlite") == 0


# Private imports across modules: what a module keeps to itself, nobody
# else uses. Left while their owners' branches land (the coordinator
# empties it at merge): module -> the private names it still imports.
PRIVATE_IMPORTS_ALLOWED: Dict[str, Set[str]] = {}


def private_imports(path: Path) -> Set[str]:
    """The private names (``_name``, not dunders) ``path`` imports from another module."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            found |= {
                alias.name for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")
            }
    return found


def test_no_module_imports_another_ones_private_names() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        private = private_imports(path)
        if private:
            found[module_name(path)] = private
    assert found == PRIVATE_IMPORTS_ALLOWED


def test_the_private_import_rule_sees_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from .board import Layout, _look\nfrom __future__ import annotations\n", encoding="utf-8")
    assert private_imports(sample) == {"_look"}


# A line each command of the table reads (the name alone, unless it takes an argument).
COMMAND_EXAMPLES = {"keys": "keys 12", "unlink": "unlink 1"}


def test_every_command_is_in_the_one_table_and_its_help() -> None:
    """Each request a client can make is made by a command of the table,
    and every command of it is named in ``help`` (issue 35)."""
    import typing

    import pytest

    pytest.importorskip("asyncssh", reason="the server's tests need ansi2048[serve]", exc_type=ImportError)
    from ansi2048.serve import requests
    from ansi2048.serve.commands import COMMANDS, help_text, read_command

    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    words = set(help_text(2048).replace("[", " ").split())
    assert [name for name in names if name not in words] == [], "a command help does not name"
    made = set()
    for name in names:
        command, request = read_command(COMMAND_EXAMPLES.get(name, name))
        assert command.name == name
        made.add(type(request))
    assert made == set(typing.get_args(requests.Request)), "a request no command of the table makes"


# LF becomes CR LF for a client's raw terminal in one place (serve/link.py's
# for_terminal).
CRLF_ALLOWED = {"ansi2048/serve/link.py"}


def test_serve_turns_lf_into_crlf_in_one_place() -> None:
    written = {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in sorted((PACKAGE / "serve").rglob("*.py"))
        if "\\r\\n" in path.read_text(encoding="utf-8")
    }
    assert written <= CRLF_ALLOWED
    assert "ansi2048/serve/link.py" in written  # the rule looks at the source as written
