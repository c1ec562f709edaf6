"""A system under test for the kill-and-resume chaos test (``python:tests/faults/logged_system.py:answer``).

Its answer is a pure function of the request (messages and seed), ends with the request's key in brackets (so a
cached response names the call it answers), and takes ``SLEEP_S`` so that calls are in flight when a run is
killed. Before it sleeps, each call appends ``KEY PID`` to the file named by ``$KNOWGAP_CHAOS_CALL_LOG`` with one
``O_APPEND`` write (whole lines, whatever the threads and processes), so a test can count every call that was
made, by which process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

from knowgap.models.types import ChatRequest

SLEEP_S = 0.02
CALL_LOG = "KNOWGAP_CHAOS_CALL_LOG"
KEY = re.compile(r"\[([0-9a-f]{16})\]$")
"""The call's key at the end of an answer."""


def call_key(request: ChatRequest) -> str:
    """What identifies one call of a run: its messages and its seed (the trial's, which differs per repeat)."""
    body = json.dumps([[m.role, m.content] for m in request.messages], ensure_ascii=False)
    return hashlib.sha256(f"{body}|{request.seed}".encode()).hexdigest()[:16]


def answer(request: ChatRequest) -> str:
    key = call_key(request)
    fd = os.open(os.environ[CALL_LOG], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{key} {os.getpid()}\n".encode())
    finally:
        os.close(fd)
    time.sleep(SLEEP_S)
    user = request.messages[-1].content
    context = user.split("\n\nQuestion:")[0]
    text = ["I don't know: the context does not say.", context, user,
            context.split(".")[0]][int(key, 16) % 4]  # abstains, answers from the context, obeys an injection...
    return f"{text} [{key}]"
