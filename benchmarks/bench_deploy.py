"""Benchmark `sitegen deploy`: a one-article change, incremental beside a `--full` re-listing.

Generates an N-article workspace (default 4,000) as `bench_build.py` does, builds it with
`sitegen build --offline` (a child process), and deploys it to moto's S3 server
(`ThreadedMotoServer` on 127.0.0.1, in this process: a real S3-protocol HTTP server).
Then, for each run, one article's body changes in the store, the site is built again,
and the change is deployed twice over: once incrementally (from the store's record of
the bucket) and, after another one-article change, with `--full` (the bucket listed
first, as `hugo deploy` does on every run). Requests are counted at the client (boto3's
`before-send` event) by method; after each deploy the bucket is listed and compared
with the output's manifest, so the figures are of deploys that did the job. moto keeps
everything in memory and runs in this process, so the seconds are a loopback floor, not
a cloud store's: the request counts are what carries over.

    .venv/bin/python benchmarks/bench_deploy.py [--articles 4000] [--runs 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_build import prepare, run_build, touch_one_article  # noqa: E402

Figures = tuple[float, Counter[str], int]  # seconds, requests by method, files uploaded


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def deploy(config_path: Path, *, full: bool = False) -> Figures:
    """One in-process `sitegen deploy` (`--full` when asked): seconds, requests, uploads."""
    from sitegen.config import load_config
    from sitegen.deploy.run import run_deploy
    from sitegen.deploy.s3 import Bucket

    sent: Counter[str] = Counter()

    def factory(name: str, target: Any) -> Bucket:
        bucket = Bucket(name, target)
        bucket.client.meta.events.register(
            "before-send.s3", lambda request, **_: sent.update([request.method]))
        return bucket

    config = load_config(config_path)
    started = time.perf_counter()
    [outcome] = run_deploy(config, full=full, bucket_factory=factory)
    seconds = time.perf_counter() - started
    _check(config_path)
    return seconds, sent, len(outcome.uploaded)


def _check(config_path: Path) -> None:
    """The bucket holds exactly the output's files (by ETag = MD5 of each file)."""
    import hashlib

    import boto3

    from sitegen.config import load_config
    from sitegen.emit.manifest import Manifest

    config = load_config(config_path)
    target = config.deploy["bench"]
    output = config.output_path()
    manifest = Manifest.from_bytes((output / ".sitegen-manifest.json").read_bytes())
    assert manifest is not None
    client = boto3.session.Session().client("s3", endpoint_url=target.endpoint,
                                            region_name="us-east-1")
    held = {item["Key"]: item["ETag"].strip('"')
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=target.bucket)
            for item in page.get("Contents", [])}
    wanted = {path: hashlib.md5((output / path).read_bytes(), usedforsecurity=False).hexdigest()
              for path in manifest.files}
    if held != wanted:
        raise SystemExit(f"the bucket differs from the site: {len(held)} objects, "
                         f"{len(wanted)} files")


def _line(name: str, runs: list[Figures]) -> str:
    seconds = [s for s, _, _ in runs]
    requests = runs[-1][1]
    methods = ", ".join(f"{m} {n}" for m, n in sorted(requests.items()))
    return (f"{name:<24} {statistics.median(seconds):>7.2f} {min(seconds):>6.2f}–"
            f"{max(seconds):<6.2f} {sum(requests.values()):>8}  ({methods}); "
            f"{runs[-1][2]} uploaded")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=None,
                        help="prepare (or reuse) the site here and keep it afterwards")
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    os.environ.update({"AWS_ACCESS_KEY_ID": "bench-key-id", "AWS_SECRET_ACCESS_KEY": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
    keep = args.folder is not None
    folder = args.folder or Path(tempfile.mkdtemp(prefix="sitegen-bench-deploy-"))
    folder.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    load_before = os.getloadavg()[0]
    try:
        import boto3

        endpoint = f"http://127.0.0.1:{port}"
        boto3.session.Session().client("s3", endpoint_url=endpoint).create_bucket(
            Bucket="bench-site")
        config = prepare(folder, args.articles, args.seed)
        text = config.read_text()
        if "[deploy." not in text:
            text += "\n[deploy.bench]\nurl = \"s3://bench-site\"\n"
        config.write_text(text.split("endpoint = ")[0].rstrip("\n") +
                          f"\nendpoint = \"{endpoint}\"\n")
        output = folder / "_site"
        run_build(config, output)
        first = deploy(config)
        files = len([p for p in output.rglob("*") if p.is_file()]) - 1
        incremental: list[Figures] = []
        relisted: list[Figures] = []
        for _ in range(args.runs):
            touch_one_article(config)
            run_build(config, output)
            incremental.append(deploy(config))
            touch_one_article(config)
            run_build(config, output)
            relisted.append(deploy(config, full=True))
        print(f"\nsitegen deploy to moto's S3 server on loopback, {args.articles} articles "
              f"({files} files), {args.runs} run(s), {os.cpu_count()} CPUs, load average "
              f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
        print(f"{'deploy':<24} {'s':>7} {'min–max':>13} {'requests':>8}")
        print(_line("first (empty bucket)", [first]))
        print(_line("one article, record", incremental))
        print(_line("one article, --full", relisted))
    finally:
        server.stop()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
