"""The ``lsgtool`` command line: ``create_app(pm)`` builds the command tree from registered commands."""

from __future__ import annotations

import functools
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from lsgtool.commands._common import AppState, print_error, route_warnings, stderr
from lsgtool.core.errors import ConfigError, LsgtoolError

_debug: ContextVar[bool] = ContextVar("lsgtool_debug", default=False)

HELP = "Long-context transformers: LSG attention and LOCOST state-space encoders."


def _guard(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn lsgtool errors into an Error/Hint pair and an exit code; tracebacks only with --debug."""

    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except LsgtoolError as exc:
            if _debug.get():
                raise
            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except Exception as exc:
            if _debug.get():
                raise
            print_error(LsgtoolError(f"{type(exc).__name__}: {exc}", "run again with --debug to see the traceback."))
            raise typer.Exit(1) from None

    return guarded


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
        params = {param.name for param in command.params}
        for key in options:
            if key not in params:
                raise ConfigError(
                    f"config file(s) {', '.join(map(str, settings.files))}: [{name}] has unknown option {key!r}.",
                    f"options of `lsgtool {name}`: {', '.join(sorted(p for p in params if p != 'ctx'))}.",
                )


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
        try:
            settings = load_settings(config)
            _check_settings(ctx, settings)
        except ConfigError as exc:
            if debug:
                raise
            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        ctx.default_map = {**(ctx.default_map or {}), **settings.commands}
        ctx.obj = AppState(pm=pm, debug=debug, settings=settings)
        pm.activate()  # lsgtool.core reads this manager's selectors, SSM variants, adapters and presets
        route_warnings()
        for failure in pm.failures:
            stderr().print(
                f"Warning: plugin {failure.name!r} ({failure.distribution}) failed to load and was skipped: "
                f"{failure.reason}",
                markup=False,
            )

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
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root_callback(pm))
    for name, command in pm.registry("commands").items():
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name)(_guard(command))
    return app


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        app = create_app()
    except LsgtoolError as exc:
        print_error(exc)
        sys.exit(1)
    app(args=argv, prog_name="lsgtool")
