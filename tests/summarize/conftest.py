"""Tiny summarisers built here: a byte-level BPE tokenizer trained on the spot, BART converted to LSG, LOCOST,
plain T5 — saved like real checkpoints so the CLI loads them the way users' models load."""

import pytest
import torch
import transformers as T

CORPUS = ["The quick brown fox jumps over the lazy dog. A storm came over the hills at night, and the river rose.",
          "In the beginning God created the heaven and the earth. And the earth was without form, and void."] * 20


def tokenizer(folder, model_max_length=64):
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
    tok = tokenizer(root / "bart")
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
    tokenizer(root / "locost", model_max_length=10**30)
    t5 = T.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4,
                    pad_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    T.T5ForConditionalGeneration(t5).save_pretrained(root / "t5")
    tokenizer(root / "t5", model_max_length=64)
    return root


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
