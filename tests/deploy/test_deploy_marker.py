"""Several stores, one bucket: a deploy trusts its record only when the bucket's marker says so.

A laptop and CI, or a CI cache restored from an older run, each keep a record of what
the bucket holds. The marker (`.sitegen-deploy.json`, one HEAD) names the deploy that
last changed the bucket; a store whose record is of another generation lists the bucket
and reconciles, so the bucket ends exactly as its site, and a store whose record is
current sends one HEAD and nothing else.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.configdeploy import DeployTarget
from sitegen.deploy.marker import MARKER, read_marker, why_list
from sitegen.deploy.run import run_deploy
from sitegen.deploy.s3 import Bucket
from sitegen.workspace import Workspace
from tests.deploy.s3server import (
    Counter,
    build,
    deploy_config,
    edit_article,
    listing,
    s3_client,
    site_files,
    unpublish_article,
)

ADDED = "\n\nA paragraph only the newer content has.\n"


def _reconciled(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "as with --full" in r.getMessage()]


def test_an_older_copy_of_the_store_notices_the_marker_and_leaves_the_bucket_as_its_site(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture) -> None:
    """The issue's case: a stale cache deployed "0 uploaded, 0 deleted" over a newer site."""
    (tmp_path / "site").mkdir()
    config = deploy_config(tmp_path / "site", s3_endpoint, bucket_name)
    older, slug = unpublish_article(demo_workspace, 0)  # a draft in the older content
    build(config, older)
    run_deploy(config)
    shutil.copytree(tmp_path / "site", tmp_path / "cache")  # the store and output, as they were
    newer = edit_article(demo_workspace, -1, ADDED)  # published since, and another page edited
    output = build(config, newer)
    run_deploy(config)
    assert f"{slug}/index.html" in listing(s3_endpoint, bucket_name)

    stale = deploy_config(tmp_path / "cache", s3_endpoint, bucket_name)
    counter = Counter()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sitegen"):
        [outcome] = run_deploy(stale, bucket_factory=counter.factory)
    assert outcome.listed and outcome.why is not None and "another store" in outcome.why
    [said] = _reconciled(caplog)  # one line, saying why
    assert "another store deployed to the bucket" in said and "\n" not in said
    cached = site_files(tmp_path / "cache" / "_site")
    held = listing(s3_endpoint, bucket_name)
    assert held == cached  # exactly its site: no wrong page, no stale object
    assert f"{slug}/index.html" not in held and outcome.uploaded and outcome.deleted
    assert ("GET", "") in counter.sent  # (the listing)

    # and the newer store, in turn, finds its record outdated and puts its site back
    again = Counter()
    [back] = run_deploy(config, bucket_factory=again.factory)
    assert back.listed and back.why is not None
    assert listing(s3_endpoint, bucket_name) == site_files(output)


def test_stores_that_agree_with_the_marker_send_one_head_and_nothing_else(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture) -> None:
    laptop = deploy_config(tmp_path / "laptop", s3_endpoint, bucket_name)
    ci = deploy_config(tmp_path / "ci", s3_endpoint, bucket_name)
    for config in (laptop, ci):
        config.root.mkdir()
        build(config, demo_workspace)
    run_deploy(laptop)
    first = Counter()
    [adopted] = run_deploy(ci, bucket_factory=first.factory)
    # no record yet: listed; the bucket already holds its site, so nothing is written and
    # the laptop's generation is adopted
    assert adopted.listed and adopted.plan.empty and first.writes() == []
    for config in (laptop, ci, laptop):
        counter = Counter()
        [outcome] = run_deploy(config, bucket_factory=counter.factory)
        assert counter.sent == [("HEAD", MARKER)] and not outcome.listed

    # CI deploys newer content; the laptop, still on the old one, notices and repairs
    output = build(ci, edit_article(demo_workspace, -1, ADDED))
    run_deploy(ci)
    assert listing(s3_endpoint, bucket_name) == site_files(output)
    counter = Counter()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sitegen"):
        [outcome] = run_deploy(laptop, bucket_factory=counter.factory)
    assert outcome.listed and len(_reconciled(caplog)) == 1
    assert listing(s3_endpoint, bucket_name) == site_files(laptop.output_path())
    assert outcome.uploaded  # the pages CI changed, put back as the laptop's site has them


def test_dry_run_reads_the_marker_and_says_it_would_reconcile(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    laptop = deploy_config(tmp_path / "laptop", s3_endpoint, bucket_name)
    ci = deploy_config(tmp_path / "ci", s3_endpoint, bucket_name)
    for config, workspace in ((laptop, demo_workspace),
                              (ci, unpublish_article(demo_workspace, 0)[0])):
        config.root.mkdir()
        build(config, workspace)
    run_deploy(laptop)
    run_deploy(ci)  # removes the page of the article it has as a draft
    before = listing(s3_endpoint, bucket_name, marker=True)
    capsys.readouterr()
    counter = Counter()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sitegen"):
        [outcome] = run_deploy(laptop, dry_run=True, bucket_factory=counter.factory)
    assert counter.writes() == [] and counter.sent[0] == ("HEAD", MARKER)
    assert listing(s3_endpoint, bucket_name, marker=True) == before  # read only
    [said] = _reconciled(caplog)
    assert "a deploy would list the bucket" in said
    slug = unpublish_article(demo_workspace, 0)[1]
    assert f"would upload {slug}/index.html (new pages)" in capsys.readouterr().out
    assert outcome.listed
    # the store was left as it was: the real deploy still reconciles
    [real] = run_deploy(laptop)
    assert real.listed and listing(s3_endpoint, bucket_name) == site_files(
        laptop.output_path())


def test_a_record_with_no_marker_in_the_bucket_is_checked_once_then_trusted(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture) -> None:
    """A bucket emptied of its marker (or deployed by a sitegen before markers)."""
    config = deploy_config(tmp_path, s3_endpoint, bucket_name)
    build(config, demo_workspace)
    run_deploy(config)
    s3_client(s3_endpoint).delete_object(Bucket=bucket_name, Key=MARKER)
    s3_client(s3_endpoint).delete_object(Bucket=bucket_name, Key="index.html")
    counter = Counter()
    with caplog.at_level(logging.INFO, logger="sitegen"):
        [outcome] = run_deploy(config, bucket_factory=counter.factory)
    assert outcome.listed and "no deploy marker" in (outcome.why or "")
    assert counter.puts() == ["index.html"]
    assert listing(s3_endpoint, bucket_name) == site_files(config.output_path())
    quiet = Counter()
    run_deploy(config, bucket_factory=quiet.factory)
    assert quiet.sent == [("HEAD", MARKER)]


def test_the_marker_is_readable_by_a_head_and_tells_a_visitor_nothing_of_use(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, url=f"s3://{bucket_name}/www")
    output = build(config, demo_workspace)
    run_deploy(config)
    run_deploy(config, full=True)  # a listing never takes the marker for a stray object
    client = s3_client(s3_endpoint)
    head = client.head_object(Bucket=bucket_name, Key=f"www/{MARKER}")
    assert re.fullmatch(r"[0-9a-f]{32}", head["Metadata"]["generation"])
    assert head["Metadata"]["state"] == "deployed" and head["CacheControl"] == "no-store"
    body = json.loads(client.get_object(Bucket=bucket_name, Key=f"www/{MARKER}")["Body"].read())
    assert set(body) == {"generation", "state", "time", "files", "site_sha256"}
    assert body["files"] == len(site_files(output))
    assert MARKER not in site_files(output)  # never a file of the site


def test_the_marker_decides_when_a_record_is_trusted() -> None:
    ours = read_marker({"generation": "a" * 32, "state": "deployed"})
    assert why_list(True, "a" * 32, ours) is None
    assert why_list(False, None, ours) is None  # no record: listed anyway
    assert "another store" in (why_list(True, "b" * 32, ours) or "")
    assert "no deploy marker" in (why_list(True, "a" * 32, None) or "")
    cut = read_marker({"generation": "c" * 32, "state": "deploying"})
    assert why_list(True, "c" * 32, cut) is None  # our own deploy, cut short: resumed
    assert "under way or was cut short" in (why_list(True, "a" * 32, cut) or "")
    forged = read_marker({"generation": "", "state": "deployed"})
    assert forged is not None and not forged.done
    assert "not one sitegen wrote" in (why_list(True, None, forged) or "")


def test_a_deploy_that_ran_beside_another_leaves_no_store_trusting_its_record(
        tmp_path: Path, s3_endpoint: str, bucket_name: str, demo_workspace: Workspace,
        caplog: pytest.LogCaptureFixture) -> None:
    """Another deploy writes its marker while this one sends: neither generation is kept."""
    config = deploy_config(tmp_path, s3_endpoint, bucket_name, concurrency=1)
    build(config, demo_workspace)
    other = s3_client(s3_endpoint)
    counter = Counter()

    def factory(name: str, target: DeployTarget) -> Bucket:
        bucket = counter.factory(name, target)

        def beside(request: Any, **kwargs: Any) -> None:
            if request.method == "PUT" and len(counter.puts()) == 3:  # mid-deploy
                other.put_object(Bucket=bucket_name, Key=MARKER, Body=b"{}", Metadata={
                    "generation": "e" * 32, "state": "deploying"})
        bucket.client.meta.events.register("before-send.s3", beside)
        return bucket

    with caplog.at_level(logging.WARNING, logger="sitegen"):
        run_deploy(config, bucket_factory=factory)
    assert any("ran at the same time" in r.getMessage() for r in caplog.records)
    again = Counter()
    [outcome] = run_deploy(config, bucket_factory=again.factory)
    assert outcome.listed and outcome.why is not None  # checked, not trusted
    assert listing(s3_endpoint, bucket_name) == site_files(config.output_path())
