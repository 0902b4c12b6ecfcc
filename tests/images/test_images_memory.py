"""Images across builds: a permanent failure is remembered (the next build asks nothing, warns
the same and shows the same page), a passing one is asked again after a wait that doubles,
`--refresh` asks everything; a relative image never fetched is linked where it lives, at the
service."""

from __future__ import annotations

import re
import socket
from collections import Counter
from pathlib import Path

from sitegen.report import BuildReport
from tests.images.imagehost import SVG, ImageHost, bomb_png, image_host, png
from tests.images.sites import API, build, config, expire_waits, page_of, workspace

PERMANENT = {  # path → (status, headers, body) and the reason the warning gives
    "/gone.png": ((404, {}, b"not found"), "HTTP 404"),
    "/gone-for-good.png": ((410, {}, b"gone"), "HTTP 410"),
    "/forbidden.png": ((403, {}, b"no"), "HTTP 403"),
    "/text.jpg": ((200, {}, b"hello, I am text\n" * 10), "not an image"),
    "/evil.svg": ((200, {}, SVG), "SVG"),
    "/bomb.png": ((200, {}, bomb_png()), "decompression bomb"),
    "/big.png": ((200, {}, png(400, 400) + b"\x00" * 40_000), "max_bytes"),
    "/to-file.png": ((302, {"location": "file:///etc/passwd"}, b""), "file: URL"),
    "/to-metadata.png": ((302, {"location": "http://169.254.169.254/x"}, b""),
                         "non-public address"),
    "/loop.png": ((302, {"location": "/loop.png"}, b""), "redirects more than"),
}
PASSING = {
    "/busy.png": ((503, {}, b"busy"), "HTTP 503"),
    "/limited.png": ((429, {}, b"slow down"), "HTTP 429"),
    "/slow.png": ((200, {"x-slow": "1"}, png()), "longer than"),
}


def closed_port() -> int:
    """A loopback port nothing listens on (a connection to it is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def image_warnings(report: BuildReport) -> list[str]:
    """The report's image warnings, the wait of a passing failure left out."""
    return sorted(WAIT.sub("", w) for w in report.warning_messages if "cannot be used" in w)


WAIT = re.compile(r" \(asked again in \d+ (?:h|days), or now with --refresh\)")


def test_a_permanent_failure_is_asked_once_a_passing_one_after_a_wait_and_refresh_asks_all(
        tmp_path: Path) -> None:
    routes = {path: route for path, (route, _) in {**PERMANENT, **PASSING}.items()}
    routes["/a.png"] = (200, {"etag": '"a"'}, png())
    with image_host(routes) as host:
        refused = f"http://127.0.0.1:{closed_port()}/refused.png"  # (not the service's port)
        names = ["/a.png", *PERMANENT, *PASSING]
        body = "\n\n".join(f"![Picture {n}]({host.url(n)})" for n in names)
        data = workspace(f"{body}\n\n![Refused]({refused})\n\n![Relative](/media/demo/no.png)\n")
        out, cfg = tmp_path / "_site", config(tmp_path, api=host.origin, max_bytes=20_000)

        first = build(cfg, out, data)
        html, warned, hits = page_of(out), image_warnings(first), Counter(host.hits)
        for path, (_, reason) in {**PERMANENT, **PASSING}.items():
            line = next((w for w in warned if host.url(path) + " " in w), "")
            assert reason in line and "The picture test" in line, (path, warned)
        assert any(refused in w and "non-public address (127.0.0.1)" in w and "alt text" in w
                   for w in warned), warned
        assert refused not in html and "Refused" in html  # (its alt text)
        assert any("/media/demo/no.png" in w and "HTTP 404" in w for w in warned), warned
        assert all(hits[path] == 1 for path in names if path != "/loop.png"), hits
        assert hits["/loop.png"] == 6  # the first request and five redirects
        assert all("asked again in 1 h, or now with --refresh" in w
                   for w in first.warning_messages if any(p in w for p in PASSING))

        second = build(cfg, out, data)  # online again: nothing failed is asked, for a while
        assert host.hits == hits and second.images["requests"] == 0
        assert image_warnings(second) == warned and page_of(out) == html
        assert second.images["failed"] == first.images["failed"] == len(warned)

        offline = build(cfg, out, data, offline=True)  # the remembered ones warn offline too
        assert offline.images["requests"] == 0
        assert image_warnings(offline) == warned and page_of(out) == html

        expire_waits(cfg)  # an hour later: only the passing failures are asked again
        later = build(cfg, out, data)
        assert {p: host.hits[p] - hits[p] for p in names if host.hits[p] != hits[p]} == {
            path: 1 for path in PASSING}
        assert image_warnings(later) == warned and page_of(out) == html
        assert all("asked again in 2 h" in w  # the wait doubles with each failure in a row
                   for w in later.warning_messages if any(p in w for p in PASSING))

        before = Counter(host.hits)
        again = build(cfg, out, data, refresh=True)  # --refresh asks every URL again
        assert all(host.hits[p] > before[p] for p in names), (host.hits, before)
        assert image_warnings(again) == warned and page_of(out) == html

        before = Counter(host.hits)  # other limits: what failed for good is asked again, once
        larger = build(config(tmp_path, api=host.origin, max_bytes=200_000), out, data)
        assert all(host.hits[p] == before[p] + 1 for p in names if p not in (
            "/a.png", "/loop.png", *PASSING)), (host.hits, before)
        assert all(host.hits[p] == before[p] for p in PASSING)  # (still waiting)
        assert not any(host.url("/big.png") in w for w in image_warnings(larger))
        big = re.search(r'<img [^>]*alt="Picture /big.png"[^>]*>', page_of(out))
        assert big is not None and 'src="/media/' in big.group(0)


def test_a_refresh_that_fails_for_a_moment_keeps_the_stored_image(tmp_path: Path) -> None:
    with image_host({"/a.png": (200, {}, png(300, 200))}) as host:
        data = workspace(f"![Kept]({host.url('/a.png')})\n")
        out, cfg = tmp_path / "_site", config(tmp_path, api=host.origin)
        build(cfg, out, data)
        html = page_of(out)
        host.routes["/a.png"] = (503, {}, b"busy")
        report = build(cfg, out, data, refresh=True)
        assert host.hits["/a.png"] == 2 and not image_warnings(report)
        assert page_of(out) == html and 'src="/media/' in html


def test_a_relative_image_never_fetched_is_never_linked_at_the_service_then_made_local(
        tmp_path: Path, host: ImageHost) -> None:
    """Offline (or with image fetching off), a root-relative image URL the store has no bytes
    of is shown as an image that cannot be used (its alt text), with one warning: never a
    link to the service's own media (the issue's offline build hot-linked every image), nor
    to the built site, which has no such file. Online, it is made local."""
    data = workspace("![Rel](/media/demo/rail-lines.jpg)\n\nText.\n")
    out, cfg = tmp_path / "_site", config(tmp_path)
    absolute = f"{API}/media/demo/rail-lines.jpg"
    first = build(cfg, out, data, fetch_images=False)
    assert first.images["requests"] == 0
    assert absolute not in page_of(out) and "Rel" in page_of(out)
    assert '<img src="/media/demo/' not in page_of(out)
    assert [w for w in first.warning_messages if "were never fetched" in w]
    offline = build(cfg, out, data, offline=True)
    assert offline.images["requests"] == 0 and absolute not in page_of(out)
    online = build(cfg, out, data)
    html = page_of(out)
    assert online.images["requests"] >= 1 and absolute not in html
    assert '<picture><source type="image/webp" srcset="/media/' in html and 'alt="Rel"' in html
