"""`sitegen build` against a service that misbehaves, over real loopback sockets.

Each case first builds from a good answer, then turns the service bad and builds again:
exit 5 (SPEC), the last stderr line one `error:` sentence without the key, the output
folder and the content cache exactly as they were, and the next good build incremental
(no article body fetched again). The builds run as `python -m sitegen` subprocesses.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fetch.hostile import (
    WS,
    Hostile,
    Reply,
    Request,
    article,
    endless_chunks,
    good_v2,
    json_answer,
    redirect,
    trickle,
)

KEY = "hostile-test-KEY-0123456789"
ARTICLES = [article(n) for n in range(1, 121)]  # two listing pages of 100
LISTING = f"/api/v2/workspaces/{WS}/articles"
#: Runs a command and reports its peak resident memory (KiB) on the last stderr line.
MEASURED = ("import resource, subprocess, sys\n"
            "done = subprocess.run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(done.returncode)\n")


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def build(site: Path, *flags: str) -> tuple[int, list[str], float, int]:
    """Exit status, stderr lines, seconds and peak RSS (KiB) of `sitegen build`."""
    env = {**os.environ, "SITEGEN_API_KEY": KEY}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, sys.executable, "-m", "sitegen", "build", "-q",
         "-c", str(site / "site.toml"), *flags],
        env=env, capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    return done.returncode, lines[:-1], time.monotonic() - started, int(lines[-1])


def write_site(root: Path, url: str, **api: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    settings = "".join(f"{name} = {json.dumps(value)}\n" for name, value in api.items())
    (root / "site.toml").write_text(
        f'[site]\ntitle = "Hostile"\nurl = "https://site.test/"\n\n'
        f'[api]\nurl = "{url}"\nworkspace = "{WS}"\n{settings}', encoding="utf-8")
    return root


def repeat_first_page(request: Request) -> bytes:
    query = {**request.query, "skip": "0"}
    return good_v2(Request(request.method, f"{request.path}?" + "&".join(
        f"{k}={v}" for k, v in query.items()), request.headers), ARTICLES)


def listing(bad: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    """The good service, but *bad* answers the article listing."""
    return lambda request: bad(request) if request.path == LISTING else good_v2(request,
                                                                                ARTICLES)


def slow_bodies(request: Request) -> Reply:
    """Every article changed and listed without its body; each body trickles in."""
    if request.path == LISTING:
        lean = [{**{k: v for k, v in a.items() if k not in ("content", "blocks")},
                 "updatedAt": "2025-01-01T00:00:00.000Z"} for a in ARTICLES]
        return good_v2(request, lean)
    if request.path.startswith(LISTING + "/"):
        return trickle(every=2.0)
    return good_v2(request, ARTICLES)


CASES: dict[str, tuple[Callable[[Request], Reply], dict[str, Any], tuple[str, ...], str]] = {
    "error object": (listing(lambda r: json_answer({"error": "Service temporarily unavailable"})),
                     {}, (), "without its 'articles' list"),
    "empty object": (listing(lambda r: json_answer({})), {}, (), "without its 'articles' list"),
    "repeated first page": (listing(repeat_first_page), {}, ("--refresh",),
                            "only repeats records already read"),
    "one byte every 2 s": (lambda r: trickle(every=2.0), {"timeout": 2.5, "retry_budget": 4.0},
                           (), "no complete answer within"),
    # 120 bodies, 8 at a time: the budget is each request's, not spent queueing behind others
    "every body one byte every 2 s": (slow_bodies, {"timeout": 2.5, "retry_budget": 4.0}, (),
                                      "no complete answer within"),
    "endless chunked body": (lambda r: endless_chunks(), {}, (), "answered more than 32 MiB"),
    # refused before any connection to it (the key-stays-home test below has a live target)
    "redirect to another origin": (lambda r: redirect("http://127.0.0.2:9" + r.target), {}, (),
                                   "another origin"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_misbehaving_service_fails_the_build_and_changes_nothing(
        tmp_path: Path, case: str) -> None:
    bad, api, flags, cause = CASES[case]
    state = {"bad": False}

    def reply(request: Request) -> Reply:
        return bad(request) if state["bad"] else good_v2(request, ARTICLES)

    with Hostile(reply) as service:
        site = write_site(tmp_path, service.url, **{"retry_budget": 3.0, **api})
        status, errors, _, _ = build(site)
        assert status == 0, errors
        output, cache = tree(site / "_site"), tree(site / ".sitegen")
        assert len([p for p in output if p.endswith("/index.html")]) > 120

        state["bad"] = True
        status, errors, seconds, peak_kib = build(site, *flags)
        assert status == 5, errors
        last = errors[-1]
        assert last.startswith("error: ") and cause in last, last
        assert KEY not in "\n".join(errors) and "Traceback" not in "\n".join(errors)
        assert last.count(". ") == 0  # one sentence
        assert seconds < 20 + 5  # SPEC: retries give up within 20 s (and here within 4)
        assert peak_kib < 400 * 1024, peak_kib  # memory bounded, whatever the body
        assert tree(site / "_site") == output and tree(site / ".sitegen") == cache

        state["bad"] = False
        service.requests.clear()
        status, errors, _, _ = build(site)
        assert status == 0, errors
        assert not [r for r in service.requests if r.path.startswith(LISTING + "/")]
        assert tree(site / "_site") == output


def test_a_redirect_to_another_origin_fails_the_build_and_the_key_stays_home(
        tmp_path: Path) -> None:
    with Hostile(lambda request: good_v2(request, ARTICLES)) as elsewhere, \
            Hostile(lambda request: redirect(elsewhere.url + request.target)) as home:
        site = write_site(tmp_path, home.url)
        status, errors, seconds, _ = build(site)
    assert status == 5, errors
    last = errors[-1]
    assert last.startswith("error: ") and elsewhere.origin in last and KEY not in last
    assert "another origin" in last and seconds < 20
    assert elsewhere.requests == []
    assert not (site / "_site").exists()
