"""CLI: ``knowgap serve`` (the web app). Thin: it starts :func:`knowgap.web.server.make_server`."""

from __future__ import annotations

from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups
from knowgap.web.access import TOKEN_ENV

RunsDir = Annotated[str | None, typer.Option("--runs-dir", help="Where runs are stored (default ./runs).")]


def serve(runs_dir: RunsDir = None,
          host: Annotated[str, typer.Option(help="Address to bind (default: this machine only). Any other address "
                                                 "needs a token: given, or generated and printed once.")]
          = "127.0.0.1",
          port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8765,
          token: Annotated[str | None, typer.Option(
              envvar=TOKEN_ENV, show_default=False,
              help="Require this token of every request (at least 16 characters; prefer the environment "
                   "variable, which other users cannot see in the process list).")] = None) -> None:
    """Browse runs, compare two, and label samples in a web app (several people can label at once).

    Example: knowgap serve --runs-dir runs --port 8765
    """
    from knowgap.web.server import make_server

    server = make_server(runs_dir, host, port, token=token)
    print(f"knowgap web app on {server.url}/  (Ctrl-C stops it)", flush=True)
    if server.access.token_generated:
        print(f"token (printed once, not stored): open {server.url}/?token={server.access.token} "
              "in a browser, or send 'Authorization: Bearer TOKEN'", flush=True)
    elif server.access.token is not None:
        print(f"token required: open {server.url}/?token=YOUR_TOKEN once in a browser, or send "
              "'Authorization: Bearer YOUR_TOKEN'", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def register(app: typer.Typer, groups: CommandGroups) -> None:
    app.command("serve")(serve)
