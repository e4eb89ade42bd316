"""Every plugin family, registered by a third party on a fresh manager, is collected, checked and listed."""

import json


from lsgtool import ArchitectureAdapter, ModelPreset
from lsgtool.cli import create_app
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager


def _ssm_variant(H, N, channels=2, **options):
    from lsgtool.core.ssm.kernels import S4DKernel

    return S4DKernel(H, N, channels, **options)


class _Everything:
    @hookimpl
    def register_architectures(self, register):
        register("tinybert", ArchitectureAdapter("", "encoder", "embeddings.LayerNorm", "embeddings",
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
    assert pm.registry("ssm_variants").require("s4d_test") is _ssm_variant
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
    assert "broken" not in pm.registry("presets") and "minilm" in pm.registry("presets")
    assert "plugin 'lsgtool-badpreset' registered model preset 'broken': expected a ModelPreset" in pm.problems[0]
