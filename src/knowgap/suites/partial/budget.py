"""Budget mode's tool: ``request_evidence(path)`` served from the role's view, paid in query tokens, logged.

The agent calls it through the engine's tool-use loop (:mod:`knowgap.engine.tools`), natively or as JSON text.
Each granted or denied request costs its source's ``cost``; an unknown path costs nothing; a request the
remaining tokens cannot pay is answered ``exhausted`` and costs nothing. Every request is logged as
``{"path", "status", "cost", "protocol"}`` (stored in the trial's ``output.requests``). Under the ``datamark``
defence the evidence served is datamarked like the view.
"""

from __future__ import annotations

import json
from typing import Any

from knowgap.engine.tools import Tool, ToolUse
from knowgap.injection import mark_untrusted
from knowgap.suites.partial.dataset import Scenario
from knowgap.suites.partial.prompts import evidence_reply, request_evidence_tool
from knowgap.suites.partial.scoring import Answer, parse_answer
from knowgap.suites.partial.view import BuiltView, serve_request

TOOL = "request_evidence"


class EvidenceDesk:
    """Serves one trial's ``request_evidence`` calls from ``built`` within ``budget`` query tokens."""

    def __init__(self, built: BuiltView, scenario: Scenario, budget: int, defence: str = "none") -> None:
        self.built, self.scenario, self.budget, self.defence = built, scenario, budget, defence
        self.lang = scenario.effective_lang()
        self.spent = 0
        self.requests: list[dict[str, Any]] = []

    def tool(self) -> Tool:
        return Tool(spec=request_evidence_tool(self.lang), handler=self.serve)

    async def serve(self, use: ToolUse) -> str:
        """Answer one call (also a call to another tool, or one without a path: answered as an unknown path)."""
        path = call_path(use)
        status, value = serve_request(self.built, self.scenario, path) if path else ("unknown", None)
        source = self.scenario.sources.get(path.split(".")[0]) if path else None
        cost = 0 if status == "unknown" else (source.cost if source else 1)
        if self.spent + cost > self.budget:
            status, cost = "exhausted", 0
        self.spent += cost
        self.requests.append({"path": path, "status": status, "cost": cost, "protocol": use.protocol})
        shown = mark_untrusted(json.dumps(value, ensure_ascii=False), self.defence) if status == "granted" else ""
        return evidence_reply(self.lang, path, status, shown, self.budget - self.spent, self.built.view.requestable)

    @property
    def denied(self) -> int:
        return sum(1 for r in self.requests if r["status"] == "denied")


def call_path(use: ToolUse) -> str:
    """The path a call asks for; "" for a call to another tool or without a path. A native call's path is
    stripped; a path written as JSON text is taken as written."""
    path = use.arguments.get("path") if use.name == TOOL else None
    if not isinstance(path, str):
        return ""
    return path.strip() if use.protocol == "native" else path


def json_request(text: str) -> list[ToolUse]:
    """The request a reply writes as JSON text: ``{"action": "request_evidence" | "request", "path": P}``, a
    ``{"name": "request_evidence", "arguments": {"path": P}}`` tool call, or a bare ``{"path": P}`` with no
    answer; none for an answer (or text with no JSON)."""
    parsed = parse_answer(text)
    if not isinstance(parsed, Answer) or not parsed.path:
        return []
    asks = parsed.action in (TOOL, "request") or (parsed.action is None and parsed.answer is None)
    return [ToolUse(name=TOOL, arguments={"path": parsed.path})] if asks else []
