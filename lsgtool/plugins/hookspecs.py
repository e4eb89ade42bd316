"""Every hook a plugin can implement (pluggy project name ``lsgtool``).

Each hook receives one argument, ``register``, a callback ``register(name, obj)``. Call it once for
every thing the plugin adds. Names are lowercase (``[a-z][a-z0-9_]*``; commands may use ``-``), unique
across all plugins: registering a name another plugin already registered is an error naming both.
A registration refused (bad name, wrong type, name taken) is skipped, and a hook that raises has everything it
registered skipped, each with one warning naming the plugin; the rest keeps working.
Built-in functionality registers through these same hooks (see ``lsgtool.plugins.builtins``).
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("lsgtool")
hookimpl = pluggy.HookimplMarker("lsgtool")


@hookspec
def register_sparse_selectors(register):
    """Add LSG sparse selectors, usable as ``sparsity_type`` everywhere (configs, ``convert --sparse``).

    ``register(name, selector)`` where ``selector(inputs: lsgtool.SparseInputs) -> lsgtool.SparseTokens``.

    ``inputs`` carries, for the non-global part of the sequence padded to a multiple of the block size
    ``S``: ``query``, ``key``, ``value`` of shape (B, H, n, D); ``mask`` (B, n) bool, True = real token;
    ``first_query`` (B, H, 1, D), the query of the first position of the whole sequence (the first
    global token when there is one); ``config`` (an ``LSGConfig``); ``scale`` (the softmax scale);
    ``generator`` (a seeded ``torch.Generator`` when the config asks for reproducible randomness, else
    None). The selector returns ``SparseTokens(key, value, mask)`` with ``key``/``value`` of shape
    (B, H, n // f, D) and ``mask`` broadcastable to (B, H, n // f), True = usable, where
    ``f = config.sparsity_factor``. Reduced token ``r`` must summarise original tokens of the block
    ``r // (S // f)`` only: LSG picks, for each query block, the ``sparse_block_size`` reduced tokens
    just outside its local window on each side, so a selector that looks elsewhere breaks the
    no-overlap rule (and, for causal attention, lets a query see the future). Each head may select
    different tokens. Must be differentiable in ``key`` and ``value`` where it computes with them.
    """


@hookspec
def register_architectures(register):
    """Add conversion adapters: how to find the attention modules, embeddings and positions of a model type.

    ``register(name, adapter)`` where ``name`` is the Hugging Face ``model_type`` the adapter handles,
    with ``-`` written ``_`` (``"xlm_roberta"``), and ``adapter`` is an ``lsgtool.ArchitectureAdapter``
    naming, relative to ``model.base_model``: the encoder whose self-attention becomes LSG, the module
    running its layer stack, where the global tokens are prepended and which module owns their table,
    the position tables to extend, the word/token-type embeddings used to initialise them, the patterns
    of the self-attention (and, for encoder-decoders, cross-attention) modules that call transformers'
    attention interface (empty: found by running the model once), and how inputs are padded to whole
    blocks (``"hidden"`` or ``"tokens"``). A registered adapter wins over automatic detection, which
    covers encoders with absolute positions that transformers marks as using the attention interface.
    """


@hookspec
def register_ssm_variants(register):
    """Add state-space kernel variants for LOCOST encoders (kernel parametrisation and initialisation).

    ``register(name, variant)`` where ``variant(H, N, channels=2, dt_min=..., dt_max=...)`` builds an
    ``nn.Module`` whose ``forward(L, channels=slice(None))`` returns the real convolution kernels of shape
    (channels, len(range(H)[channels]), L): channel 0 is the causal kernel, channel 1 (bidirectional
    models) the anti-causal one, both starting at lag 0. Used by name as ``LocostConfig(ssm_variant=...)``
    and in presets; its parameters are saved with the model. The first use of a variant builds a tiny
    instance (H=4, N=4) and checks these shapes; a variant that breaks them is refused, naming the plugin.
    """


@hookspec
def register_presets(register):
    """Add model presets: a short name standing for a configuration and where its weights live.

    ``register(name, preset)`` where ``preset`` is an ``lsgtool.ModelPreset`` (architecture, config
    overrides, tokenizer, weights location, a hint for getting missing weights, a description saying what
    the weights are and what they are good for). Presets are accepted wherever a model path is
    (``lsgtool.load(name)``, ``--model name``).
    """


@hookspec
def register_commands(register):
    """Add CLI commands.

    ``register(name, command)`` where ``command`` is a plain function with Typer-annotated parameters
    (it becomes ``lsgtool NAME``) or a ``typer.Typer`` app (it becomes a command group ``lsgtool NAME ...``).
    A function may take a first parameter ``ctx: typer.Context``; ``lsgtool.plugin_api.state(ctx)`` then
    gives the plugin manager and the ``--debug`` flag. Errors: raise ``lsgtool.UsageError`` for user
    mistakes (exit 2) or ``lsgtool.LsgtoolError`` for failures (exit 1); the CLI prints them as one
    ``Error:`` line and a ``Hint:`` line.
    """
