"""The headers each uploaded object carries, what is never uploaded, and the redirects.

Role: Content-Type by the rule the preview serves with (`emit.mediatypes`: from the
file's name, an `.xml` file by its first bytes, so a feed is Atom), Cache-Control by the
very rule the `_headers` file states (`emit.headers.cache_control`: immutable for hashed
assets, revalidate for the rest), which files of the output are never uploaded (`published`:
the host files `_headers` and `_redirects`, which an object store never reads and whose
rules the deploy applies itself, and sitegen's own bookkeeping, the manifest), and, from
the output's `_redirects` file (`old new 301`), the object of each old path with the
address it redirects to (S3's website-redirect metadata). This module must never touch the
network, the store or the file system.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from sitegen.emit.headers import cache_control
from sitegen.emit.manifest import path_problem
from sitegen.emit.mediatypes import content_type
from sitegen.emit.redirects import REDIRECTS_FILE, output_path
from sitegen.outputnames import MANIFEST_NAME

#: Files of the output that are instructions for a host or sitegen's own record, not pages:
#: `_headers` (its Cache-Control is each object's), `_redirects` (the redirect pages, and on
#: AWS the website redirects, carry it) and the manifest.
UNPUBLISHED = frozenset({"_headers", REDIRECTS_FILE, MANIFEST_NAME})


def published(path: str) -> bool:
    """Whether the output file *path* becomes an object of the bucket."""
    return path not in UNPUBLISHED


def object_headers(path: str, head: bytes = b"") -> dict[str, str]:
    """`ContentType` and `CacheControl` of the object for *path*, whose bytes begin with
    *head* (boto3's argument names)."""
    return {"ContentType": content_type(path, head), "CacheControl": cache_control(path)}


def website_redirects(text: str, site_url: str) -> dict[str, str]:
    """Output path of each old URL in `_redirects` → the absolute address it moved to (the
    first line of a source, as Netlify and Cloudflare Pages read it: the owner's lines of a
    merged `static/_redirects` come first).

    *site_url* is `[site] url`: its path is the prefix `_redirects` lines carry, its
    origin makes the new address absolute (S3 accepts `/path` or an http(s) URL).
    """
    parts = urlsplit(site_url)
    base = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    found: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or line.lstrip().startswith("#"):
            continue
        old, new = fields[0], fields[1]
        if base and old.startswith(base + "/"):
            old = old[len(base):]
        if not old.startswith("/") or not new.startswith("/"):
            continue
        key = output_path(old)
        if path_problem(key) is None:
            found.setdefault(key, origin + new)  # the first rule wins, as on the hosts
    return found


__all__ = ["UNPUBLISHED", "content_type", "object_headers", "published", "website_redirects"]
