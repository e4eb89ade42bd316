import subprocess
import sys

import pytest
import typer

from lsgtool.cli import create_app
from lsgtool.core.errors import UsageError
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager


class _Failing:
    """Commands that fail the ways real commands can."""

    @hookimpl
    def register_commands(self, register):
        def pick(ctx: typer.Context, block: int = 128, sparse: str = "norm"):
            """Echo a validated block size and selector."""
            from lsgtool.core.registry import get_registry

            if block < 1:
                raise UsageError(f"--block must be positive, got {block}.", "pass e.g. --block 128.")
            get_registry("sparse_selectors").require(sparse)
            print(f"block={block} sparse={sparse}")

        def crash():
            """Fail at run time."""
            raise RuntimeError("disk on fire")

        def greet(name: str):
            """Greet NAME (a required argument)."""
            print(f"hello {name}")

        register("pick", pick)
        register("crash", crash)
        register("greet", greet)


@pytest.fixture
def app():
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Failing(), name="test-commands")
    return create_app(pm)


def test_version(app, runner):
    from lsgtool import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"lsgtool {__version__}"


def test_help_for_every_command(app, runner):
    names = sorted(typer.main.get_command(app).commands)  # every command the app has, built-in or plugin
    assert {"convert", "profile", "plugins", "pick", "crash"} <= set(names)
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in names:
        assert name in result.stdout
        sub = runner.invoke(app, [name, "--help"])
        assert sub.exit_code == 0 and f"Usage: lsgtool {name}" in " ".join(sub.stdout.split()), name


def test_user_mistake_is_one_error_line_and_exit_2(app, runner):
    result = runner.invoke(app, ["pick", "--sparse", "topk"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[0] == "Error: unknown sparse selector 'topk'."
    assert lines[1].startswith("Hint: available: block_stride, bos_pooling, lsh, none, norm, pooling, stride")
    assert "Traceback" not in result.stderr


def test_runtime_failure_exits_1_and_debug_shows_traceback(app, runner):
    result = runner.invoke(app, ["crash"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: RuntimeError: disk on fire")
    assert "--debug" in result.stderr
    for debug in (runner.invoke(app, ["--debug", "crash"]), runner.invoke(app, ["crash"], env={"LSGTOOL_DEBUG": "1"})):
        assert debug.exit_code == 1
        assert "Traceback (most recent call last)" in debug.stderr and 'raise RuntimeError("disk on fire")' in debug.stderr
        assert debug.stderr.rstrip().endswith("Error: RuntimeError: disk on fire")


def test_debug_keeps_the_exit_code_of_a_usage_error(app, runner):
    result = runner.invoke(app, ["--debug", "pick", "--block", "0"])
    assert result.exit_code == 2 and "Traceback" in result.stderr and "Error: --block must be positive" in result.stderr


def test_no_command_prints_help_and_exits_0(app, runner):
    result = runner.invoke(app, [])
    assert result.exit_code == 0 and "Usage: lsgtool" in result.stdout and "convert" in result.stdout


@pytest.mark.parametrize("args, error, hint", [
    (["convert"], "Error: missing argument 'MODEL'.", "Hint: usage: lsgtool convert [OPTIONS] MODEL"),
    (["pick", "--blok", "3"], "Error: no such option: --blok.", "Hint: did you mean --block?"),
    # a value of a choice typed as a flag of its own
    (["summarize", "doc.txt", "--html"], "Error: no such option: --html.",
     "Hint: did you mean --format html?"),
    (["summarize", "doc.txt", "--JSONL"], "Error: no such option: --JSONL.",
     "Hint: did you mean --format jsonl?"),
    (["pick", "--block", "abc"], "Error: invalid value for '--block'", "Hint: see `lsgtool pick --help` for what --block"),
    (["picky"], "Error: no such command 'picky'.", "Hint: commands: convert, crash, finetune, greet, inspect-kernels, pick, plugins, profile"),
])
def test_parsing_mistakes_get_the_house_error_lines(app, runner, args, error, hint):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(error) and lines[1].startswith(hint), result.stderr
    assert "╭" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["convert", "finetune", "inspect-kernels", "profile", "summarize"])
def test_every_out_option_is_also_o(app, command):
    out = [p for p in typer.main.get_command(app).commands[command].params if p.name == "out"]
    assert len(out) == 1 and set(out[0].opts) == {"--out", "-o"}


def test_unknown_command_names_the_plugin_variable_when_it_is_set(app, runner, monkeypatch):
    monkeypatch.setenv("LSGTOOL_LOAD_PLUGINS", "nosuchplugin")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2 and "LSGTOOL_LOAD_PLUGINS='nosuchplugin'" in result.stderr


def test_help_shows_plain_argument_names_and_no_bool_placeholder(app, runner):
    result = runner.invoke(app, ["convert", "--help"], env={"COLUMNS": "200"})
    # MODEL may be left out (it is asked for on a terminal); summarize's inputs are a list
    assert "lsgtool convert [OPTIONS] [MODEL]" in result.stdout and "{" not in result.stdout
    assert "lsgtool summarize [OPTIONS] [INPUT]..." in runner.invoke(app, ["summarize", "--help"]).stdout
    assert "lsgtool greet [OPTIONS] NAME" in runner.invoke(app, ["greet", "--help"]).stdout  # required: bare
    missing = runner.invoke(app, ["greet"])
    assert missing.exit_code == 2 and "Hint: usage: lsgtool greet [OPTIONS] NAME" in missing.stderr
    assert "<bool>" not in result.stdout and "--overwrite" in result.stdout


def test_plugin_selector_is_accepted_where_selectors_are(app, runner):
    assert runner.invoke(app, ["pick", "--sparse", "lsh"]).stdout == "block=128 sparse=lsh\n"


def test_python_dash_m_and_console_script():
    result = subprocess.run(
        [sys.executable, "-m", "lsgtool", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.startswith("lsgtool ")


def test_shell_completion_completes_commands_and_options():
    import os

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_LSGTOOL_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
        done = subprocess.run([sys.executable, "-m", "lsgtool"], env=env, capture_output=True, text=True, check=False)
        return done.stdout.split()

    assert "convert" in complete("lsgtool con") and "profile" not in complete("lsgtool con")
    assert "--max-length" in complete("lsgtool convert --max")


@pytest.mark.parametrize("columns", ["80", "120", "200"])
@pytest.mark.parametrize("command", ["convert", "profile", "inspect-kernels", "summarize", "finetune", "plugins"])
def test_every_option_name_is_whole_in_the_help_at_80_columns(runner, command, columns):
    """Issue 21, item 17: rich's option table, squeezed into 80 columns, cut --no-repeat-ngram-size and
    --pass-global-to-decoder; below 120 columns the help is click's two-column layout, rich's panels above."""
    import re

    app = create_app(make_plugin_manager(load_installed=False))
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    assert ("╭" in result.output) == (int(columns) >= 120)  # rich panels only where they fit
    names = {opt for param in typer.main.get_command(app).get_command(None, command).params
             for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}
    cut = sorted(name for name in names if not re.search(re.escape(name) + r"(?![\w-]|…)", result.output))
    assert not cut, f"cut at 80 columns: {cut}"


def test_the_narrow_help_keeps_what_the_wide_one_says(runner):
    app = create_app(make_plugin_manager(load_installed=False))
    for columns in ("80", "200"):
        result = runner.invoke(app, ["profile", "--help"], env={"COLUMNS": columns})
        text = " ".join(result.output.split())
        assert "pip install 'lsgtool[plot]'" in text and "\\[" not in text and "<bool>" not in text, columns
        assert "Usage: lsgtool profile [OPTIONS]" in text


def test_the_command_puts_large_cpu_tensors_on_huge_pages_unless_the_user_says_not():
    """``lsgtool.cli`` sets PyTorch's THP_MEM_ALLOC_ENABLE before torch loads (a 1M-token LOCOST layer page-faulted
    100x less with it); a value the user set is kept."""
    import os
    from pathlib import Path

    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not mode.exists() or "[never]" in mode.read_text():
        pytest.skip("transparent huge pages are off on this machine")
    probe = ("import sys, lsgtool.cli; assert 'torch' not in sys.modules; import torch; x = torch.ones(1 << 25); "
             "print(next(int(line.split()[1]) for line in open('/proc/self/smaps_rollup') "
             "if line.startswith('AnonHugePages')))")  # kB of huge pages, after 128 MB of ones

    def huge_kb(**env: str) -> int:
        base = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
        done = subprocess.run([sys.executable, "-c", probe], env={**base, **env}, capture_output=True, text=True,
                              check=True)
        return int(done.stdout)

    assert huge_kb() >= 100 * 1024
    if "[madvise]" in mode.read_text():
        assert huge_kb(THP_MEM_ALLOC_ENABLE="0") < 100 * 1024
