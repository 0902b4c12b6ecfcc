"""`sitegen deploy` against moto's S3 server on loopback: what is sent, in which order."""

from __future__ import annotations

import logging
from pathlib import Path

import boto3
import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.deploy.marker import MARKER
from sitegen.deploy.plan import INVALIDATE_MAX, invalidation_paths
from sitegen.deploy.run import run_deploy
from sitegen.deploy.s3 import Bucket
from sitegen.emit.headers import IMMUTABLE, REVALIDATE
from sitegen.emit.manifest import Manifest
from sitegen.emulator.demo import demo_transport
from sitegen.errors import StorageUnreachable
from sitegen.outputnames import MANIFEST_NAME
from sitegen.preview.routing import content_type as preview_content_type
from sitegen.workspace import Workspace
from tests.deploy.s3server import (
    Counter,
    build,
    deploy_config,
    listing,
    s3_client,
    site_files,
)
from tests.deploy.s3server import edit_article as _edit
from tests.deploy.s3server import unpublish_article as _unpublish


def _manifest(output: Path) -> dict[str, str]:
    manifest = Manifest.from_bytes((output / MANIFEST_NAME).read_bytes())
    assert manifest is not None
    return {p: e.sha256 for p, e in manifest.files.items()}


def test_the_first_deploy_uploads_every_file_with_its_headers(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    output = build(config, demo_workspace)
    counter = Counter()
    [outcome] = run_deploy(config, bucket_factory=counter.factory)
    files = site_files(output)
    assert listing(s3_endpoint, bucket_name) == files
    assert sorted(counter.puts()) == sorted(files) and len(outcome.uploaded) == len(files)
    assert outcome.listed  # no record yet: the bucket was listed first
    client = s3_client(s3_endpoint)
    page = client.head_object(Bucket=bucket_name, Key="index.html")
    assert page["ContentType"] == "text/html; charset=utf-8"
    assert page["CacheControl"] == REVALIDATE
    assert page["Metadata"]["sha256"] == _manifest(output)["index.html"]
    css = next(p for p in files if p.startswith("static/") and p.endswith(".css"))
    asset = client.head_object(Bucket=bucket_name, Key=css)
    assert asset["ContentType"] == "text/css; charset=utf-8"
    assert asset["CacheControl"] == IMMUTABLE
    assert MANIFEST_NAME not in listing(s3_endpoint, bucket_name)

    again = Counter()
    [second] = run_deploy(config, bucket_factory=again.factory)
    # nothing changed: one HEAD of the marker, no listing, no write
    assert again.sent == [("HEAD", MARKER)] and second.plan.empty


def test_the_site_s_images_are_uploaded_to_be_cached_for_a_year(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    """`media/` holds only hashed image files: each goes up `immutable`, as `_headers` says."""
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    output = config.output_path()
    run_build(config, BuildOptions(output=output, workspace=demo_workspace,
                                   fetch_images=True, transport=demo_transport()))
    media = sorted(p for p in site_files(output) if p.startswith("media/"))
    assert media and "/media/*\n  Cache-Control: " + IMMUTABLE in (
        output / "_headers").read_text()
    run_deploy(config)
    client = s3_client(s3_endpoint)
    for path in (media[0], media[-1]):
        head = client.head_object(Bucket=bucket_name, Key=path)
        assert head["CacheControl"] == IMMUTABLE, path
        assert head["ContentType"].startswith("image/"), path
    page = client.head_object(Bucket=bucket_name, Key="index.html")
    assert page["CacheControl"] == REVALIDATE


def test_a_one_article_rebuild_uploads_the_changed_pages_and_nothing_else(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    output = build(config, demo_workspace)
    run_deploy(config)
    before = _manifest(output)
    build(config, _edit(demo_workspace, -1, "\n\nOne more paragraph, added later.\n"))
    after = _manifest(output)
    changed = sorted(p for p, sha in after.items() if before.get(p) != sha)
    assert 0 < len(changed) < len(after) / 4
    counter = Counter()
    run_deploy(config, bucket_factory=counter.factory)
    removed = sorted(before.keys() - after.keys())  # (the search index's replaced chunks)
    assert sorted(counter.puts()) == changed
    # no listing; one DeleteObjects, last, only for files the site no longer has
    assert [m for m, _ in counter.site()] == ["PUT"] * len(changed) + ["POST"] * bool(removed)
    # the marker: read first, marked "deploying" before the first change, "deployed" last
    assert counter.sent[:2] == [("HEAD", MARKER), ("PUT", MARKER)]
    assert counter.sent[-2:] == [("HEAD", MARKER), ("PUT", MARKER)]
    assert listing(s3_endpoint, bucket_name) == site_files(output)


def test_a_removed_article_is_deleted_after_the_new_pages_are_up(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, concurrency=1)
    output = build(config, demo_workspace)
    run_deploy(config)
    changed, slug = _unpublish(demo_workspace, 0)
    build(config, changed)
    assert not (output / slug).exists()
    counter = Counter()
    [outcome] = run_deploy(config, bucket_factory=counter.factory)
    assert f"{slug}/index.html" in outcome.deleted
    methods = [m for m, _ in counter.site()]
    assert methods[-1] == "POST" and "POST" not in methods[:-1]  # one DeleteObjects, last
    puts = counter.puts()
    html = [i for i, k in enumerate(puts) if k.endswith(".html")]
    others = [i for i, k in enumerate(puts) if not k.endswith((".html", ".xml"))]
    assert html and (not others or max(others) < min(html))  # assets before pages
    assert listing(s3_endpoint, bucket_name) == site_files(output)


def test_an_interrupted_deploy_keeps_pages_after_assets_and_the_next_one_finishes(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, concurrency=2)
    output = build(config, demo_workspace)
    files = site_files(output)
    assets = [p for p in files if not p.endswith((".html", ".xml"))]
    real_put = Bucket.put
    sent: list[str] = []

    def failing(self: Bucket, path: str, *args: object, **kwargs: object) -> str:
        if len(sent) >= len(assets) + 5:
            raise StorageUnreachable("the network went away (test)")
        sent.append(path)
        return real_put(self, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Bucket, "put", failing)
    with pytest.raises(StorageUnreachable):
        run_deploy(config)
    held = listing(s3_endpoint, bucket_name)
    assert 0 < len(held) < len(files)
    assert set(assets) <= set(held)  # every page that is up finds its assets
    monkeypatch.setattr(Bucket, "put", real_put)
    counter = Counter()
    [outcome] = run_deploy(config, bucket_factory=counter.factory)
    assert not outcome.listed  # resumed from the record, no listing
    # every upload the bucket confirmed is recorded, those in flight at the failure too:
    assert len(counter.puts()) == len(files) - len(held)  # nothing is sent twice
    assert listing(s3_endpoint, bucket_name) == files


def test_full_finds_a_bucket_edited_by_hand_and_repairs_it(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    output = build(config, demo_workspace)
    run_deploy(config)
    client = s3_client(s3_endpoint)
    client.delete_object(Bucket=bucket_name, Key="index.html")
    client.put_object(Bucket=bucket_name, Key="stray/notes.txt", Body=b"left by hand")
    client.put_object(Bucket=bucket_name, Key="robots.txt", Body=b"User-agent: *\n")
    quiet = Counter()
    run_deploy(config, bucket_factory=quiet.factory)
    assert quiet.sent == [("HEAD", MARKER)]  # the record alone cannot know
    counter = Counter()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        [outcome] = run_deploy(config, full=True, bucket_factory=counter.factory)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "1 missing, 1 extra, 1 changed" in warnings[0]
    assert sorted(counter.puts()) == ["index.html", "robots.txt"]
    assert outcome.deleted == ["stray/notes.txt"]
    assert listing(s3_endpoint, bucket_name) == site_files(output)


def test_a_lost_record_is_rebuilt_from_a_listing_without_uploading_again(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    build(config, demo_workspace)
    run_deploy(config)
    other = deploy_config(tmp_path / "elsewhere", s3_endpoint, bucket_name)
    other.root.mkdir()
    build(other, demo_workspace)  # a fresh store: no record of the bucket
    counter = Counter()
    [outcome] = run_deploy(other, bucket_factory=counter.factory)
    assert outcome.listed and counter.writes() == []


def test_dry_run_sends_no_write_and_says_what_it_would_do(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    output = build(config, demo_workspace)
    counter = Counter()
    run_deploy(config, dry_run=True, bucket_factory=counter.factory)
    assert counter.writes() == [] and listing(s3_endpoint, bucket_name) == {}
    said = capsys.readouterr().out.splitlines()
    assert "would upload index.html (new pages)" in said
    assert said[-1].startswith(f"deploy test (dry run): {len(site_files(output))} to upload")


def test_website_redirects_carry_the_new_address(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    data = config.model_dump(mode="json")
    data["site"]["redirects"] = {"/old-notes/": "/about/"}
    data["deploy"]["test"]["redirects"] = True
    config = type(config).model_validate({**data, "root": config.root})
    output = build(config, demo_workspace)
    assert (output / "old-notes" / "index.html").is_file()
    run_deploy(config)
    head = s3_client(s3_endpoint).head_object(Bucket=bucket_name, Key="old-notes/index.html")
    assert head["WebsiteRedirectLocation"] == "https://notes.acme.test/about/"


def test_changed_pages_are_invalidated_on_the_cdn(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDFRONT", s3_endpoint)
    cloudfront = boto3.session.Session().client("cloudfront", region_name="us-east-1")
    origin = {"Id": "site", "DomainName": f"{bucket_name}.s3.amazonaws.com",
              "S3OriginConfig": {"OriginAccessIdentity": ""}}
    made = cloudfront.create_distribution(DistributionConfig={
        "CallerReference": bucket_name, "Comment": "", "Enabled": True,
        "Origins": {"Quantity": 1, "Items": [origin]},
        "DefaultCacheBehavior": {"TargetOriginId": "site", "ViewerProtocolPolicy": "allow-all",
                                 "MinTTL": 0}})
    distribution = made["Distribution"]["Id"]
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, cdn_invalidate=distribution)
    build(config, demo_workspace)
    run_deploy(config)  # only new files: nothing to invalidate
    assert cloudfront.list_invalidations(DistributionId=distribution)[
        "InvalidationList"].get("Quantity", 0) == 0
    changed = _edit(demo_workspace, -1, "\n\nOne more paragraph, added later.\n")
    slug = next(a.slug for a in reversed(changed.articles) if a.status == "published" and a.slug)
    build(config, changed)
    run_deploy(config)
    [listed] = cloudfront.list_invalidations(DistributionId=distribution)[
        "InvalidationList"]["Items"]
    batch = cloudfront.get_invalidation(DistributionId=distribution, Id=listed["Id"])[
        "Invalidation"]["InvalidationBatch"]
    assert f"/{slug}/" in batch["Paths"]["Items"] or batch["Paths"]["Items"] == ["/*"]


def test_invalidation_paths_name_pretty_urls_and_fall_back_to_a_wildcard() -> None:
    assert invalidation_paths(["a/index.html", "feed.xml"]) == [
        "/a/", "/a/index.html", "/feed.xml"]
    assert invalidation_paths([f"p{i}.html" for i in range(INVALIDATE_MAX + 1)]) == ["/*"]


def test_feeds_go_up_as_atom_and_host_files_never_go_up(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    """`feed.xml` went up as `text/xml` and `_headers` as a public object. Every object's
    Content-Type is the preview's for the same file; `_headers`, `_redirects` and the
    manifest stay out of the bucket, and one an older deploy left there is deleted."""
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, redirects=True)
    data = config.model_dump(mode="json")
    data["site"]["redirects"] = {"/old-notes/": "/about/"}
    config = type(config).model_validate({**data, "root": config.root})
    output = build(config, demo_workspace)
    assert {"_headers", "_redirects", "feed.xml"} <= set(_manifest(output))
    client = s3_client(s3_endpoint)
    client.put_object(Bucket=bucket_name, Key="_headers", Body=b"/*\n  X-Old: 1\n")
    run_deploy(config)
    held = listing(s3_endpoint, bucket_name)
    assert not {"_headers", "_redirects", MANIFEST_NAME} & set(held), sorted(held)[:5]
    assert held == site_files(output)
    feeds = [path for path in held if path.endswith("feed.xml")]
    assert "feed.xml" in feeds and len(feeds) > 1  # (the site's, and one per agent, tag…)
    for path in sorted(held):
        head = client.head_object(Bucket=bucket_name, Key=path)
        served = preview_content_type(output / path, (output / path).read_bytes()[:1024])
        assert head["ContentType"] == served, path
    for path in feeds:
        kind = client.head_object(Bucket=bucket_name, Key=path)["ContentType"]
        assert kind == "application/atom+xml; charset=utf-8", path
    sitemap = client.head_object(Bucket=bucket_name, Key="sitemap.xml")
    assert sitemap["ContentType"] == "application/xml; charset=utf-8"
    moved = client.head_object(Bucket=bucket_name, Key="old-notes/index.html")
    assert moved["WebsiteRedirectLocation"] == "https://notes.acme.test/about/"
