"""Model specs: each form builds the right provider; a bad spec is one line that says what is expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowgap.errors import InputError
from knowgap.models import registry
from knowgap.models.anthropic_api import AnthropicChatModel
from knowgap.models.errors import ModelUnavailableError
from knowgap.models.local import LocalModel, resolve_local_path
from knowgap.models.openai_http import OPENAI_URL, OpenAIChatModel
from knowgap.models.registry import create_model, register_provider, split_spec
from knowgap.models.scripted import ScriptedModel
from tests.fakes.models import Echo
from tests.helpers import script_file

KNOWN = "anthropic, http, https, local, openai, openai-compat, python, scripted"


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_local_pack() -> None:
    model = create_model("local:qwen2.5-0.5b")
    assert isinstance(model, LocalModel)
    assert model.spec == "local:qwen2.5-0.5b"
    assert model.target == "qwen2.5-0.5b"
    assert model.describe()["pack"] == "qwen2.5-0.5b"


def test_local_gguf_path_is_lazy() -> None:
    model = create_model("local:/x.gguf")  # nothing is loaded or checked until the first call
    assert isinstance(model, LocalModel)
    assert model.target == "/x.gguf"
    with pytest.raises(ModelUnavailableError, match="local model file not found"):
        resolve_local_path(model.target)


def test_unknown_local_name_lists_the_packs() -> None:
    with pytest.raises(ModelUnavailableError) as info:
        resolve_local_path("qwen9-7b")
    assert "local:qwen2.5-0.5b" in str(info.value) and "local:PATH.gguf" in str(info.value)


def test_openai_with_key(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
    model = create_model("openai:gpt-4o")
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url, model.compat) == ("gpt-4o", OPENAI_URL, False)
    assert "sk-test-not-a-real-key-123456" not in str(model.describe())


def test_openai_base_url_from_env(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
    no_keys.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    model = create_model("openai:gpt-4o-mini")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "http://127.0.0.1:9/v1"


def test_openai_without_key(no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model("openai:gpt-4o")
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "openai:gpt-4o" in message
    assert "\n" not in message


def test_openai_compat(no_keys: pytest.MonkeyPatch) -> None:
    model = create_model("openai-compat:m@http://127.0.0.1:1/v1")
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url, model.compat) == ("m", "http://127.0.0.1:1/v1", True)


@pytest.mark.parametrize(("spec", "model_name", "url"), [
    ("openai-compat:org/m@v2@http://127.0.0.1:1/v1", "org/m@v2", "http://127.0.0.1:1/v1"),
    ("openai-compat:qwen@https://user:pw@proxy.example.com/v1", "qwen", "https://user:pw@proxy.example.com/v1"),
    ("openai-compat:a@b@http://u:p@h:8000/v1", "a@b", "http://u:p@h:8000/v1"),
])
def test_openai_compat_at_signs(no_keys: pytest.MonkeyPatch, spec: str, model_name: str, url: str) -> None:
    model = create_model(spec)
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url) == (model_name, url)
    if ":p" in url:  # the credentials in the URL never reach the manifest
        assert model.describe()["base_url"] == url.split("://")[0] + "://***@" + url.rsplit("@", 1)[1]


@pytest.mark.slow  # importing the anthropic SDK takes about a second
def test_anthropic_with_key(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    model = create_model("anthropic:claude-3-5-haiku-latest")
    assert isinstance(model, AnthropicChatModel)
    assert model.model == "claude-3-5-haiku-latest"
    assert model.spec == "anthropic:claude-3-5-haiku-latest"


def test_anthropic_without_key(no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelUnavailableError, match="ANTHROPIC_API_KEY"):
        create_model("anthropic:claude-3-5-haiku-latest")


def test_scripted(tmp_path: Path) -> None:
    file = script_file(tmp_path / "s.jsonl", "hello")
    model = create_model(f"  scripted:{file}  ")  # surrounding whitespace is ignored
    assert isinstance(model, ScriptedModel)
    assert model.spec == f"scripted:{file}"
    assert model.path == file


def test_scripted_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        create_model(f"scripted:{tmp_path / 'nope.jsonl'}")
    assert str(tmp_path / "nope.jsonl") in str(info.value)


@pytest.mark.parametrize(("spec", "expected"), [
    ("gpt-4o", f"bad model spec 'gpt-4o': expected PROVIDER:NAME with PROVIDER one of {KNOWN}"),
    ("local:", f"bad model spec 'local:': expected PROVIDER:NAME with PROVIDER one of {KNOWN}"),
    ("foo:bar", f"unknown model provider 'foo' in 'foo:bar' (known: {KNOWN})"),
    ("LOCAL:qwen2.5-0.5b", f"unknown model provider 'LOCAL' in 'LOCAL:qwen2.5-0.5b' (known: {KNOWN})"),
])
def test_bad_specs(spec: str, expected: str) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model(spec)
    assert str(info.value) == expected


@pytest.mark.parametrize("spec", ["openai-compat:qwen", "openai-compat:@http://127.0.0.1:1/v1",
                                  "openai-compat:m@"])
def test_openai_compat_without_model_or_url(no_keys: pytest.MonkeyPatch, spec: str) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model(spec)
    message = str(info.value)
    assert message.startswith(f"bad model spec '{spec}': expected openai-compat:MODEL@URL")
    assert "\n" not in message


@pytest.mark.parametrize("spec", ["openai-compat:m@ftp://127.0.0.1/v1", "openai-compat:m@127.0.0.1:8000/v1"])
def test_openai_compat_bad_url_scheme(no_keys: pytest.MonkeyPatch, spec: str) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model(spec)
    message = str(info.value)
    assert "must start with http:// or https://" in message
    assert "\n" not in message


@pytest.mark.parametrize(("url", "expected"), [("http://h:port/v1", "bad URL after '@' (Port could not be cast"),
                                               ("http://user:s3cret@h:99999/v1", "(Port out of range"),
                                               ("http://:80/v1", "names no host")])
def test_openai_compat_bad_port_or_host_is_a_clear_error(no_keys: pytest.MonkeyPatch, url: str,
                                                         expected: str) -> None:
    with pytest.raises(ModelUnavailableError) as info:
        create_model(f"openai-compat:m@{url}")
    assert expected in str(info.value) and "s3cret" not in str(info.value)


def test_split_spec() -> None:
    assert split_spec("local:/models/a:b.gguf") == ("local", "/models/a:b.gguf")
    assert split_spec("openai-compat:m@http://h:1/v1") == ("openai-compat", "m@http://h:1/v1")


def test_register_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    register_provider("echo", Echo)
    model = create_model("echo:anything:at all")
    assert isinstance(model, Echo)
    assert (model.spec, model.rest) == ("echo:anything:at all", "anything:at all")
    with pytest.raises(ModelUnavailableError, match=r"known: anthropic, echo, http"):
        create_model("nope:x")
