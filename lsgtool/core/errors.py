"""Error types raised by lsgtool: each carries a one-line message and a hint for the next step."""

from __future__ import annotations


class LsgtoolError(Exception):
    """Base error: `message` says what went wrong, `hint` one concrete next step."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(LsgtoolError, ValueError):
    """The user asked for something invalid (bad option, unknown name, bad file): exit code 2."""

    exit_code = 2


class ConfigError(UsageError):
    """A configuration file or configuration object breaks a rule."""


class PluginError(LsgtoolError):
    """Plugins disagree (a name registered twice) or registered something malformed."""


class Interrupted(LsgtoolError):
    """Ctrl-C: the message says what was kept and the hint how to go on; exit code 130 as for SIGINT."""

    exit_code = 130
