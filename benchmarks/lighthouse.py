"""Lighthouse scores of the demo site in both built-in themes, mobile and desktop.

Builds the demo workspace in each theme (`default`, `magazine`) into a temporary folder,
serves each output over loopback with its `_headers` rules applied (as Netlify or
Cloudflare Pages would: caching, Content-Security-Policy, nosniff, Referrer-Policy), and
runs Lighthouse 12 (npm `lighthouse`, pinned in package.json: `npm ci` first) with
Debian's Chromium on home, an article, a topic, a tag, a second list page, the 404
page, an author, a French article, the French language page and a social post, with
the mobile (default) and desktop presets. Prints the four category scores per page;
every one should be 100, except SEO on 404 (`noindex` by design). Not a test: it takes
minutes and its figures go into benchmarks/README.md ("Lighthouse").

    .venv/bin/python benchmarks/lighthouse.py [--chromium /usr/bin/chromium] [--only home]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.build import BuildOptions, run_build  # noqa: E402
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config  # noqa: E402
from tests.browser.served import serve_output  # noqa: E402
from tests.content import synced  # noqa: E402

LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
THEMES = ("default", "magazine")
PAGES = {
    "home": "/",
    "article": "/makefile-readme-that-runs/",
    "topic": "/topics/the-fermenting-kitchen/",
    "tag": "/tags/shell/",
    "page 2": "/page/2/",
    "404": "/404.html",
    "author": "/authors/mara-lindqvist/",
    "article-fr": "/le-levain-sans-dogme/",
    "lang-fr": "/lang/fr/",
    "social-post": "/social/night-trains-are-back/",
}
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
                "--disable-component-update --no-first-run")


def build(theme: str, root: Path) -> Path:
    """The demo built in *theme* under *root*; returns the output folder."""
    workspace = synced(demo_config(None, root))
    config = parse_config({
        "site": {"title": "Northwind Field Notes", "url": "http://127.0.0.1/",
                 "description": "Slow travel, patient fermentation and quiet tooling",
                 "theme": theme},
        "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
        "analytics": {"enabled": False},
    }, root / theme)
    output = root / theme / "_site"
    run_build(config, BuildOptions(output=output, workspace=workspace, demo=True))
    return output


def scores(url: str, chromium: str, desktop: bool) -> tuple[dict[str, int], list[str]]:
    """The four category scores (0–100) Lighthouse gives *url*, and the audits it failed."""
    command = ["node", str(LIGHTHOUSE), url, "--output=json", "--output-path=stdout",
               "--quiet", f"--chrome-flags={CHROME_FLAGS}",
               "--only-categories=" + ",".join(CATEGORIES)]
    if desktop:
        command.append("--preset=desktop")
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False,
                            env={"CHROME_PATH": chromium, "PATH": "/usr/bin:/bin"})
    if result.returncode != 0:
        raise SystemExit(f"lighthouse failed on {url}: {result.stderr.strip()[-500:]}")
    report = json.loads(result.stdout)
    failed = [f"{name}: {ref['id']} ({report['audits'][ref['id']]['title']})"
              for name in CATEGORIES for ref in report["categories"][name]["auditRefs"]
              if ref["weight"] and report["audits"][ref["id"]]["score"] not in (None, 1)]
    return ({name: round(100 * (report["categories"][name]["score"] or 0))
             for name in CATEGORIES}, failed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--only", action="append", choices=sorted(PAGES),
                        help="check only these pages (repeatable)")
    args = parser.parse_args()
    if not LIGHTHOUSE.is_file():
        print(f"{LIGHTHOUSE} is missing: run `npm ci` at the repository root", file=sys.stderr)
        return 2
    pages = {name: PAGES[name] for name in args.only} if args.only else PAGES
    print(f"| theme | page | form | {' | '.join(CATEGORIES)} |")
    print("|---|---|---|" + "---|" * len(CATEGORIES))
    short = 0
    with tempfile.TemporaryDirectory(prefix="sitegen-lighthouse-") as folder:
        for theme in THEMES:
            base, server = serve_output(build(theme, Path(folder)))
            try:
                for name, path in pages.items():
                    for desktop in (False, True):
                        found, failed = scores(base + path, args.chromium, desktop)
                        expected = {c: 100 for c in CATEGORIES}
                        if name == "404":
                            expected["seo"] = found["seo"]  # noindex by design
                        short += found != expected
                        form = "desktop" if desktop else "mobile"
                        cells = " | ".join(str(found[c]) for c in CATEGORIES)
                        print(f"| {theme} | {name} | {form} | {cells} |", flush=True)
                        for audit in failed:
                            print(f"<!-- {theme} {name} {form}: {audit} -->", file=sys.stderr)
            finally:
                server.shutdown()
                server.server_close()
    print(f"\n{short} page(s) below 100 in some category" if short else "\nall 100")
    return 1 if short else 0


if __name__ == "__main__":
    raise SystemExit(main())
