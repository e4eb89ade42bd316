"""Defaults for command options read from TOML files.

Looked up, lowest priority first: the user file (``$XDG_CONFIG_HOME/lsgtool/config.toml``, else
``~/.config/lsgtool/config.toml``), then ``./lsgtool.toml``; ``--config PATH`` (or ``LSGTOOL_CONFIG``)
replaces both. Command-line flags always win. One table per command, keys spelled like the options::

    [convert]
    block = 64
    sparse = "lsh"
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsgtool.core.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

PROJECT_FILE = "lsgtool.toml"
ENV_CONFIG = "LSGTOOL_CONFIG"


@dataclass
class Settings:
    """Per-command option defaults (option names in snake_case) and the files they came from."""

    commands: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "lsgtool" / "config.toml"


def candidate_files(explicit: Path | None = None, cwd: Path | None = None) -> list[Path]:
    """Config files in increasing priority; an explicit path must exist."""
    explicit = explicit or (Path(os.environ[ENV_CONFIG]) if os.environ.get(ENV_CONFIG) else None)
    if explicit is not None:
        if explicit.is_dir():
            raise ConfigError(f"--config {explicit} is a folder, not a TOML file.",
                              "pass a TOML file, e.g. --config lsgtool.toml.")
        if not explicit.is_file():
            raise ConfigError(f"config file '{explicit}' does not exist.", "pass an existing TOML file to --config.")
        return [explicit]
    found = [user_config_path(), (cwd or Path.cwd()) / PROJECT_FILE]
    return [path for path in found if path.is_file()]


def read_file(path: Path) -> dict[str, dict[str, Any]]:
    """Parse one file into {command: {option: value}}; malformed files raise ConfigError with the line."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file '{path}' is not valid TOML: {exc}.", "fix the line named above or move the file away."
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file '{path}' cannot be read: {exc}.",
                          "check the file's permissions and encoding (UTF-8), or move it away.") from exc
    commands: dict[str, dict[str, Any]] = {}
    for command, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(
                f"config file '{path}': top-level key {command!r} must be a table like [{command}].",
                "put option defaults under a [command] table, e.g. [convert] block = 64.",
            )
        commands[command] = {key.replace("-", "_"): value for key, value in table.items()}
    return commands


def load_settings(explicit: Path | None = None, cwd: Path | None = None) -> Settings:
    settings = Settings()
    for path in candidate_files(explicit, cwd):
        for command, options in read_file(path).items():
            settings.commands.setdefault(command, {}).update(options)
        settings.files.append(path)
    return settings
