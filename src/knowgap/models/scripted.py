"""``scripted:FILE``: deterministic responses from a file, for tests and for replaying a recorded run.

The file is JSONL (or a JSON list). Each line is one of:

- ``{"response": "..."}``: served in order, cycling when the list runs out; an optional ``"logprobs"`` (a list
  of ``{"token", "logprob", "top": [{"token", "logprob"}]}``) is served with it to requests that ask for token
  log-probabilities;
- ``{"request_hash": "<sha256>", "response": "..."}``: served to the request with that fingerprint
  (see ``ChatRequest.fingerprint``); hashed entries are preferred over ordered ones;
- a trial record from a run's ``trials.jsonl``: each recorded call becomes a hashed entry, so
  ``scripted:runs/RUN/trials.jsonl`` replays that run without a model.

A request that matches no hashed entry while the file has no ordered entries is a permanent error naming
the file and the request hash.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from pathlib import Path
from typing import Any

from knowgap.errors import InputError
from knowgap.jsonl import parse_lines
from knowgap.models.base import ChatModel
from knowgap.models.errors import PermanentModelError
from knowgap.models.types import ChatRequest, ChatResponse, TokenLogprob, Usage


def _load_entries(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], str]:
    """The file's entries, and the sha256 of the bytes they were read from (the model's identity)."""
    if not path.exists():
        raise InputError(str(path), "scripted responses file not found")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    text = data.decode("utf-8-sig")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise InputError(str(path), f"not valid JSON: {exc}") from None
        return list(enumerate(items, start=1)), digest
    return parse_lines(text, path), digest


Scripted = tuple[str, list[TokenLogprob] | None]


def _logprobs(raw: Any, path: Path, line: int) -> list[TokenLogprob] | None:
    if raw is None:
        return None
    try:
        return [TokenLogprob.model_validate(item) for item in raw]
    except (TypeError, ValueError) as exc:
        raise InputError(str(path), f"not a list of token log-probabilities ({exc})".splitlines()[0], line=line,
                         field="logprobs") from None


class ScriptedModel(ChatModel):
    default_concurrency = 1
    supports_logprobs = True

    def __init__(self, spec: str, file: str) -> None:
        self.spec = spec
        self.path = Path(file).expanduser()
        self.by_hash: dict[str, Scripted] = {}
        ordered: list[Scripted] = []
        entries, self.sha256 = _load_entries(self.path)
        for number, row in entries:
            if not isinstance(row, dict):
                raise InputError(str(self.path), "expected a JSON object", line=number)
            if "calls" in row and "trial_id" in row:  # a recorded trial
                for call in row.get("calls") or []:
                    response = call.get("response")
                    if response and call.get("request"):
                        fingerprint = ChatRequest.model_validate(call["request"]).fingerprint()
                        self.by_hash[fingerprint] = (response["text"],
                                                     _logprobs(response.get("logprobs"), self.path, number))
                continue
            if not isinstance(row.get("response"), str):
                raise InputError(str(self.path), "expected a string", line=number, field="response")
            entry = (row["response"], _logprobs(row.get("logprobs"), self.path, number))
            if row.get("request_hash"):
                self.by_hash[str(row["request_hash"])] = entry
            else:
                ordered.append(entry)
        if not ordered and not self.by_hash:
            raise InputError(str(self.path), "holds no responses")
        self._ordered = itertools.cycle(ordered) if ordered else None
        self._lock = threading.Lock()
        self.calls = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.refuse_unsupported_tools(request)
        fingerprint = request.fingerprint()
        with self._lock:
            self.calls += 1
            entry = self.by_hash.get(fingerprint)
            if entry is None and self._ordered is not None:
                entry = next(self._ordered)
        if entry is None:
            raise PermanentModelError(f"{self.spec}: no scripted response for request {fingerprint[:16]}…")
        text, logprobs = entry
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        return ChatResponse(text=text, usage=Usage(prompt_tokens=prompt_words, completion_tokens=len(text.split())),
                            logprobs=logprobs if request.top_logprobs else None, latency_s=0.0, finish_reason="stop",
                            model=self.spec)

    def identity(self) -> str:
        return f"scripted:sha256:{self.sha256}"

    def describe(self) -> dict[str, str]:
        return {"spec": self.spec, "backend": "scripted", "file": str(self.path), "sha256": self.sha256}
