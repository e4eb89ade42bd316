"""What a model name points at, found without loading weights: a preset, a local folder or file, a Hub id.

``resolve`` turns any of them into a ``Source``: a local path (Hub ids are snapshotted into the Hugging Face
cache first) and what kind of model the config describes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
CHECKPOINT_SUFFIXES = (".ckpt", ".pt", ".pth", ".bin")
LOCOST_KEYS = ("d_state", "num_ssm_heads", "bidirectional", "gating")
HUB_FILES = ["*.json", "*.txt", "*.model", "spiece*", "*.tiktoken"]


@dataclass(frozen=True)
class Source:
    """A model found on this machine.

    ``kind``: ``lsg`` (an LSG folder), ``locost`` (LOCOST: a folder or the authors' Lightning checkpoint) or
    ``transformers`` (any other Hugging Face model). ``layout`` says which form: ``lsgtool`` / ``lsg-authors``,
    ``locost`` / ``locost-authors`` (config without ``model_type``) / ``lightning``, ``transformers``.
    """

    name: str
    path: Path
    kind: str
    layout: str
    config: dict[str, Any]
    tokenizer: str | None
    preset: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.path if self.path.is_dir() else self.path.parent

    @property
    def has_weights(self) -> bool:
        """Whether weights lie where this source points (a preset without weights has none)."""
        if self.layout == "preset":
            return False
        return self.path.is_file() or has_weights(self.path)


def classify(config: dict[str, Any], where: str) -> tuple[str, str]:
    """(kind, layout) of a ``config.json``'s content."""
    from lsgtool.core.lsg.folder import MODEL_TYPE, is_lsg

    model_type = config.get("model_type") or None
    if model_type == "locost":
        return "locost", "locost"
    if model_type is None and sum(key in config for key in LOCOST_KEYS) >= 2:
        return "locost", "locost-authors"
    if is_lsg(config):
        return "lsg", "lsgtool" if model_type == MODEL_TYPE else "lsg-authors"
    if model_type is None:
        raise UsageError(f"{where} names no model_type and is not a LOCOST configuration (no {', '.join(LOCOST_KEYS)}).",
                         "pass a folder written by save_pretrained, `lsgtool convert` or the LOCOST authors' code.")
    return "transformers", "transformers"


def read_json(path: Path) -> dict[str, Any]:
    """A config file's content; a file that is not a JSON object is a usage error naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"'{path}' is not a valid JSON configuration: {exc}.", "fix or replace the file.") from None
    if not isinstance(data, dict):
        raise UsageError(f"'{path}' is not a JSON object of configuration keys.", "fix or replace the file.")
    return data


WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json", "*.ckpt", "*.pt", "*.pth")
# the files a tokenizer is read from: one of TOKENIZER_FILES makes a folder a tokenizer's; the extras shape it too
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "spiece.model",
                   "sentencepiece.bpe.model", "tokenizer.model")
TOKENIZER_EXTRAS = ("special_tokens_map.json", "added_tokens.json", "merges.txt")


def has_weights(folder: Path) -> bool:
    """Whether a model folder holds weights (safetensors, PyTorch or Lightning files, sharded or not)."""
    return any(any(folder.glob(pattern)) for pattern in WEIGHT_PATTERNS)


def _folder_source(name: str, folder: Path, weights_needed: bool = True) -> Source:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise UsageError(f"'{folder}' is not a model folder: it has no config.json (it holds {_holds(folder)}).",
                         "pass a folder written by save_pretrained or `lsgtool convert`, a Hub id or a preset name.")
    config = read_json(config_file)
    kind, layout = classify(config, str(config_file))
    if weights_needed and not has_weights(folder):
        raise UsageError(f"'{folder}' has a config.json but no weights (no model.safetensors or pytorch_model.bin; "
                         f"it holds {_holds(folder)}).",
                         "copy the weights into the folder (save_pretrained writes both), or pass another folder.")
    return Source(name, folder, kind, layout, config, str(folder))


def _holds(folder: Path) -> str:
    """The first names in a folder, for an error message."""
    return ", ".join(sorted(p.name for p in folder.iterdir())[:8]) or "nothing"


PROBE_SECONDS = 60.0  # a probe's answer holds this long: one probe per run, not one per file looked up
_probes: dict[tuple[str, int], tuple[float, str | None]] = {}


def hub_unreachable(timeout: float = 3.0) -> str | None:
    """None when the Hub's host answers a TCP connection within ``timeout`` s, else why not (one quick probe
    instead of huggingface_hub's five retries with back-off, ~30 s on a machine without network). The answer
    is reused for ``PROBE_SECONDS``: a run that looks up a model and then its tokenizer probes once."""
    import socket
    import time
    from urllib.parse import urlparse

    from huggingface_hub.constants import ENDPOINT

    url = urlparse(ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    known = _probes.get((host, port))
    if known is not None and time.monotonic() - known[0] < PROBE_SECONDS:
        return known[1]
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        answer = None
    except OSError as exc:
        answer = f"{host}: {exc.strerror or exc}"
    _probes[(host, port)] = (time.monotonic(), answer)
    return answer


def _checkpoint_source(name: str, file: Path, config: Any) -> Source:
    """A LOCOST Lightning checkpoint: its configuration comes from ``config`` or a config.json beside it."""
    if config is None and (file.parent / "config.json").is_file():
        config = file.parent / "config.json"
    if config is None:
        raise UsageError(f"'{file}' is a checkpoint file and carries no model configuration.",
                         "put the model's config.json beside it, or pass config= (CLI: --config-from FILE_OR_FOLDER).")
    if isinstance(config, (str, Path)):
        path = Path(config)
        config = read_json(path / "config.json" if path.is_dir() else path)
    elif not isinstance(config, dict):
        config = config.to_dict()
    return Source(name, file, "locost", "lightning", dict(config), str(file.parent))


def _offline() -> bool:
    import huggingface_hub.constants as hub

    return bool(hub.HF_HUB_OFFLINE) or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _cache_dir(cache_dir: str | None) -> str:
    from huggingface_hub.constants import HF_HUB_CACHE

    return str(cache_dir or HF_HUB_CACHE)


def snapshot(repo_id: str, revision: str | None = None, token: Any = None, cache_dir: str | None = None,
             local_files_only: bool = False) -> Path:
    """A local copy of a Hub model (config, weights, tokenizer files): from the cache offline, downloaded online."""
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    offline = _offline() or bool(local_files_only)
    cache = _cache_dir(cache_dir)
    unreachable = None if offline else hub_unreachable()
    if unreachable is not None:
        offline = True  # the cache may still hold it
    try:
        if offline:
            weights = ["*.safetensors", "*.bin", "*.ckpt"]
        else:
            files = HfApi().list_repo_files(repo_id, revision=revision, token=token)
            weights = ["*.safetensors"] if any(f.endswith(".safetensors") for f in files) else ["*.bin", "*.ckpt"]
        folder = snapshot_download(repo_id, revision=revision, token=token, cache_dir=cache_dir,
                                   allow_patterns=HUB_FILES + weights, local_files_only=offline)
    except LocalEntryNotFoundError:
        raise UsageError(
            f"model '{repo_id}' is not on this machine: not a local path, not in the Hugging Face cache ({cache})"
            + (f" and the Hub cannot be reached ({unreachable}): this machine looks offline." if unreachable
               else " and the Hub is switched off (HF_HUB_OFFLINE=1)." if offline else " and the Hub could not be reached."),
            f"fetch it once while online (`hf download {repo_id}`), or pass a local folder or a preset "
            "(`lsgtool plugins` lists them).") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise UsageError(f"the Hugging Face Hub has no model '{repo_id}' that this account may read.",
                         "check the name; private or gated models need `hf auth login` (or token=...).") from None
    except RevisionNotFoundError:
        raise UsageError(f"model '{repo_id}' has no revision {revision!r}.", "pass a branch, tag or commit that exists.") from None
    except (HfHubHTTPError, OSError) as exc:
        raise UsageError(f"cannot fetch '{repo_id}' from the Hugging Face Hub: {exc}".splitlines()[0],
                         "check the connection, or set HF_HUB_OFFLINE=1 to use the cache only.") from None
    return Path(folder)


def _looks_like_a_path(name: str) -> bool:
    return (name.startswith((".", "/", "~")) or name.endswith(CHECKPOINT_SUFFIXES) or name.count("/") > 1
            or os.sep != "/" and os.sep in name)


def resolve(name_or_path: str | os.PathLike, *, revision: str | None = None, token: Any = None,
            cache_dir: str | None = None, local_files_only: bool | None = None, config: Any = None,
            weights_needed: bool = True) -> Source:
    """Find a model: preset name, local folder or checkpoint file, or Hub id; raise a UsageError saying why not.

    ``weights_needed=False`` accepts a preset without weights (its config is used, e.g. for random weights).
    """
    from lsgtool.core.registry import get_registry

    name = str(name_or_path)
    path = Path(name).expanduser()
    presets = get_registry("presets")
    if name in presets and not path.exists():
        preset = presets[name]
        if preset.weights is None:
            if weights_needed:
                raise UsageError(f"preset {name!r} has no weights on this machine.",
                                 preset.hint or f"train it first; in Python, `lsgtool.load({name!r}, random_init=True)` "
                                                 "builds it with random weights.")
            return Source(name, Path("."), preset.kind, "preset", dict(preset.config), preset.tokenizer, name,
                          dict(preset.config))
        try:
            found = resolve(preset.weights, revision=revision, token=token, cache_dir=cache_dir,
                            local_files_only=local_files_only, config=config)
        except UsageError as exc:
            if weights_needed:
                raise UsageError(f"preset {name!r}: {exc.message}", preset.hint or exc.hint) from None
            return Source(name, Path("."), preset.kind, "preset", dict(preset.config), preset.tokenizer, name,
                          dict(preset.config))
        return replace(found, name=name, preset=name, tokenizer=preset.tokenizer or found.tokenizer,
                       overrides=dict(preset.config))
    if path.is_file():
        if path.name == "config.json":
            return _folder_source(name, path.parent, weights_needed)
        if not path.name.endswith(CHECKPOINT_SUFFIXES):
            raise UsageError(f"'{path}' is a file, not a model folder or a checkpoint ({', '.join(CHECKPOINT_SUFFIXES)}).",
                             "pass the folder that holds config.json and the weights.")
        return _checkpoint_source(name, path, config)
    if path.is_dir():
        return _folder_source(name, path, weights_needed)
    if _looks_like_a_path(name) or not HUB_ID.match(name):
        raise UsageError(f"no such file or folder: '{path}'.",
                         f"pass an existing model folder, a Hub id (org/name) or a preset: {', '.join(presets)}.")
    folder = snapshot(name, revision, token, cache_dir, bool(local_files_only))
    return replace(_folder_source(name, folder, weights_needed), name=name)
