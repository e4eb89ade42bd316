"""Every plugin family, registered by a third party on a fresh manager, is collected and listed."""

import json

import pytest

from lsgtool import ModelPreset
from lsgtool.cli import create_app
from lsgtool.core.errors import PluginError
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager


from lsgtool import ArchitectureAdapter

_Adapter = ArchitectureAdapter  # (encoder, layers parent, insert, owner, positions, word embeddings)


def _ssm_variant(d_model, d_state):
    return (d_model, d_state)


class _Everything:
    @hookimpl
    def register_architectures(self, register):
        register("tinybert", _Adapter("", "encoder", "embeddings.LayerNorm", "embeddings",
                                      ("embeddings.position_embeddings",), "embeddings.word_embeddings"))

    @hookimpl
    def register_ssm_variants(self, register):
        register("s4d_test", _ssm_variant)

    @hookimpl
    def register_presets(self, register):
        register("tiny_locost", ModelPreset("locost", "a tiny test preset", {"d_model": 32}, weights=None))


def test_families_are_collected_with_their_plugin(runner):
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Everything(), name="lsgtool-everything")
    assert pm.registry("architectures")["tinybert"].global_owner == "embeddings"
    assert pm.registry("ssm_variants")["s4d_test"](4, 2) == (4, 2)
    preset = pm.registry("presets")["tiny_locost"]
    assert preset.config == {"d_model": 32} and pm.registry("presets").entry("tiny_locost").plugin == "lsgtool-everything"
    listing = json.loads(runner.invoke(create_app(pm), ["plugins", "--json"]).stdout)
    entry = next(p for p in listing["plugins"] if p["name"] == "lsgtool-everything")
    assert entry["registers"] == {"architectures": ["tinybert"], "ssm_variants": ["s4d_test"], "presets": ["tiny_locost"]}
    assert "registered in code" == entry["origin"]


class _BadPreset:
    @hookimpl
    def register_presets(self, register):
        register("broken", {"d_model": 32})


def test_malformed_registration_is_refused_with_the_plugin_name():
    pm = make_plugin_manager(load_installed=False)
    pm.register(_BadPreset(), name="lsgtool-badpreset")
    with pytest.raises(PluginError, match="plugin 'lsgtool-badpreset' registered model preset 'broken': expected a ModelPreset"):
        pm.registry("presets")


def test_registered_adapter_wins_over_detection():
    import transformers as T

    from lsgtool.core.convert.adapters import BERT_LIKE
    from lsgtool.core.convert.engine import resolve_adapter

    class _ErnieAdapter:
        @hookimpl
        def register_architectures(self, register):
            register("ernie", BERT_LIKE)

    model = T.ErnieModel(T.ErnieConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=37,
                                       vocab_size=99, max_position_embeddings=64))
    detected = resolve_adapter(model, make_plugin_manager(load_installed=False))
    assert detected.layers_parent == "encoder" and detected.token_type_embeddings == "embeddings.token_type_embeddings"
    pm = make_plugin_manager(load_installed=False)
    pm.register(_ErnieAdapter(), name="lsgtool-ernie")
    assert resolve_adapter(model, pm) is BERT_LIKE
