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

# The functional core: computes, never touches the outside world.
PURE = {
    "ansi2048",
    "ansi2048.limits",
    "ansi2048.engine",
    "ansi2048.keys",
    "ansi2048.session",
    "ansi2048.events",
    "ansi2048.state",
    "ansi2048.turns",
    "ansi2048.loop",
    "ansi2048.protocol",
    "ansi2048.recording",
    "ansi2048.cast",
    "ansi2048.records",
    "ansi2048.render",
    "ansi2048.render.style",
    "ansi2048.render.color",
    "ansi2048.render.motion",
    "ansi2048.render.palette",
    "ansi2048.render.themes",
    "ansi2048.render.frame",
    "ansi2048.render.board",
    "ansi2048.render.repaint",
    "ansi2048.render.codes",
    "ansi2048.render.lines",
    "ansi2048.render.keymap",
    "ansi2048.render.help",
    "ansi2048.render.stats",
}

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


def imports_of(path: Path) -> Set[str]:
    """Every module ``path`` imports, relative imports resolved, including
    those inside functions and under TYPE_CHECKING (which are then skipped)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only |= {id(child) for child in ast.walk(node)}
    found: Set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
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


def all_modules() -> Dict[str, Set[str]]:
    return {module_name(path): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_core_imports_nothing_of_the_outside_world() -> None:
    modules = all_modules()
    assert set(modules) >= PURE, "a module of the core was renamed: update PURE"
    for name in sorted(PURE):
        outside = {imported.split(".")[0] for imported in modules[name]} & FORBIDDEN
        assert not outside, f"{name} imports {sorted(outside)}"


def test_the_core_imports_only_the_core() -> None:
    modules = all_modules()
    for name in sorted(PURE):
        own = {imported for imported in modules[name] if imported.startswith("ansi2048") and imported in modules}
        assert own <= PURE, f"{name} imports shell modules {sorted(own - PURE)}"


def test_the_rule_sees_imports_inside_functions(tmp_path: Path) -> None:
    # The check itself must not be blind to a lazy import.
    sample = PACKAGE / "render" / "frame.py"
    assert "ansi2048.session" in imports_of(sample)
    assert "os" in imports_of(PACKAGE / "storage.py")


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
    assert "ansi2048.engine" in loaded_after("from ansi2048 import Game")


def test_version_and_help_load_nothing_of_the_game() -> None:
    for option in ("--version", "--help"):
        code = f"from ansi2048.cli import main\ntry:\n    main([{option!r}])\nexcept SystemExit:\n    pass"
        assert loaded_after(code) <= {"ansi2048", "ansi2048.cli", "ansi2048.options", "ansi2048.limits"}


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
