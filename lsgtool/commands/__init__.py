"""Built-in CLI commands, registered through the same ``register_commands`` hook plugins use.

Importing this package stays light (no typer, no rich): library code registers the built-in plugins too.
"""

from lsgtool.plugins.hookspecs import hookimpl


@hookimpl
def register_commands(register):
    from lsgtool.commands.convert import convert_command
    from lsgtool.commands.plugins import plugins_command
    from lsgtool.commands.profile import profile_command

    register("convert", convert_command)
    register("profile", profile_command)
    register("plugins", plugins_command)
