"""The address checked is the address connected to: a host name is resolved once, every
address it gave is checked, and the request goes to one of them while TLS still sends and
verifies the name. (A resolver that answers a public address first and 127.0.0.1 next
used to pass the check and have httpx connect to the second answer: DNS rebinding.)"""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sitegen.fetch.images import Downloaded, ImageFetcher, pinned
from tests.images.imagehost import image_host, png

NAME = "rebind.example.test"
PUBLIC = "93.184.215.14"  #: a global address: it passes the check (nothing of ours is there)


def test_a_rebinding_resolver_s_second_answer_is_never_connected_to(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: Counter[str] = Counter()
    resolve = socket.getaddrinfo  # (the suite's: loopback names only)

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name != NAME:
            return resolve(host, port, *args, **kwargs)
        asked[name] += 1
        address = PUBLIC if asked[name] == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with image_host({"/a.png": (200, {"content-type": "image/png"}, png())}) as host:
        fetcher = ImageFetcher("https://cas.example.test", max_bytes=10**6, timeout=2)
        url = f"http://{NAME}:{host.port}/a.png"
        found = fetcher.fetch_all([url])
    assert sum(host.hits.values()) == 0, host.hits  # (old code: 1, the loopback host's image)
    assert asked[NAME] == 1
    assert not (isinstance(found[url], Downloaded) and found[url].data == png())


def _certificate(names: list[str]) -> tuple[bytes, bytes, bytes]:
    """(CA certificate, leaf certificate, leaf key) in PEM, the leaf valid for *names*."""
    now = datetime.datetime.now(datetime.UTC)

    def make(subject: str, issuer: x509.Name | None, key: Any, signer: Any,
             ca: bool) -> x509.Certificate:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(hours=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName(n) for n in names]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    ca = make("Test CA", None, ca_key, ca_key, True)
    leaf = make(names[0], ca.subject, leaf_key, ca_key, False)
    pem = serialization.Encoding.PEM
    return (ca.public_bytes(pem), leaf.public_bytes(pem), leaf_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


@contextmanager
def tls_host(tmp_path: Path, names: list[str]) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """An HTTPS image host on 127.0.0.1 with a certificate for *names*: (port, the CA's PEM,
    what it saw: the SNI names and Host headers)."""
    ca, leaf, key = _certificate(names)
    (tmp_path / "leaf.pem").write_bytes(leaf)
    (tmp_path / "key.pem").write_bytes(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "leaf.pem", tmp_path / "key.pem")
    seen: dict[str, Any] = {"sni": [], "host": []}
    context.sni_callback = lambda sock, name, ctx: seen["sni"].append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            seen["host"].append(self.headers.get("host"))
            body = png()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], ca, seen
    finally:
        server.shutdown()
        server.server_close()


async def _get(url: str, address: str, ca: bytes) -> httpx.Response:
    verify = ssl.create_default_context(cadata=ca.decode())
    async with httpx.AsyncClient(verify=verify, trust_env=False, timeout=10) as client:
        response = await pinned(client, httpx.URL(url), address)
        await response.aread()
        await response.aclose()
        return response


def test_a_pinned_request_connects_to_the_address_and_tls_verifies_the_name(
        tmp_path: Path) -> None:
    """The name is never looked up (the suite resolves loopback names only): the request
    reaches the pinned address, sends the name as SNI and Host, and the certificate is
    checked against the name."""
    with tls_host(tmp_path, ["images.example.test"]) as (port, ca, seen):
        url = f"https://images.example.test:{port}/a.png"
        response = asyncio.run(_get(url, "127.0.0.1", ca))
        assert response.status_code == 200 and response.content == png()
        assert seen["sni"] == ["images.example.test"]
        assert seen["host"] == [f"images.example.test:{port}"]


def test_a_pinned_request_refuses_a_certificate_for_another_name(tmp_path: Path) -> None:
    with tls_host(tmp_path, ["other.example.test"]) as (port, ca, seen):
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            asyncio.run(_get(f"https://images.example.test:{port}/a.png", "127.0.0.1", ca))
        assert seen["host"] == []
