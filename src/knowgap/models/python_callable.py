"""``python:MODULE:FUNCTION``: your own system (a RAG service, an agent, a summarizer with its own prompt) as
the model under test, called in-process.

``MODULE`` is an importable module (``my_app.qa``) or a path to a ``.py`` file (``examples/own_system/rag_app.py``).
``FUNCTION`` is a sync or async callable that takes the :class:`~knowgap.models.types.ChatRequest` (its
``messages``; ``tools`` in a suite's budget mode when the function says it supports them) and returns:

- a string (the reply text; a subclass of ``str`` is read as its plain string value), or
- a :class:`~knowgap.models.types.ChatResponse`, or
- a dict with ``text`` (a string, ``""`` for an empty reply) and optionally ``tool_calls`` (OpenAI shape or
  knowgap's) and ``usage``; ``text`` may be left out (or None) only when ``tool_calls`` holds at least one call.

Anything else (None, a list, a number, bytes, a dict with neither ``text`` nor tool calls) is a trial error naming
what came back (a dict's keys), never an empty answer: ``{"answer": "..."}`` would otherwise be scored as a reply
that says nothing (an abstention).

Optional attributes on the function:

- ``supports_tools = True``: it handles ``request.tools`` (native tool calling); otherwise suites send their
  tool protocol as text;
- ``concurrency = N``: calls in flight at once (default 4; a sync function runs in a worker thread);
- ``knowgap_identity = "..."``: what the system is, for the response cache and ``--resume``. By default the
  identity is the sha256 of the module's source file, so editing the function is a cache miss; a system whose
  answers also depend on other files (a knowledge base, a prompt file) should set it, or runs should use
  ``--no-cache``.

An exception the function raises is a trial error (not retried), stored with its traceback.

A sync function runs in a daemon worker thread of the model's own (:mod:`knowgap.models.call_threads`): a call that
does not return within the run's ``--timeout`` is abandoned (a thread cannot be stopped) and retried like any
time-out; the trial's error says the thread was abandoned, and the run ends without waiting for that thread. Past
:data:`~knowgap.models.call_threads.MAX_ABANDONED` abandoned threads still running, further calls are trial errors
without being started.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from knowgap.errors import first_validation_error
from knowgap.models.base import ChatModel
from knowgap.models.call_threads import CallThreads, FunctionExited, TooManyAbandoned
from knowgap.models.errors import ModelUnavailableError, PermanentModelError
from knowgap.models.openai_http import parse_tool_calls
from knowgap.models.types import ChatRequest, ChatResponse, ToolCall, Usage
from knowgap.redaction import redact

_TRACEBACK_LINES = 12


def _load_module(name: str, spec: str) -> ModuleType:
    if name.endswith(".py") or "/" in name or "\\" in name:
        path = Path(name).expanduser()
        if not path.is_file():
            raise ModelUnavailableError(f"{spec}: no Python file {path}")
        module_name = "knowgap_target_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ModelUnavailableError(f"{spec}: cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise ModelUnavailableError(f"{spec}: importing {path} failed: {type(exc).__name__}: {exc}") from None
        return module
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ModelUnavailableError(f"{spec}: cannot import module {name}: {exc}") from None


def _tool_calls(raw: Any) -> list[ToolCall]:
    """Tool calls in knowgap's shape ({id, name, arguments}) or the OpenAI chat-completions shape."""
    calls: list[ToolCall] = []
    for number, item in enumerate(raw or []):
        if isinstance(item, ToolCall):
            calls.append(item)
        elif isinstance(item, dict) and "function" in item:
            calls.extend(parse_tool_calls([item]))
        else:
            calls.append(ToolCall.model_validate({"id": f"call_{number}", **item}))
    return calls


EXPECTED = "expected a string, a dict with 'text' (or 'tool_calls'), or a ChatResponse"


def _keys(value: dict[Any, Any]) -> str:
    keys = [repr(k) for k in list(value)[:8]]
    more = f" and {len(value) - 8} more" if len(value) > 8 else ""
    return f"keys {', '.join(keys)}{more}" if keys else "no keys"


def to_response(value: Any, spec: str) -> ChatResponse:
    """What a target returned, as a ChatResponse; anything else is a permanent error saying what came back."""
    if isinstance(value, ChatResponse):
        return value
    if isinstance(value, str):
        return ChatResponse(text=str.__str__(value))  # a str subclass as its plain value, whatever its __str__ says
    if isinstance(value, dict):
        text = value.get("text")
        if text is not None and not isinstance(text, str):
            raise PermanentModelError(f"{spec}: returned a dict whose 'text' is {type(text).__name__}, not a "
                                      f"string; {EXPECTED}")
        try:
            calls = _tool_calls(value.get("tool_calls"))
            usage = Usage.model_validate(value.get("usage") or {})
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            where = first_validation_error(exc)[0] if isinstance(exc, ValidationError) else type(exc).__name__
            raise PermanentModelError(f"{spec}: returned a dict with a malformed field ({where})") from None
        if text is None and not calls:
            raise PermanentModelError(f"{spec}: returned a dict with no 'text' and no 'tool_calls' (it has "
                                      f"{_keys(value)}); {EXPECTED}")
        return ChatResponse(text=str.__str__(text) if text is not None else "", tool_calls=calls, usage=usage)
    what = "None (does the function return its answer?)" if value is None else type(value).__name__
    raise PermanentModelError(f"{spec}: returned {what}; {EXPECTED}")


class PythonCallableModel(ChatModel):
    def __init__(self, spec: str, target: str) -> None:
        module_name, sep, function_name = target.rpartition(":")
        if not sep or not module_name or not function_name:
            raise ModelUnavailableError(f"bad model spec '{spec}': expected python:MODULE:FUNCTION, e.g. "
                                        "python:my_app.qa:answer or python:path/to/app.py:answer")
        self.spec = spec
        self.module = _load_module(module_name, spec)
        function = getattr(self.module, function_name, None)
        if not callable(function):
            raise ModelUnavailableError(f"{spec}: module {module_name} has no function {function_name}")
        self.function: Callable[[ChatRequest], Any] = function
        self.supports_tools = bool(getattr(function, "supports_tools", False))
        self.default_concurrency = int(getattr(function, "concurrency", 4))
        self._source = inspect.getsourcefile(self.module) if hasattr(self.module, "__file__") else None
        self._threads = None if inspect.iscoroutinefunction(function) else CallThreads("knowgap-python")
        """Where a sync function runs: threads that a time-out abandons, never joined (see the module's doc)."""

    def identity(self) -> str:
        own = getattr(self.function, "knowgap_identity", None)
        if own is not None:
            return f"python:{own() if callable(own) else own}"
        if self._source and Path(self._source).is_file():
            source_sha = hashlib.sha256(Path(self._source).read_bytes()).hexdigest()
            return f"python:{self.function.__qualname__}@sha256:{source_sha}"
        return self.spec

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.refuse_unsupported_tools(request)
        start = time.perf_counter()
        try:
            if self._threads is None:
                value = await self.function(request)
            else:
                value = await self._threads.run(self.function, request)
                if inspect.isawaitable(value):
                    value = await value
        except TooManyAbandoned as exc:
            raise PermanentModelError(
                f"{self.spec}: not called: {exc.count} earlier calls did not return within the time-out and their "
                f"threads, abandoned, still run (knowgap starts no new call while {exc.limit} or more do); fix the "
                "function or raise --timeout") from None
        except Exception as exc:  # the user's system failed: a trial error with its traceback, not retried
            raised: BaseException = exc.original if isinstance(exc, FunctionExited) else exc
            lines = traceback.format_exception(raised)
            said = f": {raised}" if str(raised) else ""
            raise PermanentModelError(redact(f"{self.spec} raised {type(raised).__name__}{said}\n"
                                             + "".join(lines[-_TRACEBACK_LINES:]).rstrip())) from None
        response = to_response(value, self.spec)
        if not response.latency_s:
            response.latency_s = time.perf_counter() - start
        response.model = self.spec
        return response

    def timeout_note(self) -> str:
        if self._threads is None:
            return ""
        return (": the function did not return, and its thread was abandoned (a thread cannot be stopped; it runs "
                f"on until the function returns or knowgap exits; {self._threads.abandoned} such threads now)")

    def describe(self) -> dict[str, str]:
        info = {"spec": self.spec, "backend": "Python callable", "function": self.function.__qualname__}
        if self._source:
            info["source"] = self._source
        return info
