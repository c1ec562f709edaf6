"""CLI: ``knowgap serve`` (the local web app). Thin: it starts :func:`knowgap.web.server.make_server`."""

from __future__ import annotations

from typing import Annotated

import typer

from knowgap.command_groups import CommandGroups

RunsDir = Annotated[str | None, typer.Option("--runs-dir", help="Where runs are stored (default ./runs).")]


def serve(runs_dir: RunsDir = None,
          host: Annotated[str, typer.Option(help="Address to bind (default: this machine only).")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8765) -> None:
    """Browse runs, compare two, and label samples in a local web app.

    Example: knowgap serve --runs-dir runs --port 8765
    """
    from knowgap.web.server import make_server

    server = make_server(runs_dir, host, port)
    print(f"knowgap web app on http://{host}:{server.server_address[1]}/  (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def register(app: typer.Typer, groups: CommandGroups) -> None:
    app.command("serve")(serve)
