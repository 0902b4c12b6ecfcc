"""The API client: the only place sitegen talks HTTP to the content service (the only httpx user).

Role: send authenticated JSON requests to `/api/v1` or `/api/v2`, bounded in concurrency,
retries (`retry.py`) and total calls (`max_calls`), and turn every answer into a JSON object or
one error of `sitegen.errors` (`answers.py`); every request goes in the `CallLedger`. The key
goes only to the configured origin (scheme, host and port of `[api] url`): redirects are
followed here, one to the same origin with the key, one to any other origin (https to http
included) refused and never followed. A host name that does not resolve fails at once
(`UnreachableError` naming the host and `[api] url`: no retry mends it). Each attempt has one
deadline for connect, head and body, within what is left of the retry budget, however the
server trickles; a retry takes the next free slot before requests not yet tried, so a budget
is never spent queueing behind a sync.
A body is streamed and cut off past `MAX_BODY` (far above any listing page or v1 workspace
answer): `UnreachableError`, no retry. A caller's `check` may refuse an answer
(`UnusableAnswer`: retried). It must never put the API key in a message, a log line, a repr or
the ledger (`scrub`), never send it to another origin, never retry 401/402/403, and never
decide what a 404 means (the sync gets `NotFound`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
import urllib.request
from types import TracebackType
from typing import Any

import httpx

from sitegen import __version__
from sitegen.errors import QuotaError, UnreachableError
from sitegen.fetch.answers import Check, UnusableAnswer, decode, judge
from sitegen.fetch.ledger import CallLedger, endpoint_template
from sitegen.fetch.retry import LOOKUP_MAY_PASS, AdaptiveLimit, Transient, backoff, unresolved
from sitegen.fetch.scrub import scrub
from sitegen.workspace import ApiVersion

log = logging.getLogger("sitegen.fetch")

MAX_BODY = 32 * 1024 * 1024  # bytes of one decoded answer (see the module docstring)
MAX_REDIRECTS = 5  # same-origin redirects followed within one attempt
_REDIRECT_STATUS = {301, 302, 303, 307, 308}
_sleep = asyncio.sleep  # the retry pause; tests replace it to observe the delays

Origin = tuple[str, str, int]


class RedirectRefused(UnreachableError):
    """The service redirected to another origin: nothing, the key least of all, went there."""


def origin_of(url: httpx.URL) -> Origin:
    """(scheme, host, port) of *url*, the port filled in from the scheme."""
    scheme = url.scheme.lower()
    port = url.port if url.port is not None else {"http": 80, "https": 443}.get(scheme, 0)
    return scheme, url.host.lower(), port


def origin_text(origin: Origin) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


class ApiClient:
    """Async JSON client for one build: one `httpx.AsyncClient`, one ledger, one budget."""

    def __init__(
        self,
        base_url: str,
        key: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 10.0,
        concurrency: int = 8,
        retry_budget: float = 20.0,
        max_retries: int = 5,
        ledger: CallLedger | None = None,
        max_calls: int | None = None,
        max_body: int = MAX_BODY,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = origin_of(httpx.URL(self.base_url))
        self.__key = key
        self.timeout = timeout
        self.max_body = max_body
        self.retry_budget = retry_budget
        self.max_retries = max_retries
        self.ledger = ledger if ledger is not None else CallLedger()
        self.max_calls = max_calls
        self._started = 0
        self._limit = AdaptiveLimit(concurrency)
        self._random = random.Random()
        self._limits = httpx.Limits(max_connections=max(1, concurrency),
                                    max_keepalive_connections=max(1, concurrency))
        self._given = transport
        # plain http needs no trust store (costly to load); without CAs, TLS fails closed
        verify: ssl.SSLContext | bool = (ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                                         if self.base_url.startswith("http://") else True)
        self._transport = transport if transport is not None else httpx.AsyncHTTPTransport(
            verify=verify, limits=self._limits)
        self._base_headers = {"user-agent": f"sitegen/{__version__}",
                              "accept": "application/json",
                              "accept-encoding": "gzip, deflate"}
        self._http: httpx.AsyncClient | None = None  # the full client, made when first needed
        self._direct = not any(urllib.request.getproxies().get(scheme)
                               for scheme in ("http", "https", "all"))

    def __repr__(self) -> str:
        return f"ApiClient(base_url={self.base_url!r}, key='***')"

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()  # closes a given transport with it
            if self._given is not None:
                return
        await self._transport.aclose()

    @property
    def concurrency(self) -> int:
        """The concurrency in effect now (lower than configured after 429s)."""
        return self._limit.limit

    async def get_json(self, version: ApiVersion, path: str,
                       params: dict[str, Any] | None = None,
                       check: Check | None = None) -> dict[str, Any]:
        """The JSON object at *path*; *check* may refuse it (`UnusableAnswer`: retried)."""
        return await self._request("GET", version, path, params=params, check=check)

    async def put_json(self, version: ApiVersion, path: str,
                       body: dict[str, Any]) -> dict[str, Any]:
        return await self._request("PUT", version, path, body=body)

    async def post_json(self, version: ApiVersion, path: str,
                        body: dict[str, Any]) -> dict[str, Any]:
        return await self._request("POST", version, path, body=body)

    # --- one exchange ------------------------------------------------------------

    async def _open(self, request: httpx.Request) -> httpx.Response:
        """Send *request*; the answer's head is read, its body not yet.

        Straight to the transport when no proxy is configured (`AsyncClient.send` adds
        cookies, auth and hooks this client does not use); else through the httpx client
        (proxies from the environment), made on first use. It never follows redirects.
        """
        if self._direct:
            return await self._transport.handle_async_request(request)
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.base_url, transport=self._given, timeout=self.timeout,
                follow_redirects=False, limits=self._limits, headers=self._base_headers)
        return await self._http.send(request, stream=True, follow_redirects=False)

    async def _send(self, method: str, url: str, endpoint: str, version: ApiVersion,
                    timeout: float, params: dict[str, Any] | None, body: dict[str, Any] | None,
                    hops: list[int]) -> tuple[httpx.Response, bytes]:
        """One exchange, same-origin redirects followed: the answer and its body (at most
        `max_body` bytes); each redirect's status goes into *hops* (the quota counts it)."""
        request = httpx.Request(
            method, self.base_url + url, params=params, json=body,
            headers={**self._base_headers, **self._headers(version)},
            extensions={"timeout": httpx.Timeout(timeout).as_dict()})
        while True:
            response = await self._open(request)
            try:
                location = response.headers.get("location")
                if response.status_code not in _REDIRECT_STATUS or not location:
                    return response, await self._read(response, endpoint)
            finally:
                await response.aclose()
            hops.append(response.status_code)
            if len(hops) > MAX_REDIRECTS:
                raise Transient(f"more than {MAX_REDIRECTS} redirects")
            request = self._redirected(request, response.status_code, location, endpoint,
                                       version)

    def _redirected(self, request: httpx.Request, status: int, location: str, endpoint: str,
                    version: ApiVersion) -> httpx.Request:
        """The request a redirect asks for, if it stays on the configured origin."""
        try:
            target = request.url.join(location)
            origin = origin_of(target)
        except (httpx.InvalidURL, ValueError, TypeError):
            raise UnreachableError(self._scrub(
                f"{endpoint} answered HTTP {status} with an unusable redirect address: check "
                "[api] url, it should be the service's own address")) from None
        if origin != self.origin:
            raise RedirectRefused(self._scrub(
                f"{endpoint} was redirected (HTTP {status}) to {origin_text(origin)}, another "
                f"origin than [api] url's {origin_text(self.origin)}, and the API key is only "
                "ever sent to the configured origin: set [api] url to the service's real "
                "address"))
        method, content = request.method, request.content
        if status == 303 and method != "HEAD" or status in (301, 302) and method not in (
                "GET", "HEAD"):
            method, content = "GET", b""
        headers = {**self._base_headers, **self._headers(version)}
        if content:
            headers["content-type"] = request.headers.get("content-type", "application/json")
        return httpx.Request(method, target, content=content or None, headers=headers,
                             extensions=request.extensions)

    async def _read(self, response: httpx.Response, endpoint: str) -> bytes:
        """The decoded body of *response*, refused past `max_body` bytes (never held whole)."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            raise self._too_large(endpoint)
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_body:
                raise self._too_large(endpoint)
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, endpoint: str) -> UnreachableError:
        return UnreachableError(
            f"{endpoint} answered more than {self.max_body // (1024 * 1024)} MiB, more than "
            "any listing page or article can hold, so it was cut off: check that [api] url "
            "is the service's address")

    def _scrub(self, text: str) -> str:
        return scrub(text, self.__key)

    def _headers(self, version: ApiVersion) -> dict[str, str]:
        return {"x-api-key": f"Bearer {self.__key}" if version == "v1" else self.__key}

    # --- attempts and retries ----------------------------------------------------

    async def _request(self, method: str, version: ApiVersion, path: str, *,
                       params: dict[str, Any] | None = None,
                       body: dict[str, Any] | None = None,
                       check: Check | None = None) -> dict[str, Any]:
        url = f"/api/{version}/{path.lstrip('/')}"
        endpoint = endpoint_template(method, url)
        loop = asyncio.get_running_loop()
        start: float | None = None
        attempt = 0
        while True:
            async with self._limit.slot(retry=attempt > 0):
                if self.max_calls is not None and self._started >= self.max_calls:
                    raise QuotaError(
                        f"--max-calls {self.max_calls} reached before {endpoint}: nothing was "
                        "saved; raise --max-calls or run again later to continue"
                    )
                self._started += 1
                if start is None:
                    start = loop.time()
                # the attempt's deadline: never past the retry budget (none: one attempt)
                remaining = self.retry_budget - (loop.time() - start)
                timeout = (self.timeout if self.retry_budget <= 0
                           else max(0.05, min(self.timeout, remaining)))
                try:
                    answer = await self._attempt(method, url, endpoint, version, attempt > 0,
                                                 timeout, params, body)
                except Transient as failure:
                    if failure.wait is not None or "429" in failure.reason:
                        self._limit.throttle()
                    reason, wait = failure.reason, failure.wait
                    answer = None
                else:
                    self._limit.succeeded()
            if answer is not None:
                # parsed after the slot is freed, so the next request need not wait for it
                await asyncio.sleep(0)
                try:
                    data = decode(*answer)
                    if check is not None:
                        check(data)
                    return data
                except Transient as failure:
                    reason, wait = failure.reason, None
                except UnusableAnswer as failure:
                    reason, wait = self._scrub(str(failure)), None
            attempt += 1
            elapsed = loop.time() - start
            delay = backoff(self._random, attempt, wait)
            if attempt > self.max_retries or elapsed + delay >= self.retry_budget:
                if wait is not None and attempt <= self.max_retries:
                    reason += (f"; the service asked to wait {wait:.0f} s, beyond the "
                               f"{self.retry_budget:.0f} s retry budget")
                raise UnreachableError(self._scrub(
                    f"{endpoint} failed {attempt} time(s) in {elapsed:.1f} s ({reason}): "
                    "check [api] url and your connection, or try again later"
                ))
            log.debug("retrying %s in %.2f s after: %s", endpoint, delay, self._scrub(reason))
            await _sleep(delay)

    async def _attempt(self, method: str, url: str, endpoint: str, version: ApiVersion,
                       retry: bool, timeout: float, params: dict[str, Any] | None,
                       body: dict[str, Any] | None) -> tuple[bytes, str, int]:
        """One exchange under one deadline: the body, content type and status of a 2xx
        answer, else raises (`answers.judge`)."""
        hops: list[int] = []
        try:
            async with asyncio.timeout(timeout):
                response, content = await self._send(method, url, endpoint, version, timeout,
                                                     params, body, hops)
        except (httpx.TimeoutException, TimeoutError):
            self._hops(endpoint, hops, retry, failed=True)
            raise Transient(f"no complete answer within {timeout:.1f} s") from None
        except httpx.TransportError as error:
            self._hops(endpoint, hops, retry, failed=True)
            lookup = unresolved(error)
            if lookup is None:
                raise Transient(f"connection failed: {type(error).__name__}") from None
            host = self.origin[1]
            if lookup in LOOKUP_MAY_PASS:
                raise Transient(f"cannot resolve {host}: the name lookup failed") from None
            raise UnreachableError(f"cannot resolve {host}: check [api] url in site.toml "
                                   "(the host name does not exist)") from None
        except (Transient, RedirectRefused):
            self._hops(endpoint, hops, retry, failed=False)
            raise
        except UnreachableError:  # the body was cut off at the size cap
            self._hops(endpoint, hops, retry, failed=True)
            raise
        self._hops(endpoint, hops, retry, failed=False)
        status = response.status_code
        self.ledger.record(endpoint, status, retry=retry, size=len(content))
        judge(status, endpoint, content, response.headers, self._scrub)
        return content, response.headers.get("content-type", ""), status

    def _hops(self, endpoint: str, hops: list[int], retry: bool, *, failed: bool) -> None:
        """Ledger the redirect answers of one attempt (and its failed last request)."""
        self._started += len(hops)  # --max-calls counts them too
        for hop in hops:
            self.ledger.record(endpoint, hop, retry=retry)
        if failed:
            self.ledger.record(endpoint, 0, retry=retry)
