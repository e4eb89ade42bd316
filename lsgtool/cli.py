"""The ``lsgtool`` command line: ``create_app(pm)`` builds the command tree from registered commands."""

from __future__ import annotations

import functools
import os
import re
import sys
import traceback
from contextvars import ContextVar
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from lsgtool.commands._common import AppState, print_error, route_warnings, stderr
from lsgtool.core.errors import ConfigError, LsgtoolError, UsageError

_debug: ContextVar[bool] = ContextVar("lsgtool_debug", default=False)
_invoked: ContextVar[Any] = ContextVar("lsgtool_invoked", default=None)  # the click context of the running command

# Large CPU tensors on transparent huge pages (PyTorch reads this at its first allocation; nothing above imports
# torch): a LOCOST-base layer at 1,076,905 tokens page-faulted 5.3M times in 74.3 s without, 48K times in 67.7 s
# with. A value the user set (0 turns it off) is kept.
HUGE_PAGES = "THP_MEM_ALLOC_ENABLE"
os.environ.setdefault(HUGE_PAGES, "1")

HELP = "Long-context transformers: LSG attention and LOCOST state-space encoders."
WIDE_HELP = 120  # columns from which a command's help is drawn as rich panels (convert's names fit from 115)


def _guard(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn lsgtool errors into an Error/Hint pair and an exit code; tracebacks only with --debug."""

    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except LsgtoolError as exc:
            _traceback()
            print_error(_from_config(exc, _invoked.get()))
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:
            _traceback()
            hint = None if _debug.get() else "run again with --debug to see the traceback."
            print_error(LsgtoolError(f"{type(exc).__name__}: {exc}", hint))
            raise typer.Exit(1) from None

    return guarded


def _traceback() -> None:
    """With --debug, the traceback of the error being handled (the exit code stays the error's own)."""
    if _debug.get():
        traceback.print_exc(file=sys.stderr)


def _config_origin(ctx, name: str) -> str | None:
    """`` (the value comes from the config file F: [command] name)`` when option ``name`` took its value from a
    config file (None: from the command line, the environment or its default)."""
    source = ctx.get_parameter_source(name)
    if source is None or source.name != "DEFAULT_MAP":
        return None
    state = ctx.find_root().obj
    files = ", ".join(map(str, state.settings.files)) if state is not None and state.settings else "?"
    return f" (the value comes from the config file {files}: [{ctx.info_name}] {name})"


def _from_config(exc: LsgtoolError, ctx) -> LsgtoolError:
    """A usage error naming an option whose value came from a config file says so, with the file and the key: the
    user typed no such flag (``length = "0%"`` in lsgtool.toml)."""
    if ctx is None or not isinstance(exc, UsageError):
        return exc
    for param in ctx.command.params:
        flags = [re.escape(opt) for opt in param.opts if opt.startswith("--")]
        origin = _config_origin(ctx, param.name) if param.name and flags else None
        if origin and re.search(rf"(?:{'|'.join(flags)})(?![\w-])", exc.message):
            exc.message = exc.message.rstrip(".") + origin + "."
            exc.args = (exc.message,)
    return exc


def _as_choice(ctx, option: str) -> str | None:
    """``--format html`` for an unknown ``--html`` where an option of the command takes ``html`` among its
    choices (the first such option); None where none does."""
    value = (option or "").lstrip("-").lower()
    for param in ctx.command.params if value else ():
        kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)  # typer 0.29's, else click's
        choices = [str(getattr(c, "value", c)) for c in kind] if isinstance(kind, type) and issubclass(kind, Enum) \
            else getattr(getattr(param, "type", None), "choices", None) or ()
        if param.opts and value in (str(c).lower() for c in choices):
            return f"{param.opts[0]} {value}"
    return None


def _click_error(exc: typer.TyperException) -> LsgtoolError:
    """A click parsing error (missing argument, unknown option or command, unparseable value) as Error/Hint.

    Typer vendors click, so its exception classes are not public API: they are told apart by the attributes
    click documents for them (``possibilities`` of an unknown option, ``param_type`` of a missing parameter)."""
    ctx = getattr(exc, "ctx", None)
    unknown_option = hasattr(exc, "possibilities")
    message = exc.message if unknown_option else exc.format_message().strip()  # possibilities go in the hint
    message = message[:1].lower() + message[1:]
    message = message.replace(": Value error, ", ": ")  # how pydantic, under typer, words a value a check refused
    param = getattr(exc, "param", None)
    if ctx is not None and param is not None and param.name is not None:
        message += _config_origin(ctx, param.name) or ""
    if not message.endswith((".", ")")):
        message += "."
    if ctx is None:
        return UsageError(message, "see `lsgtool --help`.")
    chosen = _as_choice(ctx, getattr(exc, "option_name", "")) if unknown_option else None
    if chosen:  # --html where --format html is meant
        hint = f"did you mean {chosen}? See `{ctx.command_path} --help`."
    elif unknown_option and exc.possibilities:
        hint = f"did you mean {' or '.join(sorted(exc.possibilities))}? See `{ctx.command_path} --help`."
    elif isinstance(ctx.command, TyperGroup) and "command" in message:
        hint = f"commands: {', '.join(ctx.command.list_commands(ctx))}."
        if os.environ.get("LSGTOOL_LOAD_PLUGINS") is not None:
            hint += (f" LSGTOOL_LOAD_PLUGINS={os.environ['LSGTOOL_LOAD_PLUGINS']!r} limits which plugins load; "
                     "unset it to load every installed plugin.")
    elif isinstance(exc, typer.BadParameter) and not hasattr(exc, "param_type") and param is not None:
        hint = f"see `{ctx.command_path} --help` for what {param.opts[0] if param.opts else param.name} takes."
    else:
        hint = f"usage: {ctx.get_usage().removeprefix('Usage: ')} (see `{ctx.command_path} --help`)."
    return UsageError(message.replace("\n", " "), hint)


def _no_value_placeholders(params: list) -> list:
    """On/off flags take no value: their help shows none (typer would show ``<bool>``)."""
    for param in params:
        if param.param_type_name == "option" and getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    return params


class LsgtoolCommand(TyperCommand):
    """A built-in or plugin command: its usage line names a required argument ``MODEL`` (click's convention),
    not typer's ``{MODEL}``; its on/off flags show no ``<bool>`` value placeholder in the help (they take no
    value). Public hooks only: the usage pieces click collects, each flag's ``metavar``."""

    def get_params(self, ctx) -> list:
        return _no_value_placeholders(super().get_params(ctx))

    def invoke(self, ctx):
        """Run the command with its context at hand for ``_guard`` (which names a config file's values)."""
        token = _invoked.set(ctx)
        try:
            return super().invoke(ctx)
        finally:
            _invoked.reset(token)

    def format_help(self, ctx, formatter) -> None:
        """Rich panels where there is room; below ``WIDE_HELP`` columns click's two-column layout, whose option
        names are never cut (rich's table gives names, types and help equal shares of a narrow terminal)."""
        import shutil

        if shutil.get_terminal_size().columns >= WIDE_HELP:  # what rich draws in (COLUMNS, else the terminal)
            return super().format_help(ctx, formatter)
        plain = ctx.make_formatter()
        super(TyperCommand, self).format_help(ctx, plain)  # click's own layout (the class after typer's)
        formatter.write(plain.getvalue().replace("\\[", "["))  # rich's markup escapes mean nothing here

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                pieces += param.get_usage_pieces(ctx)
                continue
            name = param.metavar or (param.name or "arg").upper()
            pieces.append((name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else ""))
        return pieces


class LsgtoolGroup(TyperGroup):
    """The root command: every click parsing error becomes the house Error/Hint pair (exit 2), and
    ``lsgtool`` alone prints the help and exits 0."""

    def get_params(self, ctx) -> list:
        return _no_value_placeholders(super().get_params(ctx))

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = sys.argv[1:] if args is None else list(args)
        completing = (complete_var or f"_{(prog_name or 'lsgtool').replace('-', '_').upper()}_COMPLETE") in os.environ
        if not standalone_mode or completing:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        if not argv:
            with self.make_context(prog_name or "lsgtool", ["--help"], resilient_parsing=True) as ctx:
                typer.echo(self.get_help(ctx))
            sys.exit(0)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except typer.TyperException as exc:  # click's parsing errors (typer's own base class)
            print_error(_click_error(exc))
            sys.exit(2)
        except typer.Abort:
            stderr().print("Aborted.")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _quiet_hf_bars() -> None:
    """transformers', the Hub's and datasets' tqdm bars ("Loading weights", "Writing model shards", "Map")
    would clutter stderr beside lsgtool's own progress, even under --json: off, unless the user set
    HF_HUB_DISABLE_PROGRESS_BARS. Their warnings stay."""
    if os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1") != "1":
        return
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # read when datasets is imported
    if "transformers.utils.logging" in sys.modules:  # imported already (read the variable at import)
        sys.modules["transformers.utils.logging"].disable_progress_bar()
    elif "huggingface_hub.utils" in sys.modules:
        sys.modules["huggingface_hub.utils"].disable_progress_bars()
    if "datasets.utils.logging" in sys.modules:
        sys.modules["datasets.utils.logging"].disable_progress_bar()


def _hide_torchao_notes() -> None:
    """Where torchao is installed, transformers imports it to load any model, and it says which of its GPU
    libraries did not load and torch that it registers enums as before: about neither lsgtool nor the model,
    so not shown (``precision.TorchaoImportNotes``)."""
    from lsgtool.core.precision import hide_torchao_notes

    hide_torchao_notes()


def _show_version(value: bool) -> None:
    if value:
        from lsgtool import __version__

        typer.echo(f"lsgtool {__version__}")
        raise typer.Exit()


def _check_settings(ctx: typer.Context, settings) -> None:
    """Every [command] table must name a command, every key one of its options."""
    group = ctx.command
    for name, options in settings.commands.items():
        command = group.get_command(ctx, name)
        if command is None:
            raise ConfigError(
                f"config file(s) {', '.join(map(str, settings.files))}: unknown command table [{name}].",
                f"commands: {', '.join(group.list_commands(ctx))}.",
            )
        aliases: dict[str, str] = {}  # TOML keys spelled like the options (global, json) or as the parameters
        for param in command.params:
            if param.name == "ctx":
                continue
            aliases[param.name] = param.name
            for opt in param.opts:
                if opt.startswith("--"):
                    aliases[opt[2:].replace("-", "_")] = param.name
        for key in options:
            if key not in aliases:
                spellings = sorted(opt[2:] for param in command.params for opt in param.opts if opt.startswith("--"))
                raise ConfigError(
                    f"config file(s) {', '.join(map(str, settings.files))}: [{name}] has unknown option {key!r}.",
                    f"options of `lsgtool {name}`: {', '.join(s for s in spellings if s != 'help')}.",
                )
        settings.commands[name] = {aliases[key]: value for key, value in options.items()}


def _root_callback(pm) -> Callable[..., None]:
    def root(
        ctx: typer.Context,
        version: Annotated[
            bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version and exit.")
        ] = False,
        debug: Annotated[
            bool, typer.Option("--debug", envvar="LSGTOOL_DEBUG", help="Show full tracebacks on errors.")
        ] = False,
        config: Annotated[
            Optional[Path],
            typer.Option("--config", envvar="LSGTOOL_CONFIG", help="Read option defaults from this TOML file."),
        ] = None,
    ) -> None:
        from lsgtool.settings import load_settings

        _debug.set(debug)
        _hide_torchao_notes()
        try:
            settings = load_settings(config)
            _check_settings(ctx, settings)
        except ConfigError as exc:
            _traceback()
            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        ctx.default_map = {**(ctx.default_map or {}), **settings.commands}
        ctx.obj = AppState(pm=pm, debug=debug, settings=settings)
        pm.activate()  # lsgtool.core reads this manager's selectors, SSM variants, adapters and presets
        _quiet_hf_bars()
        route_warnings()
        for failure in pm.failures:
            stderr().print(
                f"Warning: plugin {failure.name!r} ({failure.distribution}) failed to load and was skipped: "
                f"{failure.reason}",
                markup=False,
            )
        for problem in pm.problems:
            stderr().print(f"Warning: {problem}", markup=False)
        pm.announce = True  # problems found later (a registry collected on first use) are logged once, as warnings

    root.__doc__ = HELP
    return root


def create_app(pm=None) -> typer.Typer:
    """Build the Typer app for ``pm`` (default: a new manager with installed plugins)."""
    if pm is None:
        from lsgtool.plugins.manager import make_plugin_manager

        pm = make_plugin_manager()
    app = typer.Typer(
        name="lsgtool",
        help=HELP,
        cls=LsgtoolGroup,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root_callback(pm))
    for name, command in pm.registry("commands").items():
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name, cls=LsgtoolCommand)(_guard(command))
    return app


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        app = create_app()
    except LsgtoolError as exc:
        print_error(exc)
        sys.exit(1)
    try:
        app(args=argv, prog_name="lsgtool")
    except SystemExit as done:
        from lsgtool import distributed

        if distributed.running():  # one of several processes: its exit code, not gloo's abort in the teardown
            distributed.leave(done.code)
        raise
