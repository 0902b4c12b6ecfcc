"""The preview server over a real loopback socket."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from sitegen.errors import ConfigError
from sitegen.preview.app import inject_script
from sitegen.preview.httpserver import PreviewServer
from sitegen.preview.reload import Problem, ReloadChannel

from .conftest import Running, serving


def _raw(running: Running, target: str) -> str:
    """Send a request line exactly as given (clients would normalise `..` away)."""
    port = running.server.server_port
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     "Connection: close\r\n\r\n".encode())
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def test_pages_get_the_live_reload_script_and_no_store(running: Running) -> None:
    response = httpx.get(running.url + "/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    body = response.text
    assert body.index('<script src="/__sitegen/livereload.js"') < body.index("</body>")
    assert f'data-sitegen-build="{running.channel.build_id}"' in body
    # The file on disk is untouched: the script exists only in the response.
    assert "livereload" not in (running.root / "index.html").read_text(encoding="utf-8")


def test_injection_is_case_insensitive_and_appends_without_body() -> None:
    assert inject_script(b"<p>x</BODY>", "a:1").endswith(b"</BODY>")
    assert inject_script(b"<p>x", "a:1").startswith(b"<p>x<script")
    assert b"&lt;" in inject_script(b"", "<x>")


@pytest.mark.parametrize(("path", "kind"), [
    ("/static/style.css", "text/css; charset=utf-8"),
    ("/static/logo.svg", "image/svg+xml; charset=utf-8"),
    ("/feed.xml", "application/atom+xml; charset=utf-8"),
    ("/sitemap.xml", "application/xml; charset=utf-8"),
    ("/__sitegen/livereload.js", "application/javascript; charset=utf-8"),
])
def test_content_types_over_http(running: Running, path: str, kind: str) -> None:
    response = httpx.get(running.url + path)
    assert response.status_code == 200
    assert response.headers["content-type"] == kind
    assert response.headers["cache-control"] == "no-store"
    assert "livereload.js" not in response.text or path.endswith(".js")


def test_directory_redirect_and_404_page(running: Running) -> None:
    redirect = httpx.get(running.url + "/hello?x=1")
    assert redirect.status_code == 301
    assert redirect.headers["location"] == "/hello/?x=1"
    followed = httpx.get(running.url + "/hello", follow_redirects=True)
    assert followed.status_code == 200 and "<p>hi</p>" in followed.text
    missing = httpx.get(running.url + "/nowhere/")
    assert missing.status_code == 404
    assert "missing" in missing.text and "/__sitegen/livereload.js" in missing.text


def test_no_directory_listing(running: Running) -> None:
    response = httpx.get(running.url + "/static/")
    assert response.status_code == 404
    assert "style.css" not in response.text


@pytest.mark.parametrize("target", [
    "/../secret.txt", "/%2e%2e/secret.txt", "/static/%2e%2e%2f%2e%2e%2fsecret.txt",
    "/..%5c..%5csecret.txt", "//etc/passwd", "/etc/passwd",
])
def test_traversal_over_the_wire(running: Running, target: str) -> None:
    answer = _raw(running, target)
    assert answer.startswith("HTTP/1.1 404")
    assert "top secret" not in answer and "root:" not in answer


def test_absolute_path_of_a_real_file_is_not_served(running: Running, tmp_path: Path) -> None:
    answer = _raw(running, (tmp_path / "secret.txt").as_posix())
    assert answer.startswith("HTTP/1.1 404")
    assert "top secret" not in answer


def test_head_and_other_methods(running: Running) -> None:
    head = httpx.head(running.url + "/")
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 0
    post = httpx.post(running.url + "/", content=b"x")
    assert post.status_code == 405 and post.headers["allow"] == "GET, HEAD"


def test_keep_alive_serves_several_requests_on_one_connection(running: Running) -> None:
    with httpx.Client() as client:
        for path in ("/", "/static/style.css", "/hello/"):
            assert client.get(running.url + path).status_code == 200


def test_waiting_page_before_the_first_good_build(tmp_path: Path) -> None:
    with serving(tmp_path / "not-built-yet", ReloadChannel()) as server:
        response = httpx.get(server.url)
        assert response.status_code == 503
        assert "/__sitegen/livereload.js" in response.text


def test_event_stream_sends_hello_then_rebuild_events(running: Running) -> None:
    running.channel.failed(Problem("bad </pre><script>", file="templates/a.html", line=2))
    events: list[tuple[str, dict[str, object]]] = []
    with httpx.stream("GET", running.url + "/__sitegen/events", timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-store"
        name = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
                if len(events) == 1:
                    running.channel.built()
                else:
                    break
    assert events[0][0] == "hello"
    assert events[0][1]["problem"] == {"kind": "build", "file": "templates/a.html", "line": 2,
                                       "message": "bad </pre><script>"}
    assert events[1][0] == "reload"
    assert events[1][1]["build"] == running.channel.build_id


def test_port_in_use_is_a_config_error_naming_it(running: Running) -> None:
    port = running.server.server_port
    with pytest.raises(ConfigError) as caught:
        PreviewServer("127.0.0.1", port, running.root, ReloadChannel())
    message = str(caught.value)
    assert str(port) in message and "--port 0" in message
    assert caught.value.exit_code == 2


def test_port_zero_picks_a_free_port(tmp_path: Path) -> None:
    server = PreviewServer("127.0.0.1", 0, tmp_path, ReloadChannel())
    try:
        assert server.server_port > 0
        assert server.url == f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.stop()
