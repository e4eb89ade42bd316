"""Built-in CLI commands, registered through the same ``register_commands`` hook plugins use.

Importing this package stays light (no typer, no rich): library code registers the built-in plugins too.
"""

from lsgtool.plugins.hookspecs import hookimpl


@hookimpl
def register_commands(register):
    from lsgtool.commands.convert import convert_command
    from lsgtool.commands.finetune import finetune_command
    from lsgtool.commands.inspect_kernels import inspect_kernels_command
    from lsgtool.commands.plugins import plugins_command
    from lsgtool.commands.profile import profile_command
    from lsgtool.commands.summarize import summarize_command

    register("convert", convert_command)
    register("profile", profile_command)
    register("summarize", summarize_command)
    register("finetune", finetune_command)
    register("inspect-kernels", inspect_kernels_command)
    register("plugins", plugins_command)


def __getattr__(name: str):
    if name in ("AppState", "state"):  # the old home of these names; plugins import them from lsgtool.plugin_api
        from lsgtool.commands import _common

        return getattr(_common, name)
    raise AttributeError(f"module 'lsgtool.commands' has no attribute {name!r}")
