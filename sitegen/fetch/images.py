"""Image downloads: the second HTTP user, for images hosted anywhere (ARCHITECTURE.md).

Role: fetch each image URL the site shows, once, concurrently within a limit, each
under its own deadline and all of them under the images stage's (`[images] budget`: the
URLs not started by then are left out of the answer, those still unanswered fail as
`Failed.cut`), its body streamed and cut off past `max_bytes`. Only http(s) URLs are
requested; redirects are followed here (at most `MAX_REDIRECTS`) and each hop, the first
included, must be http(s) and must not resolve to a private, loopback, link-local or
otherwise non-public address (`Failed.nonpublic`), unless it is the service's exact
origin (the scheme, host and port of `[api] url`: the emulator on 127.0.0.1:8000 is
allowed, not another port there, nor its addresses under another name). The addresses
checked are the ones connected to: a host is resolved once per build, and each request
goes to one of those addresses (`pinned`: the URL names the address, the `Host` header
the name, and TLS sends and verifies the name: `sni_hostname`), so a DNS answer that
changes after the check (rebinding) is never asked; each host has its own connections,
never shared with another name on the same address. Requests to the service's own origin
may go through the build's transport (the in-process demo emulator).
It must never send a credential (no API key, no cookie, no auth header) to any host,
never decode an image (`sitegen.images.process` does), and never write anything.

Each failure says whether it is permanent (`Failed.permanent`: the host answered for good
— a 4xx but 408 and 429, too many redirects, a redirect or address refused, over
`max_bytes` — so the build remembers it and asks no more) or passing (a timeout, a
connection error, a 5xx, 408, 429, a host that does not resolve: tried again next time).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from sitegen import __version__

MAX_REDIRECTS = 5
_REDIRECT_STATUS = {301, 302, 303, 307, 308}


@dataclass(frozen=True, slots=True)
class Downloaded:
    """An image's bytes as served, with the validators the host sent."""

    data: bytes
    etag: str = ""
    modified: str = ""


@dataclass(frozen=True, slots=True)
class Failed:
    """Why an image could not be fetched (one phrase, no URL: the caller names it), and
    whether asking again would answer the same (see the module docstring)."""

    reason: str
    permanent: bool = False
    #: Refused for its address: a page must not link to it (visitors' browsers would ask).
    nonpublic: bool = False
    #: Asked, and still unanswered when the images stage's budget ran out.
    cut: bool = False


@dataclass(slots=True)
class Counts:
    """Image requests made (every HTTP request, redirects included), apart from API calls."""

    requests: int = 0
    downloaded: int = 0
    failed: int = 0


class Refused(Exception):
    """A hop that must not be requested or a body not taken (the message says why)."""

    def __init__(self, reason: str, *, permanent: bool = True, nonpublic: bool = False
                 ) -> None:
        super().__init__(reason)
        self.permanent = permanent
        self.nonpublic = nonpublic


#: Statuses that say "not now" rather than "never": asked again on the next build.
_PASSING_STATUS = {408, 429}


def _port(url: httpx.URL) -> int:
    return url.port if url.port is not None else (443 if url.scheme == "https" else 80)


async def pinned(client: httpx.AsyncClient, url: httpx.URL, address: str) -> httpx.Response:
    """GET *url* from the server at *address* (no lookup of its host): the request goes to
    that address, with the URL's host in `Host` and, over TLS, as the name sent (SNI) and
    verified against the certificate. The answer's head is read, its body not yet."""
    request = client.build_request(
        "GET", url.copy_with(host=address), headers={"host": url.netloc.decode("ascii")},
        extensions={"sni_hostname": url.host} if url.scheme == "https" else None)
    return await client.send(request, stream=True)


@dataclass
class ImageFetcher:
    """Downloads images under the limits above; `service` is `[api] url`."""

    service: str
    max_bytes: int
    timeout: float
    concurrency: int = 8
    transport: httpx.AsyncBaseTransport | None = None  #: for the service's own origin only
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        url = httpx.URL(self.service)
        self._service_origin = (url.scheme, url.host.lower(), _port(url))
        self._lookups: dict[str, asyncio.Future[list[str]]] = {}  #: one per host, per fetch_all
        self._started: set[str] = set()  #: the URLs asked (past the concurrency limit)
        self._hosts: dict[str, httpx.AsyncClient] = {}  #: one client per host, per fetch_all

    def fetch_all(self, urls: Iterable[str], deadline: float | None = None
                  ) -> dict[str, Downloaded | Failed]:
        """Every URL of *urls* fetched (absolute http(s) URLs), each to bytes or a failure,
        until *deadline* (`time.monotonic()`): a URL asked and unanswered then fails as
        `cut`, one not asked yet is left out."""
        wanted = sorted(set(urls))
        if not wanted:
            return {}
        return asyncio.run(self._all(wanted, deadline))

    async def _all(self, urls: list[str], deadline: float | None
                   ) -> dict[str, Downloaded | Failed]:
        limit = asyncio.Semaphore(self.concurrency)
        self._lookups, self._started, self._hosts = {}, set(), {}
        async with self._client() as web:
            service = self._client(self.transport) if self.transport is not None else web
            try:
                async def one(url: str) -> Downloaded | Failed:
                    async with limit:
                        self._started.add(url)
                        return await self._one(url, web, service)

                tasks = {url: asyncio.ensure_future(one(url)) for url in urls}
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                _, pending = await asyncio.wait(tasks.values(), timeout=left)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
            finally:
                for client in [*self._hosts.values(), *([service] if service is not web
                                                        else [])]:
                    await client.aclose()
        found = {url: task.result() if task not in pending else Failed(
                     "it did not answer before the images stage's budget ran out", cut=True)
                 for url, task in tasks.items() if task not in pending or url in self._started}
        self.counts.downloaded += sum(isinstance(r, Downloaded) for r in found.values())
        self.counts.failed += sum(isinstance(r, Failed) for r in found.values())
        return found

    def _client(self, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
        """A client of the fetcher's rules: no redirect followed, nothing from the
        environment (no proxy, no netrc), each image's one deadline (`timeout`, below:
        httpx's own, 5 s a phase, not less)."""
        return httpx.AsyncClient(
            headers={"user-agent": f"sitegen/{__version__} (image fetch)", "accept": "image/*"},
            follow_redirects=False, trust_env=False, timeout=httpx.Timeout(self.timeout),
            transport=transport)

    def _host(self, host: str) -> httpx.AsyncClient:
        """The client of the requests pinned to *host*'s addresses (its own connections)."""
        client = self._hosts.get(host)
        if client is None:
            client = self._hosts[host] = self._client()
        return client

    async def _one(self, url: str, web: httpx.AsyncClient,
                   service: httpx.AsyncClient) -> Downloaded | Failed:
        try:
            async with asyncio.timeout(self.timeout):
                return await self._follow(url, web, service)
        except TimeoutError:
            return Failed(f"it took longer than {self.timeout:g} s")
        except Refused as error:
            return Failed(str(error), error.permanent, error.nonpublic)
        except httpx.InvalidURL:
            return Failed("it is not a valid URL", permanent=True)
        except Exception as error:  # noqa: BLE001 - (httpx's errors, and any other: passing)
            return Failed(f"the request failed ({type(error).__name__})")

    async def _follow(self, url: str, web: httpx.AsyncClient,
                      service: httpx.AsyncClient) -> Downloaded | Failed:
        target = httpx.URL(url)
        for _ in range(MAX_REDIRECTS + 1):
            addresses = await self._check(target)
            self.counts.requests += 1
            if addresses is None:  # (the service's own origin: by its name)
                own = service if self.transport is not None else web
                response = await own.send(own.build_request("GET", target), stream=True)
            else:
                response = await self._open(target, addresses)
            try:
                if response.status_code in _REDIRECT_STATUS:
                    location = response.headers.get("location", "")
                    try:
                        target = target.join(location)
                    except httpx.InvalidURL:
                        raise Refused("it redirects to an invalid URL") from None
                    continue
                status = response.status_code
                if status != 200:
                    return Failed(f"the host answered HTTP {status}",
                                  status < 500 and status not in _PASSING_STATUS)
                return Downloaded(await self._body(response),
                                  response.headers.get("etag", ""),
                                  response.headers.get("last-modified", ""))
            finally:
                await response.aclose()
        return Failed(f"it redirects more than {MAX_REDIRECTS} times", permanent=True)

    async def _open(self, target: httpx.URL, addresses: list[str]) -> httpx.Response:
        """GET *target* from the first of its host's checked *addresses* that connects."""
        client = self._host(target.host.lower())
        failure: httpx.ConnectError | None = None
        for address in addresses:
            try:
                return await pinned(client, target, address)
            except httpx.ConnectError as error:
                failure = error
        assert failure is not None  # (a host resolves to one address at least)
        raise failure

    async def _body(self, response: httpx.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise Refused(f"it is larger than max_bytes ({self.max_bytes:,} bytes)")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > self.max_bytes:
                raise Refused(f"it is larger than max_bytes ({self.max_bytes:,} bytes)")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _check(self, url: httpx.URL) -> list[str] | None:
        """Refuse a hop that must not be requested; the addresses checked, to connect to
        (None: the service's own origin, asked by its name)."""
        if url.scheme not in ("http", "https"):
            raise Refused(f"it leads to a {url.scheme or 'relative'}: URL (http and https only)")
        host = url.host.lower()
        if not host:
            raise Refused("it leads to a URL without a host")
        if (url.scheme, host, _port(url)) == self._service_origin:  # (the exact origin only)
            return None
        addresses = await self._resolve(host, _port(url))
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            if not ip.is_global:
                raise Refused(f"it leads to a non-public address ({ip})", nonpublic=True)
        return addresses

    async def _resolve(self, host: str, port: int) -> list[str]:
        """The addresses of *host*, looked up once per `fetch_all`: one host usually serves
        many images, and a host that does not resolve may take the resolver's timeout."""
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        lookup = self._lookups.get(host)
        if lookup is None:
            lookup = self._lookups[host] = asyncio.ensure_future(self._lookup(host, port))
            lookup.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(lookup)  # one image's deadline must not cancel the others'

    @staticmethod
    async def _lookup(host: str, port: int) -> list[str]:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port or None, type=socket.SOCK_STREAM)
        except OSError:
            raise Refused(f"its host {host} cannot be resolved", permanent=False) from None
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))  # (the resolver's order)
        if not found:
            raise Refused(f"its host {host} cannot be resolved", permanent=False)
        return found
