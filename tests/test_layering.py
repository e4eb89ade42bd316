"""Dependencies point down, read from every module's imports (at the top and inside functions, relative imports
resolved) with the AST, not the text:

- ``lsgtool.core`` imports nothing of lsgtool outside core, no typer and no rich, and its packages form no
  import cycle;
- the app layers (summarize, finetune, inspection, profiling, documents, ...) import no command and not the CLI;
- a command imports no other command, and stays thin: options, one call, render.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import lsgtool

PACKAGE = Path(lsgtool.__file__).parent
CORE = PACKAGE / "core"
APP_LAYERS = ("summarize", "finetune", "inspection", "profiling", "conversion", "documents", "settings", "plots",
              "progress", "distributed")
COMMAND_HELPERS = ("__init__", "_common", "_progress", "_prompt", "_guided", "_batch_report")
COMMAND_MODULE_LINES, COMMAND_BODY_LINES = 200, 25


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside functions, relative imports resolved."""
    package = module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return names


def _within(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_the_walk_sees_imports_inside_functions():
    assert "lsgtool.core.registry.get_registry" in imported_modules(CORE / "lsg" / "config.py")  # inside validate()


def test_core_imports_nothing_above_it():
    offenders = {}
    for path in _modules(CORE):
        bad = sorted(n for n in imported_modules(path)
                     if (_within(n, "lsgtool") and not _within(n, "lsgtool.core")) or _within(n, "typer", "rich", "click"))
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = bad
    assert offenders == {}


def core_package_graph() -> dict[str, set[str]]:
    """Which package of core (``lsgtool.core.load``, ``lsgtool.core.registry``, ...) imports which."""
    def package_of(name: str) -> str:
        return ".".join(name.split(".")[:3])

    known = {module_name(p) for p in _modules(CORE)}
    graph: dict[str, set[str]] = {}
    for path in _modules(CORE):
        mine = package_of(module_name(path))
        for name in imported_modules(path):
            while name not in known and "." in name:  # lsgtool.core.load.load -> the module lsgtool.core.load
                name = name.rsplit(".", 1)[0]
            if name in known and name != "lsgtool.core" and package_of(name) != mine:
                graph.setdefault(mine, set()).add(package_of(name))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_through_three_packages():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


def test_core_packages_import_each_other_without_cycles():
    assert cycles(core_package_graph()) == []


@pytest.mark.parametrize("layer", APP_LAYERS)
def test_app_layers_import_no_command_and_not_the_cli(layer):
    paths = _modules(PACKAGE / layer) if (PACKAGE / layer).is_dir() else [PACKAGE / f"{layer}.py"]
    offenders = {str(p.relative_to(PACKAGE)): sorted(n for n in imported_modules(p)
                                                      if _within(n, "lsgtool.commands", "lsgtool.cli", "typer"))
                 for p in paths}
    assert {k: v for k, v in offenders.items() if v} == {}


def _command_modules() -> list[Path]:
    return [p for p in sorted((PACKAGE / "commands").glob("*.py")) if p.stem not in COMMAND_HELPERS]


def test_a_command_imports_no_other_command():
    others = {f"lsgtool.commands.{p.stem}" for p in _command_modules()}
    offenders = {p.stem: sorted(n for n in imported_modules(p) if _within(n, *(others - {module_name(p)})))
                 for p in _command_modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize("path", _command_modules(), ids=lambda p: p.stem)
def test_a_command_is_options_one_call_and_rendering(path):
    lines = path.read_text().count("\n")
    assert lines <= COMMAND_MODULE_LINES, f"{path.name}: {lines} lines"
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_command"):
            first = node.body[1] if ast.get_docstring(node) else node.body[0]
            body = node.end_lineno - first.lineno + 1
            assert body <= COMMAND_BODY_LINES, f"{node.name}: a body of {body} lines"


def test_importing_all_of_core_loads_nothing_above_it():
    modules = [module_name(p) for p in _modules(CORE)]
    script = ("import importlib, sys\n"
              f"for name in {modules!r}:\n    importlib.import_module(name)\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click') or "
              "(m.startswith('lsgtool.') and not m.startswith('lsgtool.core') and m != 'lsgtool._autoregister')))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]", done.stdout


def test_the_cli_uses_public_typer_and_click_api_only():
    private = {str(p.relative_to(PACKAGE)): sorted(n for n in imported_modules(p)
                                                    if any(part.startswith("_") for part in n.split(".")[1:2])
                                                    and _within(n.split(".")[0], "typer", "click"))
               for p in _modules(PACKAGE)}
    assert {k: v for k, v in private.items() if v} == {}
    cli = [PACKAGE / "cli.py", *_modules(PACKAGE / "commands")]
    swapped = [str(p.relative_to(PACKAGE)) for p in cli
               if any(isinstance(node, ast.Attribute) and node.attr == "__class__" and isinstance(node.ctx, ast.Store)
                      for node in ast.walk(ast.parse(p.read_text())))]
    assert swapped == []  # no click parameter changes its class at run time
