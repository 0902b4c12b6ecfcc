"""`sitegen serve --drafts` against the real emulator: the drafts reach the drafts preview, at
`/drafts/` only, marked and noindex, their requests in the call ledger; and they reach nothing
else — not the output folder (untouched by the preview), not a later `sitegen build` (any
file, the feed, sitemap and search index included), not the site's store, not the deploy plan.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto.server import ThreadedMotoServer

from sitegen.config import load_config
from sitegen.fetch.drafts import DraftFetcher
from sitegen.fetch.ledger import CallLedger
from tests.deploy.s3server import KEY_ID, SECRET, free_port, s3_client
from tests.preview.draftsite import (
    BANNER,
    BIN,
    DRAFT_SENTENCE,
    DRAFTS,
    KEY,
    emulator,
    environment,
    serving,
    snapshot,
    write_site,
)

#: What must appear nowhere outside the drafts preview: each draft's title and slug (no
#: published record names one), and a sentence of one's body (as bytes, the way a file or the
#: store holds them).
SECRETS = ([title.encode() for title in DRAFTS.values()] + [slug.encode() for slug in DRAFTS]
           + [DRAFT_SENTENCE.encode()])
AWS = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with emulator(tmp_path_factory.mktemp("emulator")) as url:
        yield url


@pytest.fixture(scope="module")
def api_v1_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with emulator(tmp_path_factory.mktemp("emulator-v1"), "--no-v2") as url:
        yield url


@pytest.fixture()
def bucket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(endpoint, bucket) of moto's S3 server on loopback, for `deploy --dry-run`."""
    for name, value in AWS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        s3_client(endpoint).create_bucket(Bucket="drafts-site")
        yield endpoint, "drafts-site"
    finally:
        server.stop()


def sitegen(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`sitegen ARGS` run in *site* as a user types it (the key in the environment)."""
    return subprocess.run([str(BIN / "sitegen"), *args], cwd=site, env=environment(),
                          capture_output=True, text=True, timeout=600)


def readable(path: Path) -> bytes:
    """A file's bytes, unzipped when gzipped (Pagefind's index files are)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def holding_secrets(folder: Path, *, skip: Path | None = None) -> dict[str, list[bytes]]:
    """The files under *folder* (but *skip*) that hold any of `SECRETS`, with those found."""
    found: dict[str, list[bytes]] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or (skip is not None and path.is_relative_to(skip)):
            continue
        data = readable(path)
        hits = [secret for secret in SECRETS if secret in data]
        if hits:
            found[path.relative_to(folder).as_posix()] = hits
    return found


@pytest.mark.parametrize("v1", [False, True], ids=["v2", "v1"])
def test_the_drafts_come_through_the_ledger_and_a_refresh_asks_only_the_listing(
        tmp_path: Path, api: str, api_v1_only: str, v1: bool) -> None:
    config = load_config(write_site(tmp_path, api_v1_only if v1 else api) / "site.toml")
    version = "v1" if v1 else "v2"
    fetcher, ledger = DraftFetcher(), CallLedger(version=version)
    drafts = fetcher.fetch(config, version, key=KEY, ledger=ledger)
    assert sorted(d.title or "" for d in drafts) == sorted(DRAFTS.values())
    assert all(d.status == "draft" and (d.content or d.blocks) for d in drafts)
    listing, detail = (("GET /api/v1/articles", "GET /api/v1/articles/{id}") if v1 else
                       ("GET /api/v2/workspaces/{id}/articles",
                        "GET /api/v2/workspaces/{id}/articles/{id}"))
    assert ledger.by_endpoint() == {listing: 1, detail: 4}
    again = CallLedger(version=version)
    assert [d.id for d in fetcher.fetch(config, version, key=KEY, ledger=again)] == \
        [d.id for d in drafts]
    assert again.by_endpoint() == {listing: 1}  # nothing changed: no body asked again


def test_drafts_reach_the_drafts_preview_and_nothing_else(
        tmp_path: Path, api: str, bucket: tuple[str, str]) -> None:
    endpoint, name = bucket
    site = write_site(tmp_path / "site", api, extra=f"""
        [deploy.production]
        url = "s3://{name}/site"
        endpoint = "{endpoint}"
        """)
    built = sitegen(site, "build")
    assert built.returncode == 0, built.stderr
    output = site / "_site"
    before = snapshot(output)
    assert not holding_secrets(output)

    with serving(site, "--refresh-every", "0.05") as preview:
        assert f"drafts: {preview.url}drafts/" in preview.first_line
        assert preview.process.stdout is not None  # the refresh's cost, drafts included
        assert "(the drafts listing included)" in preview.process.stdout.readline()
        # The drafts' requests are the sync's ledger's: one listing, one body per draft.
        line = preview.wait_for_line("drafts: 4 in the workspace")
        assert "4 bodies fetched (5 API calls)" in line, line
        listing = preview.get("/drafts/")
        assert listing.status_code == 200
        for slug, title in DRAFTS.items():
            assert f'href="/drafts/{slug}/"' in listing.text and title in listing.text
            page = preview.get(f"/drafts/{slug}/")
            assert page.status_code == 200
            assert BANNER in page.text and title in page.text
            assert '<meta name="robots" content="noindex,nofollow">' in page.text
            # never at (nor replacing) a published URL
            assert preview.get(f"/{slug}/").status_code == 404
        assert "Drafts Field Notes" in preview.get("/").text
        for path in ("/", "/feed.xml", "/sitemap.xml", "/page/2/", "/tags/", "/agents/"):
            shown = preview.get(path)
            assert not any(s.decode() in shown.text for s in SECRETS), path
        # A refresh asks the drafts listing again, and no body that did not change.
        preview.wait_for_line("0 bodies fetched (1 API call)")
        preview.wait_for_line("content refresh #1:")
        # Watching works as without --drafts, and an own article.html keeps the banner.
        (site / "templates").mkdir()
        (site / "templates" / "article.html").write_text(
            '{% extends "theme/article.html" %}\n{% block after_body %}'
            "<p>Reviewed by the desk</p>{% endblock %}\n", encoding="utf-8")
        preview.wait_for_line("(template change)")
        page = preview.get("/drafts/rainy-day-edinburgh/").text
        assert "Reviewed by the desk" in page and BANNER in page

    drafts_site = site / ".sitegen" / "preview-drafts" / "site"
    assert (drafts_site / "drafts" / "index.html").is_file()
    # In the drafts preview itself, no feed, sitemap or search index holds a draft.
    leaked = holding_secrets(drafts_site)
    leaked.pop(".sitegen-manifest.json", None)  # (the preview's list of its own files)
    assert leaked and all(path.startswith("drafts/") for path in leaked), leaked
    # The preview never wrote into the output folder, nor a draft into the site's store.
    assert snapshot(output) == before
    store = site / ".sitegen"
    assert not holding_secrets(store, skip=store / "preview-drafts")

    again = sitegen(site, "build")
    assert again.returncode == 0, again.stderr
    assert (output / "pagefind").is_dir() and (output / "feed.xml").is_file()
    assert not holding_secrets(output)
    assert not (output / "drafts").exists()
    # The site's store (and anything else under .sitegen/ but the drafts preview's own).
    assert (store / "store.sqlite").is_file()
    assert not holding_secrets(store, skip=store / "preview-drafts")

    plan = sitegen(site, "deploy", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    said = plan.stdout + plan.stderr
    assert "would upload index.html" in said
    assert "drafts/" not in said and not any(s.decode() in said for s in SECRETS)

    # The drafts preview itself, or a copy of it, is refused (exit 2), nothing sent.
    copied = shutil.copytree(drafts_site, tmp_path / "copied")
    for folder, why in ((drafts_site, "inside the content store's folder"),
                        (copied, "holds drafts/index.html, the drafts listing")):
        refused = sitegen(site, "deploy", "-o", str(folder))
        assert refused.returncode == 2, refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: the output ") and why in lines[0]
        assert "never deployed: run `sitegen build`" in lines[0]
    assert "Contents" not in s3_client(endpoint).list_objects_v2(Bucket=name)


def test_the_refresh_cost_counts_the_drafts_listing(tmp_path: Path) -> None:
    from sitegen.budget import refresh_cost
    from sitegen.config import parse_config

    config = parse_config({"site": {"title": "Budget", "url": "https://b.test/"},
                           "api": {"url": "http://127.0.0.1:9", "workspace": "a" * 24,
                                   "schedule": "0 6 * * *", "monthly_quota": 10_000}}, tmp_path)
    counts: dict[str, int | None] = {"agents": 3, "clusters": 4, "authors": 2,
                                     "social_posts": 0}
    # 7 calls a re-sync, and the drafts listing: 8 a refresh, 1,008 refreshes in a working
    # month; the scheduled builds fetch no draft (213 for the daily builds).
    assert refresh_cost(config, 10, counts, drafts=True) == (
        "background refresh every 10 min: about 8 API calls each (the drafts listing "
        "included), ~8064 a month if serve runs 8 hours every working day; with the "
        "scheduled builds (~213) that is ~8277 a month of the monthly quota of 10000")


def test_drafts_and_offline_contradict(tmp_path: Path) -> None:
    site = write_site(tmp_path, "http://127.0.0.1:9")
    done = subprocess.run([str(BIN / "sitegen"), "serve", "--drafts", "--offline", "--port", "0"],
                          cwd=site, env={**os.environ, "NO_COLOR": "1"}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert "--drafts" in done.stderr.splitlines()[-1] and "--offline" in done.stderr


def test_the_drafts_preview_goes_where_init_told_git_to_look_away(
        tmp_path: Path, api: str) -> None:
    """The drafts preview lives in the store's folder, whatever `[api] cache_dir` names, and
    `sitegen init` git-ignores that folder: no draft is ever a file git would add."""
    site = write_site(tmp_path / "site", api)
    toml = site / "site.toml"
    toml.write_text(toml.read_text().replace("[api]\n", '[api]\ncache_dir = "cache"\n'))
    made = sitegen(site, "init", ".")
    assert made.returncode == 0, made.stderr
    assert "created .gitignore" in made.stdout
    subprocess.run(["git", "init", "-q", str(site)], check=True)
    with serving(site) as preview:
        assert preview.get("/drafts/rainy-day-edinburgh/").status_code == 200
    visible = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=site,
                             capture_output=True, text=True, check=True).stdout.split()
    assert "site.toml" in visible and not [name for name in visible if "drafts" in name], visible
    assert not [name for name in visible if any(s in readable(site / name) for s in SECRETS)]
    drafts_site = site / "cache" / "preview-drafts" / "site"
    assert (drafts_site / "drafts" / "rainy-day-edinburgh" / "index.html").is_file()
    assert not (site / ".sitegen").exists()
