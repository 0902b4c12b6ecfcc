"""The `_headers` file: immutable hashed assets, security headers, the beacon's origin only."""

from __future__ import annotations

from sitegen.emit.headers import (
    IMMUTABLE,
    REVALIDATE,
    SHORT,
    cache_control,
    content_security_policy,
    origin_of,
    render_headers,
)


def test_headers_file_rules() -> None:
    text = render_headers("", None).decode()
    rules = [line for line in text.splitlines() if line and not line.startswith(("#", " "))]
    assert rules == ["/*", "/static/*", "/media/*"]
    static = text[text.index("/static/*"):]
    assert "Cache-Control: public, max-age=31536000, immutable" in static
    media = text[text.index("/media/*"):]
    assert media.splitlines()[1] == "  Cache-Control: public, max-age=31536000, immutable"
    assert text.count("Cache-Control") == 2  # pages keep the host's short default
    assert "X-Content-Type-Options: nosniff" in text
    assert "Referrer-Policy: strict-origin-when-cross-origin" in text
    assert "connect-src 'self';" in text
    assert "/blog/static/*" in render_headers("/blog/", None).decode()
    assert "/blog/media/*" in render_headers("/blog/", None).decode()
    searching = render_headers("", None, search=True).decode()
    assert [line for line in searching.splitlines() if line.startswith("/")] == [
        "/*", "/static/*", "/media/*", "/pagefind/:shard/fragment/*", "/pagefind/:shard/index/*",
        "/pagefind/:shard/filter/*", "/pagefind/pagefind-ui.js", "/pagefind/pagefind-ui.css",
        "/pagefind/pagefind-modular-ui.js", "/pagefind/pagefind-modular-ui.css",
        "/pagefind/pagefind-component-ui.js", "/pagefind/pagefind-component-ui.css",
        "/pagefind/pagefind-highlight.js", "/pagefind/:shard/pagefind.js",
        "/pagefind/:shard/pagefind-worker.js"]
    ui = searching[searching.index("/pagefind/pagefind-ui.js"):]
    assert ui.splitlines()[1] == "  Cache-Control: public, max-age=600, must-revalidate"


def test_pagefind_scripts_are_cached_briefly_for_deploy_too() -> None:
    """Pagefind's scripts and stylesheets keep their names from version to version: a
    short lifetime, then revalidation, never immutable; its hashed chunks a year."""
    for path in ("pagefind/pagefind-ui.js", "pagefind/pagefind-ui.css",
                 "pagefind/en-0/pagefind.js", "pagefind/fr-3/pagefind-worker.js"):
        assert cache_control(path) == SHORT, path
    assert cache_control("pagefind/en-0/fragment/en_309ee5d.pf_fragment") == IMMUTABLE
    for path in ("pagefind/en-0/pagefind-entry.json", "pagefind/shards.json",
                 "pagefind/en-0/wasm.en.pagefind", "pagefind/a/b/pagefind.js",
                 "pagefind-ui.js"):
        assert cache_control(path) == REVALIDATE, path


def test_hashed_images_are_immutable_for_deploy_too_and_nothing_else_under_media_is_made(
) -> None:
    """`media/` holds only the images stage's `<hash12>-<width>.<ext>` files: its rule is
    the deploy's Cache-Control as well."""
    assert cache_control("media/0123456789ab-480.webp") == IMMUTABLE
    assert cache_control("media/0123456789ab-1600.jpg") == IMMUTABLE
    assert cache_control("mediathek/index.html") == REVALIDATE
    assert cache_control("index.html") == REVALIDATE


def test_the_policy_names_the_beacon_origin_and_nothing_looser() -> None:
    policy = content_security_policy("https://api.example.test:8443/api/v2/workspaces/w/analytics")
    assert "connect-src 'self' https://api.example.test:8443;" in policy
    assert "'unsafe-eval'" not in policy and "script-src 'self';" in policy
    assert "style-src 'self';" in policy and "*" not in policy
    assert origin_of("/relative") == ""
