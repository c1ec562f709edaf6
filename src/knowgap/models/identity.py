"""What a model *is*, as opposed to the spec string that named it.

The response cache and ``--resume`` key on a model's identity (``ChatModel.identity``), so an edited
``scripted:FILE``, a replaced ``local:PATH.gguf`` or the same relative path in another folder is a
different model:

- a GGUF file: ``gguf:sha256:<hex>`` of its bytes (an embedded pack: the sha256 it is verified against), with
  ``;decoding=batched`` when the in-process provider decodes concurrent calls together (``KNOWGAP_PARALLEL`` other
  than 1): a batched call's text differs from a single-stream one's in a measured share of calls (floating-point
  detail of the batched kernels; docs/scale.md), so the two modes never answer each other from the cache and a run
  is not resumed in the other mode (:func:`gguf_identity`);
- a scripted file: ``scripted:sha256:<hex>`` of its bytes;
- an HTTP provider: ``<provider>:<model>@<resolved base URL>``, with any credentials in the URL removed.

Hashing a multi-GB GGUF file takes seconds, so file hashes are remembered in ``KNOWGAP_HOME/file_hashes.json``
by (absolute path, size, mtime); a file whose size or mtime changed is hashed again.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from knowgap.models.packs import sha256_file
from knowgap.paths import home

_MEMO = "file_hashes.json"
_LOCK = threading.Lock()


def _memo_file() -> Path:
    return home() / _MEMO


def _read_memo(file: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered_sha256(path: Path) -> str:
    """The sha256 of ``path``, computed once per (absolute path, size, mtime) and remembered."""
    path = path.expanduser().resolve()
    st = path.stat()
    key = str(path)
    with _LOCK:
        memo_file = _memo_file()
        memo = _read_memo(memo_file)
        entry = memo.get(key)
        if (isinstance(entry, dict) and entry.get("size") == st.st_size and entry.get("mtime_ns") == st.st_mtime_ns
                and isinstance(entry.get("sha256"), str)):
            return str(entry["sha256"])
        digest = sha256_file(path)
        memo[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
        tmp = memo_file.with_name(f".{memo_file.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(memo, indent=1), encoding="utf-8")
            os.replace(tmp, memo_file)
        except OSError:  # a read-only home: the hash is still right, only not remembered
            tmp.unlink(missing_ok=True)
        return digest


def gguf_identity(sha256: str, *, batched: bool) -> str:
    """The identity of a GGUF model with this sha256, decoded batched or single-stream."""
    return f"gguf:sha256:{sha256}" + (";decoding=batched" if batched else "")


def url_without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` removed and no trailing slash (the identity of an endpoint)."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    if ":" in (parts.hostname or "") and not host.startswith("["):  # an IPv6 literal keeps its brackets
        host = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme.lower(), host.lower(), parts.path.rstrip("/"), parts.query, "")) or url
