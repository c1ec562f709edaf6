"""The web app as an ASGI application (Starlette): its routes, its errors as JSON, and the guard every request
passes (Host, token, Origin; see access.py). No lock: reads and label writes run in worker threads and the label
store serialises its own appends (an exclusive flock per write), so one slow client never holds up another.

Every response carries a Content-Security-Policy allowing only this server's own script and no inline script; a
label is only accepted as a JSON POST (no cross-site form can send one); the page renders model output with
textContent, never as HTML.
"""

from __future__ import annotations

import json
import mimetypes
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knowgap.errors import KnowgapError
from knowgap.redaction import redact
from knowgap.web.access import TOKEN_COOKIE, TOKEN_QUERY, Access
from knowgap.web.body import CLOSE, BodyLimits, read_body
from knowgap.web.data import RunsView

STATIC = Path(str(files("knowgap.web") / "static"))
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                    "Referrer-Policy": "no-referrer"}


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """``data`` as JSON, secrets redacted (model output can echo a key it was given)."""
    return Response(redact(json.dumps(data, ensure_ascii=False)).encode("utf-8"), status_code=status,
                    headers=headers, media_type="application/json; charset=utf-8")


def svg_response(svg: str) -> Response:
    """An SVG chart drawn by the report code (every text in it escaped), shown by the page as an image."""
    return Response(redact(svg).encode("utf-8"), media_type="image/svg+xml; charset=utf-8")


def _static(name: str) -> Response:
    file = STATIC / name
    if "/" in name or name.startswith(".") or not file.is_file():
        return json_response({"error": "not found"}, 404)
    ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if ctype.startswith("text/") or ctype.endswith("javascript"):
        ctype += "; charset=utf-8"
    return Response(file.read_bytes(), media_type=ctype)


def _routes(view: RunsView, limits: BodyLimits) -> list[Route]:
    """The pages and the JSON API. Plain functions run in Starlette's worker threads; only the label POST reads
    a body on the event loop (within ``limits``) before handing the write to a thread."""

    def q(request: Request, key: str) -> str:
        return request.query_params.get(key, "")

    def run_id(request: Request) -> str:
        return str(request.path_params["run_id"])

    async def add_label(request: Request) -> Response:
        if not request.headers.get("content-type", "").startswith("application/json"):
            return json_response({"error": "labels are sent as application/json"}, 415, CLOSE)
        raw = await read_body(request, limits)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            raise KnowgapError("label request: body is not valid JSON") from None
        if not isinstance(body, dict):
            raise KnowgapError("label request: expected a JSON object")
        event = await run_in_threadpool(view.add_label, run_id(request), body)
        return json_response(event, 201)

    return [
        Route("/", lambda r: _static("index.html")),
        Route("/static/{name}", lambda r: _static(str(r.path_params["name"]))),
        Route("/api/runs", lambda r: json_response(view.runs())),
        Route("/api/compare", lambda r: json_response(view.compare(q(r, "a"), q(r, "b")))),
        Route("/api/compare/scorecard", lambda r: json_response(view.compare_scorecard(q(r, "a"), q(r, "b")))),
        Route("/api/compare/headline.svg",
              lambda r: svg_response(view.headline_svg(q(r, "b"), q(r, "kind"), baseline=q(r, "a")))),
        Route("/api/runs/{run_id}", lambda r: json_response(view.run(run_id(r)))),
        Route("/api/runs/{run_id}/trials", lambda r: json_response(view.trials(run_id(r), q(r, "field")))),
        Route("/api/runs/{run_id}/failures", lambda r: json_response(view.failures(run_id(r)))),
        Route("/api/runs/{run_id}/scorecard", lambda r: json_response(view.scorecard(run_id(r)))),
        Route("/api/runs/{run_id}/headline.svg", lambda r: svg_response(view.headline_svg(run_id(r), q(r, "kind")))),
        Route("/api/runs/{run_id}/trial", lambda r: json_response(view.trial(run_id(r), q(r, "id")))),
        Route("/api/runs/{run_id}/rubric", lambda r: json_response(view.rubric(run_id(r), q(r, "name") or None))),
        Route("/api/runs/{run_id}/agreement",
              lambda r: json_response(view.agreement(run_id(r), q(r, "field"), q(r, "by") or None))),
        Route("/api/runs/{run_id}/labels", add_label, methods=["POST"]),
    ]


async def _knowgap_error(request: Request, exc: Exception) -> Response:
    return json_response({"error": str(exc)}, 400)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    detail = exc.detail if exc.status_code not in (404, 405) else exc.detail.lower()
    return json_response({"error": detail}, exc.status_code, dict(exc.headers or {}))


async def _internal_error(request: Request, exc: Exception) -> Response:
    # the traceback goes to the server's log (uvicorn logs it); the client gets one line
    return json_response({"error": f"internal error ({type(exc).__name__}); see the server's log"}, 500)


class Guard:
    """Checks every request against the server's :class:`Access` before the app sees it, and adds the security
    headers to every response (the guard's own refusals included)."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        request_headers = Headers(scope=scope)
        body_read = (request_headers.get("content-length", "0").strip() == "0"
                     and "transfer-encoding" not in request_headers)

        async def receive_tracked() -> Message:
            nonlocal body_read
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_read = True
            return message

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    headers[key] = value
                if not body_read:  # answered before its body came (or never to be read): no keep-alive after it
                    headers["Connection"] = "close"
            await send(message)

        refusal = self.check(scope)
        if refusal is not None:
            await refusal(scope, receive_tracked, send_secured)
            return
        await self.app(scope, receive_tracked, send_secured)

    def check(self, scope: Scope) -> Response | None:
        """The response refusing this request, or None to let it in."""
        access = self.access
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not access.host_ok(host):
            return json_response({"error": "unknown Host"}, 403, CLOSE)
        if access.token is not None:
            request = Request(scope)
            given = request.query_params.get(TOKEN_QUERY)
            if given is not None and scope["method"] in ("GET", "HEAD") and access.matches(given):
                # a browser opening the printed link: keep the token in a cookie and drop it from the address bar
                # (SameSite=Lax: a link from a report still opens the app; a cross-site POST carries no cookie)
                target = request.url.remove_query_params(TOKEN_QUERY)
                location = quote(target.path) + (f"?{target.query}" if target.query else "")
                redirect = RedirectResponse(location, 303)
                redirect.set_cookie(TOKEN_COOKIE, access.token, httponly=True, samesite="lax", path="/")
                return redirect
            if not access.token_ok(headers.get("authorization"), request.cookies.get(TOKEN_COOKIE)):
                return json_response({"error": "this knowgap server needs its token: open the link knowgap serve "
                                               "printed (ending in ?token=...), or send Authorization: Bearer TOKEN"},
                                     401, {**CLOSE, "WWW-Authenticate": "Bearer"})
        if not access.origin_ok(scope["method"], headers.get("origin"), host):
            return json_response({"error": f"a write from another site (Origin {headers.get('origin', '')[:100]}) "
                                           "is refused"}, 403, CLOSE)
        return None


def create_app(view: RunsView, access: Access, limits: BodyLimits | None = None) -> ASGIApp:
    """The web app over ``view`` (the runs folder), guarded by ``access``; label bodies read within ``limits``."""
    app = Starlette(routes=_routes(view, limits or BodyLimits()),
                    exception_handlers={KnowgapError: _knowgap_error, HTTPException: _http_error,
                                        Exception: _internal_error})
    return Guard(app, access)
