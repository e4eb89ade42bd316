"""Each hook by name: a test per hook proves a third party's registration reaches the feature that uses it;
the meta-tests check that every hook has such a test and is documented with its exact signature."""

import inspect
import json
from pathlib import Path

import pytest
import torch

from lsgtool import LSGConfig, ModelPreset, lsg_attention
from lsgtool.cli import create_app
from lsgtool.core.errors import PluginError
from lsgtool.plugins import hookimpl, hookspecs
from lsgtool.plugins.manager import make_plugin_manager
from lsgtool.plugins.registry import HOOKS as FAMILY_HOOKS

HOOKS = [name for name, fn in vars(hookspecs).items() if name.startswith("register_") and callable(fn)]
ROOT = Path(__file__).resolve().parents[2]


def _manager(plugin, name):
    pm = make_plugin_manager(load_installed=False)
    pm.register(plugin, name=name)
    pm.check_pending()
    pm.activate()
    return pm


def test_hook_register_sparse_selectors(runner):
    from lsgtool.core.lsg.selectors import stride_selector

    class Plugin:
        @hookimpl
        def register_sparse_selectors(self, register):
            register("every_other", stride_selector)

    pm = _manager(Plugin(), "lsgtool-every-other")
    q, k, v = (torch.randn(1, 2, 1 + 8 * 6, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    ours = lsg_attention(q, k, v, config=LSGConfig(block_size=8, sparsity_factor=2, sparsity_type="every_other"))
    builtin = lsg_attention(q, k, v, config=LSGConfig(block_size=8, sparsity_factor=2, sparsity_type="stride"))
    torch.testing.assert_close(ours, builtin, rtol=0, atol=0)
    listing = json.loads(runner.invoke(create_app(pm), ["plugins", "--json"]).stdout)
    assert next(p for p in listing["plugins"] if p["name"] == "lsgtool-every-other")["registers"] == {
        "sparse_selectors": ["every_other"]}


def test_hook_register_architectures():
    import transformers as T

    from lsgtool.core.lsg.adapters import BERT_LIKE
    from lsgtool.core.lsg.engine import resolve_adapter

    class Plugin:
        @hookimpl
        def register_architectures(self, register):
            register("ernie", BERT_LIKE)

    model = T.ErnieModel(T.ErnieConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=37,
                                       vocab_size=99, max_position_embeddings=64))
    make_plugin_manager(load_installed=False).activate()
    detected = resolve_adapter(model)
    assert detected is not BERT_LIKE and detected.self_attention == ("encoder.layer.*.attention.self",)
    _manager(Plugin(), "lsgtool-ernie")
    assert resolve_adapter(model) is BERT_LIKE


def test_hook_register_ssm_variants():
    from lsgtool import LocostConfig, LocostModel
    from lsgtool.core.ssm.kernels import S4DKernel

    built = []

    class Plugin:
        @hookimpl
        def register_ssm_variants(self, register):
            def slow(H, N, channels=2, **options):
                built.append((H, N, channels))
                return S4DKernel(H, N, channels, dt_min=1e-4, dt_max=1e-3)

            register("s4d_slow", slow)

    _manager(Plugin(), "lsgtool-slow")
    model = LocostModel(LocostConfig(vocab_size=24, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=1,
                                     num_heads=4, d_state=8, ssm_variant="s4d_slow", decoder_start_token_id=0))
    assert built == [(4, 4, 2), (32, 8, 2), (32, 8, 2)]  # the contract, checked once on a tiny instance; 2 layers
    assert model.encoder.block[0].layer[0].ssm_layer.kernel.log_dt.exp().max() <= 1e-3


def test_hook_register_presets(tiny_folder):
    import lsgtool

    class Plugin:
        @hookimpl
        def register_presets(self, register):
            register("tiny-bert", ModelPreset("BertForMaskedLM", "a tiny test BERT", weights=str(tiny_folder),
                                              tokenizer=str(tiny_folder)))

    _manager(Plugin(), "lsgtool-tiny")
    model = lsgtool.load("tiny-bert")
    assert type(model).__name__ == "BertForMaskedLM" and model.config.hidden_size == 32
    assert lsgtool.load_tokenizer("tiny-bert").cls_token_id == 2


def test_hook_register_commands(runner):
    class Plugin:
        @hookimpl
        def register_commands(self, register):
            def hello(name: str = "world"):
                """Say hello."""
                print(f"hello {name}")

            register("hello", hello)

    result = runner.invoke(create_app(_manager(Plugin(), "lsgtool-hello")), ["hello", "--name", "lsg"])
    assert result.exit_code == 0 and result.stdout == "hello lsg\n"


def test_every_hook_has_a_test_of_its_own():
    tests = {name for name, fn in globals().items() if name.startswith("test_hook_") and callable(fn)}
    assert tests == {f"test_hook_{name}" for name in HOOKS}


def test_every_family_has_exactly_one_hook():
    assert sorted(HOOKS) == sorted(FAMILY_HOOKS.values())


def test_every_hook_is_documented_with_its_signature():
    docs = (ROOT / "docs" / "plugins.md").read_text()
    for name in HOOKS:
        fn = getattr(hookspecs, name)
        assert list(inspect.signature(fn).parameters) == ["register"], name
        assert "register(name, " in (fn.__doc__ or ""), name
        assert f"{name}(register)" in docs, f"{name} missing from docs/plugins.md"


def test_builtin_manager_has_no_pending_hooks():
    make_plugin_manager(load_installed=False).check_pending()


class _TupleKernels:
    @hookimpl
    def register_ssm_variants(self, register):
        register("s4d_tuple", lambda H, N, channels=2, **options: (H, N))


def test_an_ssm_variant_breaking_the_contract_is_refused_naming_the_plugin():
    from lsgtool import LocostConfig, LocostModel

    _manager(_TupleKernels(), "lsgtool-tuple")
    with pytest.raises(PluginError, match="SSM variant 's4d_tuple' of plugin 'lsgtool-tuple' breaks the hook contract: "
                                          r"variant\(...\) returned tuple, not an nn.Module"):
        LocostModel(LocostConfig(d_model=32, d_kv=8, d_ff=37, num_layers=1, num_heads=4, d_state=8,
                                 ssm_variant="s4d_tuple"))
