import pytest

from lsgtool.cli import create_app
from lsgtool.plugins import hookimpl
from lsgtool.plugins.manager import make_plugin_manager


class _Echo:
    @hookimpl
    def register_commands(self, register):
        def echo(block: int = 128, sparse: str = "norm", overwrite: bool = False):
            """Print the options as received."""
            print(f"{block} {sparse} {overwrite}")

        register("echo", echo)


@pytest.fixture
def app():
    pm = make_plugin_manager(load_installed=False)
    pm.register(_Echo(), name="echo-plugin")
    return create_app(pm)


@pytest.fixture
def user_file(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "lsgtool" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def test_precedence_flag_over_project_over_user(app, runner, user_file, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    assert runner.invoke(app, ["echo"]).stdout == "128 norm False\n"
    user_file.write_text('[echo]\nblock = 32\nsparse = "lsh"\n')
    assert runner.invoke(app, ["echo"]).stdout == "32 lsh False\n"
    (project / "lsgtool.toml").write_text("[echo]\nblock = 64\noverwrite = true\n")
    assert runner.invoke(app, ["echo"]).stdout == "64 lsh True\n"
    assert runner.invoke(app, ["echo", "--block", "16", "--no-overwrite"]).stdout == "16 lsh False\n"


def test_explicit_config_replaces_found_files(app, runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsgtool.toml").write_text("[echo]\nblock = 64\n")
    other = tmp_path / "other.toml"
    other.write_text("[echo]\nblock = 8\n")
    assert runner.invoke(app, ["--config", str(other), "echo"]).stdout == "8 norm False\n"
    assert runner.invoke(app, ["echo"], env={"LSGTOOL_CONFIG": str(other)}).stdout == "8 norm False\n"


def test_malformed_file_names_path_and_line(app, runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsgtool.toml").write_text("[echo]\nblock = 64\nsparse = \n")
    result = runner.invoke(app, ["echo"])
    assert result.exit_code == 2
    assert str(tmp_path / "lsgtool.toml") in result.stderr
    assert "line 3" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "content, message",
    [
        ("[ehco]\nblock = 1\n", "unknown command table [ehco]"),
        ("[echo]\nblok = 1\n", "[echo] has unknown option 'blok'"),
        ("block = 1\n", "top-level key 'block' must be a table"),
    ],
)
def test_wrong_keys_are_named(app, runner, tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsgtool.toml").write_text(content)
    result = runner.invoke(app, ["echo"])
    assert result.exit_code == 2 and message in result.stderr


def test_missing_explicit_config(app, runner, tmp_path):
    result = runner.invoke(app, ["--config", str(tmp_path / "nope.toml"), "echo"])
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_keys_spelled_like_the_options_are_accepted(runner, tmp_path, monkeypatch):
    class _Flags:
        @hookimpl
        def register_commands(self, register):
            import typer
            from typing import Annotated

            def show(global_tokens: Annotated[int, typer.Option("--global")] = 1,
                     as_json: Annotated[bool, typer.Option("--json")] = False, max_length: int = 4):
                print(global_tokens, as_json, max_length)

            register("show", show)

    pm = make_plugin_manager(load_installed=False)
    pm.register(_Flags(), name="flags")
    app = create_app(pm)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsgtool.toml").write_text("[show]\nglobal = 3\njson = true\nmax-length = 9\n")
    assert runner.invoke(app, ["show"]).stdout == "3 True 9\n"
    (tmp_path / "lsgtool.toml").write_text("[show]\nglobal_tokens = 2\n")
    assert runner.invoke(app, ["show"]).stdout == "2 False 4\n"


def test_a_value_of_the_wrong_type_names_the_file(app, runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lsgtool.toml").write_text('[echo]\nblock = "many"\n')
    result = runner.invoke(app, ["echo"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr and "╭" not in result.stderr
    assert "invalid value for '--block'" in result.stderr and str(tmp_path / "lsgtool.toml") in result.stderr
    assert "Hint:" in result.stderr


def test_config_that_is_a_folder_says_so(app, runner, tmp_path):
    result = runner.invoke(app, ["--config", str(tmp_path), "echo"])
    assert result.exit_code == 2 and f"--config {tmp_path} is a folder, not a TOML file" in result.stderr
    assert "Hint:" in result.stderr


def test_a_summarize_value_a_config_file_gives_is_named_with_the_file_and_key(runner, tmp_path, monkeypatch):
    # issue 29, item 19: `length = "0%"` in lsgtool.toml gave "--length 0% is not a share ..." without the file
    from lsgtool.cli import create_app

    app = create_app(make_plugin_manager(load_installed=False))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.txt").write_text("The fox ran over the hill.")
    (tmp_path / "lsgtool.toml").write_text('[summarize]\nlength = "0%"\n')
    result = runner.invoke(app, ["summarize", "doc.txt"])
    message = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "--length 0% is not a share" in message and "Hint:" in message
    assert f"(the value comes from the config file {tmp_path / 'lsgtool.toml'}: [summarize] length)" in message
    typed = runner.invoke(app, ["summarize", "doc.txt", "--length", "150%"])  # the flag typed: no file to name
    assert typed.exit_code == 2 and "--length 150%" in typed.stderr and "config file" not in typed.stderr
