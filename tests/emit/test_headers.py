"""The `_headers` file: immutable hashed assets, security headers, the beacon's origin only."""

from __future__ import annotations

from sitegen.emit.headers import content_security_policy, origin_of, render_headers


def test_headers_file_rules() -> None:
    text = render_headers("", None).decode()
    rules = [line for line in text.splitlines() if line and not line.startswith(("#", " "))]
    assert rules == ["/*", "/static/*"]
    static = text[text.index("/static/*"):]
    assert "Cache-Control: public, max-age=31536000, immutable" in static
    assert text.count("Cache-Control") == 1  # pages keep the host's short default
    assert "X-Content-Type-Options: nosniff" in text
    assert "Referrer-Policy: strict-origin-when-cross-origin" in text
    assert "connect-src 'self';" in text
    assert "/blog/static/*" in render_headers("/blog/", None).decode()


def test_the_policy_names_the_beacon_origin_and_nothing_looser() -> None:
    policy = content_security_policy("https://api.example.test:8443/api/v2/workspaces/w/analytics")
    assert "connect-src 'self' https://api.example.test:8443;" in policy
    assert "'unsafe-eval'" not in policy and "script-src 'self';" in policy
    assert "style-src 'self';" in policy and "*" not in policy
    assert origin_of("/relative") == ""
