"""Meta-tests: every hook is documented where declared, and exercised by a test."""

import inspect
from pathlib import Path

from lsgtool.plugins import hookspecs
from lsgtool.plugins.manager import make_plugin_manager
from lsgtool.plugins.registry import FAMILIES

HOOKS = [name for name, fn in vars(hookspecs).items() if name.startswith("register_") and callable(fn)]
ROOT = Path(__file__).resolve().parents[2]


def test_every_family_has_exactly_one_hook():
    assert sorted(HOOKS) == sorted(f.hook for f in FAMILIES.values())


def test_every_hook_is_documented_with_its_signature():
    docs = (ROOT / "docs" / "plugins.md").read_text()
    for name in HOOKS:
        fn = getattr(hookspecs, name)
        assert inspect.signature(fn).parameters.keys() == {"register"}
        assert "register(name, " in (fn.__doc__ or ""), name
        assert f"{name}(register)" in docs, f"{name} missing from docs/plugins.md"


def test_every_hook_is_exercised_by_a_test():
    sources = "".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_hookspecs.py")
    sources += "".join(p.read_text() for p in (ROOT / "plugins_contrib").rglob("*.py"))
    for name in HOOKS:
        assert f"def {name}(" in sources, f"no test implements {name}"


def test_builtin_manager_has_no_pending_hooks():
    make_plugin_manager(load_installed=False).check_pending()
