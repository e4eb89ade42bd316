import os
import signal

import pytest

# before anything imports huggingface_hub, which reads it once: tests never reach for the network
os.environ["HF_HUB_OFFLINE"] = "1"
# a suite started in the background of a non-interactive shell (`pytest &`) inherits SIGINT ignored, and so would the
# commands it starts (an ignored signal stays ignored across exec): the Ctrl-C tests need Ctrl-C to do something
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import torch  # noqa: E402
import transformers as T  # noqa: E402

from lsgtool.core import registry  # noqa: E402
from lsgtool.plugins import manager  # noqa: E402


@pytest.fixture(scope="session")
def _cache_home(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path_factory, _cache_home):
    """Offline, no installed plugins unless a test opts in, no user config, lsgtool's cache (hashes, decoding
    paths) in a folder of this session's, core registries filled afresh."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(_cache_home))
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


# Tiny summarisers built here: a byte-level BPE tokenizer trained on the spot, BART converted to LSG, LOCOST,
# plain T5 — saved like real checkpoints so the CLI loads them the way users' models load.
CORPUS = ["The quick brown fox jumps over the lazy dog. A storm came over the hills at night, and the river rose.",
          "In the beginning God created the heaven and the earth. And the earth was without form, and void."] * 20


def bpe_tokenizer(folder, model_max_length=64):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                     unk_token="<unk>", mask_token="<mask>", model_max_length=model_max_length)
    fast.save_pretrained(folder)
    return fast


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Folders of tiny summarisers: ``bart-lsg`` (256 positions, block 16), ``locost`` (any length), ``t5`` (its
    tokenizer says 64 tokens), ``bart`` (64 positions), and ``minilm-like`` (a BERT encoder for extractive)."""
    import lsgtool

    root = tmp_path_factory.mktemp("summarisers")
    tok = bpe_tokenizer(root / "bart")
    torch.manual_seed(0)
    bart = T.BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
                        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)
    T.BartForConditionalGeneration(bart).save_pretrained(root / "bart")
    model, tok_lsg = lsgtool.convert(str(root / "bart"), max_length=256, block_size=16, sparsity_factor=4)
    lsgtool.save(model, tok_lsg, root / "bart-lsg")
    locost = lsgtool.LocostConfig(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2,
                                  num_heads=4, d_state=8, pad_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    lsgtool.LocostForConditionalGeneration(locost).save_pretrained(root / "locost")
    bpe_tokenizer(root / "locost", model_max_length=10**30)
    t5 = T.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4,
                    pad_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    T.T5ForConditionalGeneration(t5).save_pretrained(root / "t5")
    bpe_tokenizer(root / "t5", model_max_length=64)
    return root


@pytest.fixture
def docs(tmp_path, text):
    """``docs(n)``: a folder ``docs`` of ``n`` small text files (doc0.txt, ...) of growing length."""
    def make(n: int = 2):
        folder = tmp_path / "docs"
        folder.mkdir()
        for i in range(n):
            (folder / f"doc{i}.txt").write_text(text(1 + i))
        return folder

    return make


@pytest.fixture
def text():
    return paragraphs


@pytest.fixture
def app():
    from lsgtool.cli import create_app
    from lsgtool.plugins.manager import make_plugin_manager

    return create_app(make_plugin_manager(load_installed=False))


def paragraphs(n: int, sentences: int = 4) -> str:
    """``n`` paragraphs of ``sentences`` distinct sentences each."""
    words = "fox dog storm river hill night light water earth heaven form void deep face".split()
    out = []
    for p in range(n):
        out.append(" ".join(f"The {words[(p + s) % len(words)]} number {p * sentences + s} moved over the "
                            f"{words[(p * 3 + s) % len(words)]}." for s in range(sentences)))
    return "\n\n".join(out)


@pytest.fixture
def bible_epub():
    """``bible_epub(verse)``: the bytes of an EPUB as pandoc makes a Bible — a book per spine item (Jeremiah,
    Lamentations), a ``<h2>Chapter c</h2>`` per chapter (3) and a paragraph ``verse(name, c, v)`` per verse (4)."""
    epub = pytest.importorskip("ebooklib.epub")
    import io

    def make(verse) -> bytes:
        book, items = epub.EpubBook(), []
        book.set_identifier("bible")
        book.set_title("Bible")
        for name in ("Jeremiah", "Lamentations"):
            body = f"<h1>{name}</h1>" + "".join(f"<h2>Chapter {c}</h2>" + "".join(
                f"<p>{verse(name, c, v)}</p>" for v in range(1, 5)) for c in range(1, 4))
            item = epub.EpubHtml(title=name, file_name=f"{name}.xhtml", content=f"<html><body>{body}</body></html>")
            book.add_item(item)
            items.append(item)
        book.toc, book.spine = items, items
        book.add_item(epub.EpubNcx())
        data = io.BytesIO()
        epub.write_epub(data, book)
        return data.getvalue()

    return make


@pytest.fixture
def ctrl_c():
    """Press Ctrl-C: a real SIGINT to this thread, its handler run before the call returns. ``signal.raise_signal``
    only marks it pending; the interpreter runs the handler at its next check (a loop's backward jump), which a call
    into C right after it (``dict.update``) may come before: the handler's KeyboardInterrupt then came a step late."""
    import signal

    def press() -> None:
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # each backward jump checks for a pending signal
            pass

    return press
