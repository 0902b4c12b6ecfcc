"""The API client: the only place sitegen talks HTTP to the content service.

Role: send authenticated JSON requests to `/api/v1` or `/api/v2`, bounded in
concurrency (a semaphore that halves on 429 and creeps back up), in retries
(exponential backoff with full jitter, honouring Retry-After and
X-RateLimit-Reset, bounded in count and in seconds) and in total calls
(`max_calls`), and turn every answer into a JSON object or one error of
`sitegen.errors`. Every request is written to the `CallLedger`.

Trusting the service no further than needed:

- The key goes only to the configured origin (scheme, host and port of `[api] url`).
  Redirects are followed here, not by httpx: one to the same origin is followed with
  the key; one to any other origin is refused, never followed without the key either
  (a service that moved is configured anew, not guessed). An https address that
  redirects to http is another origin, so the key never travels in clear text. A
  refused redirect is an `UnreachableError` naming the target's origin only.
- Each attempt has one deadline for everything (connect, head and body): the smaller
  of `timeout` and what is left of the retry budget, so retries end within the budget
  (SPEC: 20 s by default) whatever the server trickles. A missed deadline is retried
  like a timeout, then `UnreachableError`.
- A body is streamed and stops at `MAX_BODY` (32 MiB, decoded): the largest answers
  a build asks for are a listing page of 100 articles with their bodies (generated
  articles average 3.5 KB; a long one of 100-300 KB of Markdown makes a page of a few
  MB at worst) and the v1 workspace answer, which embeds every published article's
  metadata (~0.5 KB each without body: 32 MiB is ~60,000 articles). Past the cap the
  answer is not the service's: `UnreachableError` at once, no retry.
- A caller may pass `check` to say what an answer must hold (a listing its list); an
  answer that fails it is retried like a body that is not JSON, then `UnreachableError`.

It must never put the API key in a message, a log line, a repr or the ledger
(the key only ever lives in request headers; `scrub` removes whole occurrences of
it from any text a service echoes), never send it to another origin, never retry
401/402/403, and never decide what a 404 means (that is the sync's job: it gets
`NotFound`).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import ssl
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

import httpx

from sitegen import __version__
from sitegen.errors import ApiError, AuthError, QuotaError, UnreachableError
from sitegen.fetch.ledger import CallLedger, endpoint_template
from sitegen.fetch.scrub import scrub

log = logging.getLogger("sitegen.fetch")

Version = Literal["v1", "v2"]
BACKOFF_BASE = 0.25  # seconds; attempt n sleeps uniform(0, min(BACKOFF_CAP, base * 2**n))
BACKOFF_CAP = 8.0
SERVER_WAIT_CAP = 30.0  # the longest Retry-After / X-RateLimit-Reset we are willing to honour
_TRANSIENT_STATUS = {408, 425, 429}
MAX_BODY = 32 * 1024 * 1024  # bytes of one decoded answer (see the module docstring)
MAX_REDIRECTS = 5  # same-origin redirects followed within one attempt
_REDIRECT_STATUS = {301, 302, 303, 307, 308}
_sleep = asyncio.sleep  # the retry pause; tests replace it to observe the delays


class NotFound(ApiError):
    """404: the route or the record does not exist; the sync decides what that means."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(f"{endpoint} answered 404 (not found)")
        self.endpoint = endpoint


class UnusableAnswer(Exception):
    """Raised by a `check` given to `get_json`: the answer lacks what the caller needs.

    Its text says what is wrong in a few words ("no 'articles' list"); the client retries
    the request, then fails with `UnreachableError` quoting it.
    """


class RedirectRefused(UnreachableError):
    """The service redirected to another origin: nothing, the key least of all, went there."""


Check = Callable[[dict[str, Any]], None]
Origin = tuple[str, str, int]


def origin_of(url: httpx.URL) -> Origin:
    """(scheme, host, port) of *url*, the port filled in from the scheme."""
    scheme = url.scheme.lower()
    port = url.port if url.port is not None else {"http": 80, "https": 443}.get(scheme, 0)
    return scheme, url.host.lower(), port


def origin_text(origin: Origin) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


class _AdaptiveLimit:
    """A semaphore whose size halves on 429 (min 1) and grows back by one per full round.

    A freed slot is handed straight to the longest waiter (its future completes with the
    slot already counted), so the next request goes out on the loop's next turn, with no
    lock to take again and no waiter woken only to find the slot gone.
    """

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.active = 0
        self._streak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot, then cancelled before using it
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.active -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        while self._waiters and self.active < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter is skipped
                self.active += 1
                waiter.set_result(None)

    def throttle(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._streak = 0

    def succeeded(self) -> None:
        if self.limit >= self.maximum:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self.limit += 1
            self._streak = 0
            self._hand_over()


class _Transient(Exception):
    """An answer worth retrying: 429, 5xx, a timeout, a reset, a body that is not JSON."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


def _server_wait(response: httpx.Response) -> float | None:
    """Seconds the server asked us to wait (Retry-After or X-RateLimit-Reset), if any."""
    retry_after = response.headers.get("retry-after", "").strip()
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(retry_after)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    reset = response.headers.get("x-ratelimit-reset", "").strip()
    if reset:
        try:
            value = float(reset)
        except ValueError:
            return None
        if value > 1e12:  # epoch milliseconds
            value = value / 1000.0 - time.time()
        elif value > 1e9:  # epoch seconds
            value -= time.time()
        return max(0.0, value)
    return None


def _detail(content: bytes) -> str:
    """The service's own error text (`details`, `error`, `message`), cut short."""
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    for name in ("details", "message", "error"):
        value = body.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return ""


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
        self._limit = _AdaptiveLimit(concurrency)
        self._random = random.Random()
        self._limits = httpx.Limits(max_connections=max(1, concurrency),
                                    max_keepalive_connections=max(1, concurrency))
        self._given = transport
        # A plain-http address needs no trust store: loading it costs 0.07-0.14 s of CPU per
        # process. The context without CAs fails closed should anything try TLS through it.
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

    # --- public verbs ------------------------------------------------------------

    async def get_json(self, version: Version, path: str,
                       params: dict[str, Any] | None = None,
                       check: Check | None = None) -> dict[str, Any]:
        """The JSON object at *path*; *check* may refuse it (`UnusableAnswer`: retried)."""
        return await self._request("GET", version, path, params=params, check=check)

    async def put_json(self, version: Version, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._request("PUT", version, path, body=body)

    async def post_json(self, version: Version, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._request("POST", version, path, body=body)

    # --- the machinery -------------------------------------------------------------

    def _full_client(self) -> httpx.AsyncClient:
        """The httpx client (proxies from the environment), made on first use.

        With a given transport it sends through that one; otherwise through its own,
        with the default trust store. It never follows redirects: `_send` does.
        """
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.base_url, transport=self._given, timeout=self.timeout,
                follow_redirects=False, limits=self._limits, headers=self._base_headers)
        return self._http

    async def _open(self, request: httpx.Request) -> httpx.Response:
        """Send *request*; the answer's head is read, its body not yet.

        Straight to the transport when nothing is in between: `AsyncClient.send` spends
        ~0.8 ms of CPU per request on cookies, auth and event hooks this client does not
        use. Through the full client when a proxy is configured.
        """
        if self._direct:
            return await self._transport.handle_async_request(request)
        return await self._full_client().send(request, stream=True, follow_redirects=False)

    async def _send(self, method: str, url: str, endpoint: str, version: Version,
                    timeout: float, params: dict[str, Any] | None, body: dict[str, Any] | None,
                    hops: list[int]) -> tuple[httpx.Response, bytes]:
        """One HTTP exchange (same-origin redirects followed): the answer and its body (at
        most `max_body` bytes); the statuses of the redirects go into *hops*.

        Every redirect answer was a request too (the quota counts it), so its status
        is kept for the ledger. A redirect to another origin is refused before any
        request goes there.
        """
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
                raise _Transient(f"more than {MAX_REDIRECTS} redirects")
            request = self._redirected(request, response.status_code, location, endpoint,
                                       version)

    def _redirected(self, request: httpx.Request, status: int, location: str, endpoint: str,
                    version: Version) -> httpx.Request:
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

    def _headers(self, version: Version) -> dict[str, str]:
        return {"x-api-key": f"Bearer {self.__key}" if version == "v1" else self.__key}

    async def _request(self, method: str, version: Version, path: str, *,
                       params: dict[str, Any] | None = None,
                       body: dict[str, Any] | None = None,
                       check: Check | None = None) -> dict[str, Any]:
        url = f"/api/{version}/{path.lstrip('/')}"
        endpoint = endpoint_template(method, url)
        loop = asyncio.get_running_loop()
        start: float | None = None
        attempt = 0
        while True:
            async with self._limit:
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
                except _Transient as failure:
                    if failure.wait is not None or "429" in failure.reason:
                        self._limit.throttle()
                    reason, wait = failure.reason, failure.wait
                    answer = None
                else:
                    self._limit.succeeded()
            if answer is not None:
                # Decoded (and then validated by the caller) after the request waiting for
                # the slot this one freed has gone out: the slot is not held for the parsing.
                await asyncio.sleep(0)
                try:
                    data = self._decode(*answer)
                    if check is not None:
                        check(data)
                    return data
                except _Transient as failure:
                    reason, wait = failure.reason, None
                except UnusableAnswer as failure:
                    reason, wait = self._scrub(str(failure)), None
            attempt += 1
            elapsed = loop.time() - start
            delay = self._backoff(attempt, wait)
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

    def _backoff(self, attempt: int, wait: float | None) -> float:
        jitter = self._random.uniform(0.0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)))
        if wait is None:
            return jitter
        return min(wait, SERVER_WAIT_CAP) + jitter * 0.1

    async def _attempt(self, method: str, url: str, endpoint: str, version: Version,
                       retry: bool, timeout: float, params: dict[str, Any] | None,
                       body: dict[str, Any] | None) -> tuple[bytes, str, int]:
        """One exchange: the body, content type and status of a 2xx answer, else raises.

        Connect, head and body share one deadline (*timeout*): a server that trickles
        its answer a byte at a time is cut off at it like one that never answers.
        """
        hops: list[int] = []
        try:
            async with asyncio.timeout(timeout):
                response, content = await self._send(method, url, endpoint, version, timeout,
                                                     params, body, hops)
        except (httpx.TimeoutException, TimeoutError):
            self._hops(endpoint, hops, retry, failed=True)
            raise _Transient(f"no complete answer within {timeout:.1f} s") from None
        except httpx.TransportError as error:
            self._hops(endpoint, hops, retry, failed=True)
            raise _Transient(f"connection failed: {type(error).__name__}") from None
        except _Transient:
            self._hops(endpoint, hops, retry, failed=False)
            raise
        except RedirectRefused:
            self._hops(endpoint, hops, retry, failed=False)
            raise
        except UnreachableError:  # the body was cut off at the size cap
            self._hops(endpoint, hops, retry, failed=True)
            raise
        self._hops(endpoint, hops, retry, failed=False)
        status = response.status_code
        self.ledger.record(endpoint, status, retry=retry, size=len(content))
        if 200 <= status < 300:
            return content, response.headers.get("content-type", ""), status
        if status == 401:
            raise AuthError(
                f"the service refused the API key (HTTP 401 on {endpoint}): check that the "
                "variable named by [api] key_env holds a valid, unrevoked key for this workspace"
            )
        if status == 403:
            raise AuthError(
                f"the API key is not allowed here (HTTP 403 on {endpoint}): the key belongs to "
                "another workspace; check [api] workspace and the key"
            )
        if status == 402:
            raise QuotaError(
                f"the workspace's monthly API quota is exhausted (HTTP 402 on {endpoint}): wait "
                "for the monthly reset or upgrade the plan; the cache and site were kept"
            )
        if status == 404:
            raise NotFound(endpoint)
        if status in _TRANSIENT_STATUS:
            raise _Transient(f"HTTP {status}", _server_wait(response) if status == 429 else None)
        if status >= 500:
            reason = self._scrub(_detail(content))
            raise _Transient(f"HTTP {status}{': ' + reason if reason else ''}")
        detail = self._scrub(_detail(content))
        raise ApiError(
            f"the service rejected {endpoint} (HTTP {status}{': ' + detail if detail else ''}): "
            "check [api] workspace, or report it as a sitegen bug if the configuration is right"
        )

    def _hops(self, endpoint: str, hops: list[int], retry: bool, *, failed: bool) -> None:
        """Ledger the redirect answers of one attempt (and its failed last request)."""
        self._started += len(hops)  # --max-calls counts them too
        for hop in hops:
            self.ledger.record(endpoint, hop, retry=retry)
        if failed:
            self.ledger.record(endpoint, 0, retry=retry)

    @staticmethod
    def _decode(content: bytes, content_type: str, status: int) -> dict[str, Any]:
        if not content.strip():
            if status == 204:
                return {}
            raise _Transient("an empty body instead of JSON")
        try:
            data = json.loads(content)
        except ValueError:
            kind = content_type.split(";", 1)[0].strip() or "no content type"
            raise _Transient(f"a body that is not JSON ({kind})") from None
        if not isinstance(data, dict):
            raise _Transient(f"a JSON {type(data).__name__} instead of an object")
        return data
