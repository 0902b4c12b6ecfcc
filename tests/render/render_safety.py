"""An HTML scanner for the safety tests: finds anything executable in rendered HTML."""

from __future__ import annotations

import json
from html.parser import HTMLParser

BAD_SCHEMES = ("javascript:", "data:", "vbscript:")
URL_ATTRS = {"href", "src", "action", "formaction", "poster", "data", "srcdoc", "xlink:href"}


class Scanner(HTMLParser):
    """Collects problems: script elements (but allowed ones), on* attributes, bad URLs."""

    def __init__(self, allow_scripts: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.allow_scripts = allow_scripts
        self.problems: list[str] = []
        self._in_script: str | None = None
        self._script_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script":
            kind = values.get("type") or ""
            if not self.allow_scripts:
                self.problems.append(f"script element {attrs}")
            elif kind == "application/ld+json":
                self._in_script = "ld"
            elif "src" in values and kind == "":
                self._in_script = "src"
            else:
                self.problems.append(f"unexpected script {attrs}")
        if tag in {"iframe", "object", "embed", "base", "meta"} and tag != "meta":
            src = values.get("src") or values.get("data") or ""
            if tag != "iframe" or not src.startswith(
                    ("https://www.youtube-nocookie.com/embed/", "https://player.vimeo.com/video/")):
                self.problems.append(f"{tag} element {attrs}")
        for name, value in attrs:
            lowered = name.lower()
            if lowered.startswith("on"):
                self.problems.append(f"event handler {name}={value!r} on <{tag}>")
            if lowered in URL_ATTRS and value is not None:
                compact = "".join(value.split()).lower()
                if compact.startswith(BAD_SCHEMES):
                    self.problems.append(f"bad URL {name}={value!r} on <{tag}>")
            if lowered == "style" and value and "url(" in value.lower():
                self.problems.append(f"style with url() on <{tag}>")
            if tag == "meta" and lowered == "http-equiv":
                self.problems.append("meta http-equiv")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self._script_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_script is not None:
            text = "".join(self._script_text)
            if self._in_script == "src" and text.strip():
                self.problems.append("script with src has inline code")
            if self._in_script == "ld":
                try:
                    json.loads(text)
                except ValueError:
                    self.problems.append("JSON-LD is not valid JSON")
            self._in_script = None
            self._script_text = []


def problems(html: str, allow_scripts: bool = False) -> list[str]:
    """Everything executable found in *html* (empty when it is safe)."""
    scanner = Scanner(allow_scripts)
    scanner.feed(html)
    scanner.close()
    return scanner.problems
