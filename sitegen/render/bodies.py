"""Rendered article bodies kept between builds, as derived data in the content store.

Role: rendering markdown and blocks is the costliest part of a page, and a body's
HTML depends only on its source (`ArticleView.body_hash`) and on how bodies are
rendered: the `blocks/` templates of the theme chain, sitegen's code and the
libraries that shape its output (the code fingerprint, `sitegen.codeprint`), the
site's base URL (external links) and what the build made of the body's images (`extra`).
`body_fingerprint` hashes exactly that, and `BodyCache` keeps
(fingerprint, body hash) → (HTML, table of contents) in the store's `derived`
table, so a body is never stale. Only the build's main process reads or writes
it (never a forked worker: SQLite connections do not survive fork); workers get
bodies through the Renderer's memory they inherit. This module must never
render, and never hold anything but sanitized HTML produced by this sitegen.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from sitegen.codeprint import code_fingerprint
from sitegen.render.markdown import Heading
from sitegen.store import Store

KIND = "body"
_NESTING = ("{% include", "{% import", "{% from", "{% extends", "{%- include", "{%- import",
            "{%- from", "{%- extends")

#: A body as the theme drew it: its sanitized HTML and its headings (the model's checked
#: source is `sitegen.model.body.Body`).
RenderedBody = tuple[str, list[Heading]]


def body_fingerprint(template_dirs: Iterable[Path], base_url: str, whole_chain: str) -> str:
    """What decides a body's HTML besides its source (see the module docstring).

    *whole_chain* (the theme set's fingerprint) is used instead of the `blocks/`
    files when a block template pulls in another template.
    """
    digest = hashlib.sha256(f"{code_fingerprint()}|{base_url}".encode())
    layers = [folder for folder in template_dirs if (folder / "blocks").is_dir()]
    for layer, folder in enumerate(layers):  # only layers with blocks/ count (their order)
        blocks = folder / "blocks"
        for path in sorted(p for p in blocks.rglob("*") if p.is_file()):
            data = path.read_bytes()
            if any(marker.encode() in data for marker in _NESTING):
                digest.update(f"\x00chain:{whole_chain}".encode())
            digest.update(f"\x00{layer}:{path.relative_to(folder).as_posix()}\x00".encode())
            digest.update(data)
    return digest.hexdigest()[:24]


class BodyCache:
    """(fingerprint, body hash) → rendered body, in the content store (or nowhere).

    With `reuse=False` (`--force`) no stored body is read: every body is rendered again
    and stored anew.
    """

    def __init__(self, store: Store | None, fingerprint: str, *, reuse: bool = True) -> None:
        self.store = store
        self.fingerprint = fingerprint
        self.reuse = reuse
        #: What else keys a body (its images' entries: `Renderer` sets it), by body hash.
        self.extra: Callable[[str], str] | None = None

    def _key(self, body_hash: str) -> str:
        extra = self.extra(body_hash) if self.extra is not None else ""
        return f"{self.fingerprint}:{body_hash}:{extra}" if extra else \
            f"{self.fingerprint}:{body_hash}"

    def get_many(self, hashes: Iterable[str]) -> dict[str, RenderedBody]:
        """The stored bodies among *hashes* (missing ones are simply absent)."""
        if self.store is None or not self.reuse:
            return {}
        keys = {self._key(h): h for h in set(hashes)}
        found: dict[str, RenderedBody] = {}
        for key, value in self.store.derived(KIND, keys).items():
            html, toc = json.loads(value)
            found[keys[key]] = (html, [Heading(*entry) for entry in toc])
        return found

    def save(self, fresh: Mapping[str, RenderedBody], keep: Iterable[str]) -> None:
        """Add *fresh* bodies, and drop every stored body not in *keep* (nor fresh).

        Without fresh bodies nothing is done: the bodies of articles deleted since stay
        until the next build that renders a body.
        """
        if self.store is None or not fresh:
            return
        values = {self._key(h): json.dumps([html, [[t.level, t.id, t.text] for t in toc]],
                                           ensure_ascii=False).encode()
                  for h, (html, toc) in fresh.items()}
        self.store.save_derived(KIND, values, (self._key(h) for h in keep))
