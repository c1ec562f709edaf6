"""Model specs are strings, the same everywhere (``--model``, ``--judge``, ``--generator``, YAML).

===============================  ==================================================================
``local:qwen2.5-1.5b``           embedded pack, in-process llama.cpp (the default target)
``local:qwen2.5-0.5b``           the small embedded pack (fast; used by the tests)
``local:PATH.gguf``              any GGUF file, in-process llama.cpp
``openai:MODEL``                 OpenAI (OPENAI_API_KEY, optional OPENAI_BASE_URL)
``openai-compat:MODEL@URL``      any OpenAI-compatible server; URL is its base, e.g. http://127.0.0.1:8000/v1
``openai-compat:MODEL@URL,...``  one model on several such servers (replicas; ``knowgap.models.replicas``)
``anthropic:MODEL``              Anthropic (ANTHROPIC_API_KEY; extra ``knowgap[anthropic]``)
``scripted:FILE``                deterministic responses from a file (tests, replays)
``python:MODULE:FUNCTION``       your own system as a Python callable (``knowgap.models.python_callable``)
``http:URL`` / ``URL``           your own system behind a JSON endpoint (``knowgap.models.http_json``)
===============================  ==================================================================

More providers register with :func:`register_provider`, or come from an installed package that declares a
``knowgap.providers`` entry point (prefix -> factory, e.g. ``toy = "my_package.models:make_toy"``), imported the
first time a spec uses its prefix.

A spec may name environment variables as ``${NAME}`` (``openai-compat:m@http://user:${PROXY_KEY}@host/v1``):
they are filled in when the provider is made, so the secret stays in the environment while the spec, which
runs, manifests and the cache store, holds only the variable's name (and a resumed run finds it again).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from knowgap.models.base import ChatModel
from knowgap.models.errors import ModelUnavailableError
from knowgap.plugins import Plugin, discover

DEFAULT_MODEL = "local:qwen2.5-1.5b"
Factory = Callable[[str, str], ChatModel]
"""(full spec, the part after the prefix) -> provider."""

_FACTORIES: dict[str, Factory] = {}
"""Built-in and registered providers."""
_FROM_PACKAGES: dict[str, Factory] = {}
"""Providers of installed packages (``knowgap.providers`` entry points), once imported."""
ENTRY_POINTS = "knowgap.providers"
_URL_START = re.compile(r"@(?=https?://)")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def register_provider(prefix: str, factory: Factory) -> None:
    _FACTORIES[prefix] = factory


def _local(spec: str, rest: str) -> ChatModel:
    from knowgap.models.local import LocalModel
    return LocalModel(spec, rest)


def _openai(spec: str, rest: str) -> ChatModel:
    from knowgap.models.openai_http import OpenAIChatModel
    return OpenAIChatModel.openai(spec, rest)


def _openai_compat(spec: str, rest: str) -> ChatModel:
    from knowgap.models.openai_http import OpenAIChatModel
    # Split at the first '@' that starts an http(s) URL: a model name may hold '@' (org/m@v2) and so may the
    # URL (http://user:pass@host/v1); without such an '@', the last one (the error below says what is wrong).
    start = _URL_START.search(rest)
    model, sep, url = (rest[:start.start()], "@", rest[start.end():]) if start else rest.rpartition("@")
    if not sep or not model or not url:
        raise ModelUnavailableError(
            f"bad model spec '{spec}': expected openai-compat:MODEL@URL, e.g. openai-compat:qwen@http://127.0.0.1:8000/v1")
    if "," in url:  # several endpoints serving the model: a replica pool
        from knowgap.models.replicas import ReplicaPool
        return ReplicaPool.parse(spec, model, url)
    return OpenAIChatModel.openai_compat(spec, model, url)


def _anthropic(spec: str, rest: str) -> ChatModel:
    from knowgap.models.anthropic_api import AnthropicChatModel
    return AnthropicChatModel(spec, rest)


def _python(spec: str, rest: str) -> ChatModel:
    from knowgap.models.python_callable import PythonCallableModel
    return PythonCallableModel(spec, rest)


def _http_json(spec: str, rest: str) -> ChatModel:
    from knowgap.models.http_json import HttpJsonModel
    # http:http://host/x names the URL after the prefix; a bare http://host/x (or https://) is the URL itself.
    url = f"{spec.partition(':')[0]}:{rest}" if rest.startswith("//") else rest
    return HttpJsonModel(spec, url)


def _scripted(spec: str, rest: str) -> ChatModel:
    from knowgap.models.scripted import ScriptedModel
    return ScriptedModel(spec, rest)


for _prefix, _factory in {"local": _local, "openai": _openai, "openai-compat": _openai_compat,
                          "anthropic": _anthropic, "scripted": _scripted, "python": _python,
                          "http": _http_json, "https": _http_json}.items():
    register_provider(_prefix, _factory)


def _plugins() -> dict[str, Plugin]:
    """Built-in and registered providers merged with the installed packages' ``knowgap.providers``."""
    return discover(ENTRY_POINTS, {prefix: f"{f.__module__}:{f.__qualname__}" for prefix, f in _FACTORIES.items()})


def provider_names() -> list[str]:
    """Every spec prefix: built in, registered, or declared by an installed package (not imported)."""
    return sorted(_plugins())


def _factory_of(prefix: str) -> Factory:
    """The factory of ``prefix``; a plugin's is imported now. ModelUnavailableError naming its package."""
    if prefix in _FACTORIES:
        return _FACTORIES[prefix]
    if prefix not in _FROM_PACKAGES:
        plugin = _plugins()[prefix]
        factory = plugin.load_or_raise(ModelUnavailableError)
        if not callable(factory):
            raise ModelUnavailableError(plugin.problem("is not a callable (spec, rest) -> ChatModel"))
        _FROM_PACKAGES[prefix] = factory
    return _FROM_PACKAGES[prefix]


def split_spec(spec: str) -> tuple[str, str]:
    prefix, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelUnavailableError(
            f"bad model spec '{spec}': expected PROVIDER:NAME with PROVIDER one of {', '.join(provider_names())}")
    if prefix not in _FACTORIES and prefix not in _plugins():
        raise ModelUnavailableError(
            f"unknown model provider '{prefix}' in '{spec}' (known: {', '.join(provider_names())})")
    return prefix, rest


def expand_env(spec: str) -> str:
    """``spec`` with every ``${NAME}`` replaced by that environment variable (an unset one is an error)."""
    missing = [name for name in _ENV_REF.findall(spec) if name not in os.environ]
    if missing:
        raise ModelUnavailableError(f"model spec names the environment variable {missing[0]}, which is not set")
    return _ENV_REF.sub(lambda m: os.environ[m.group(1)], spec)


def create_model(spec: str) -> ChatModel:
    """Build the provider a spec names. Raises ModelUnavailableError with a fix when it cannot.

    The provider keeps ``spec`` as given (``${NAME}`` references unexpanded); it works with the expanded one."""
    spec = spec.strip()
    prefix, rest = split_spec(spec)
    return _factory_of(prefix)(spec, split_spec(expand_env(spec))[1])
