"""``lsgtool.core`` is a leaf library: it imports nothing above it (plugins, commands, the CLI, profiling), no
typer and no rich — read from every module's imports, and checked again by importing all of core."""

import ast
import subprocess
import sys
from pathlib import Path

import lsgtool

CORE = Path(lsgtool.__file__).parent / "core"
ABOVE = ("lsgtool.plugins", "lsgtool.commands", "lsgtool.cli", "lsgtool.profiling", "lsgtool.plugin_api", "typer",
         "rich", "click")


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside functions, relative imports resolved."""
    package = _module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
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


def _above(name: str) -> bool:
    return name == "lsgtool" or any(name == a or name.startswith(a + ".") for a in ABOVE)


def test_no_core_module_imports_a_layer_above_it():
    offenders = {str(path.relative_to(CORE.parent)): sorted(n for n in imported_modules(path) if _above(n))
                 for path in sorted(CORE.rglob("*.py"))}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_walk_sees_imports_inside_functions(tmp_path):
    sample = CORE / "lsg" / "config.py"
    assert "lsgtool.core.registry.get_registry" in imported_modules(sample)  # imported inside validate()


def test_importing_all_of_core_loads_nothing_above_it():
    modules = [_module_name(p) for p in sorted(CORE.rglob("*.py"))]
    script = ("import importlib, sys\n"
              f"for name in {modules!r}:\n    importlib.import_module(name)\n"
              f"print(sorted(m for m in sys.modules if any(m == a or m.startswith(a + '.') for a in {ABOVE!r})))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.stdout.strip() == "[]", done.stdout
