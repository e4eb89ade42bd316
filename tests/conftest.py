import os

import pytest

# before anything imports huggingface_hub, which reads it once: tests never reach for the network
os.environ["HF_HUB_OFFLINE"] = "1"

from lsgtool.core import registry  # noqa: E402
from lsgtool.plugins import manager  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path_factory):
    """Offline, no installed plugins unless a test opts in, no user config, core registries filled afresh."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(manager.ENV_LOAD_PLUGINS, "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    monkeypatch.delenv("LSGTOOL_CONFIG", raising=False)
    monkeypatch.delenv("LSGTOOL_DEBUG", raising=False)
    previous = registry.use(None)
    yield
    registry.use(previous)


@pytest.fixture
def install_plugin(tmp_path, monkeypatch):
    """Install a throw-away distribution whose ``lsgtool`` entry point is a module with the given source."""
    import textwrap

    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def install(dist: str, module: str, source: str, version: str = "1.0") -> None:
        (root / f"{module}.py").write_text(textwrap.dedent(source))
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"  # dist-info stems use _ for -
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[lsgtool]\n{dist} = {module}\n")

    return install


@pytest.fixture
def runner():
    from typer.testing import CliRunner

    return CliRunner()


@pytest.fixture
def tiny_folder(tmp_path):
    """A tiny BERT saved like a real checkpoint (config, safetensors, WordPiece tokenizer)."""
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(94)]
    # transformers 5 ignores vocab_file here (a 5-token vocabulary): the words are passed as a mapping
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)}, model_max_length=64)
    import transformers as T

    model = T.BertForMaskedLM(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=37, vocab_size=99, max_position_embeddings=64))
    folder = tmp_path / "tiny-bert"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


class Terminal:
    """Run ``python -m lsgtool ARGS`` on a pseudo-terminal (stdin, stdout and stderr are a tty), answering
    its questions: ``answers`` are (text to wait for, reply) pairs, in order."""

    def __init__(self, args, answers=(), cwd=None, env=None, timeout=180):
        import pty
        import select
        import subprocess
        import sys
        import time

        environment = {k: v for k, v in os.environ.items() if k != "CI"}  # a person, not CI
        environment.update({"NO_COLOR": "1", "COLUMNS": "160", "TERM": "xterm", **(env or {})})
        master, slave = pty.openpty()
        process = subprocess.Popen([sys.executable, "-m", "lsgtool", *args], stdin=slave, stdout=slave, stderr=slave,
                                   cwd=cwd, env=environment, close_fds=True)
        os.close(slave)
        output, seen, pending = b"", 0, list(answers)
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
                if pending and pending[0][0].encode() in output[seen:]:
                    seen = len(output)
                    os.write(master, (pending.pop(0)[1] + "\n").encode())
            elif process.poll() is not None:
                break
        else:
            process.kill()
        self.returncode = process.wait()
        os.close(master)
        self.output = output.decode(errors="replace").replace("\r\n", "\n")
        self.unanswered = [question for question, _ in pending]


@pytest.fixture
def terminal():
    return Terminal
