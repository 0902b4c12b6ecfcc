"""Lighthouse scores of the demo site in both built-in themes, mobile and desktop.

Builds the demo workspace in each theme (`default`, `magazine`) into a temporary folder,
serves each output over loopback with its `_headers` rules applied (as Netlify or
Cloudflare Pages would: caching, Content-Security-Policy, nosniff, Referrer-Policy), and
runs Lighthouse 12 (npm `lighthouse`, pinned in package.json: `npm ci` first) with
Debian's Chromium on the pages issue #38 names (home; an article with image, code and
video: no demo article has all three, so the one with the videos, "Video Embeds That
Respect Your Readers", stands for it; a topic, a tag, an author, a French article,
`/lang/fr/`, a social post, an own page, the search page with a query, and the 404 page),
with the mobile (default) and desktop presets. Prints the four category scores per page
as a table; every one should be 100, except SEO on search and 404 (`noindex` by design).
A failed audit that weighs in a score is listed on stderr, and so are the back/forward
cache and third-party facade audits when they fail (they weigh nothing). Not a test:
it takes minutes and its figures go into benchmarks/README.md ("Lighthouse").

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

from tests.browser.served import build_demo, serve_output  # noqa: E402

LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
THEMES = ("default", "magazine")
PAGES = {
    "home": "/",
    "article": "/video-embeds-that-respect-readers/",
    "topic": "/topics/the-fermenting-kitchen/",
    "tag": "/tags/shell/",
    "author": "/authors/mara-lindqvist/",
    "article-fr": "/le-levain-sans-dogme/",
    "lang-fr": "/lang/fr/",
    "social-post": "/social/night-trains-are-back/",
    "own-page": "/about/",
    "search": "/search/?q=sauerkraut",
    "404": "/404.html",
}
#: Pages whose SEO score is left aside: `noindex` by design.
NOINDEX = ("search", "404")
#: Audits that weigh nothing in a score but that the issue asks about.
WATCHED = ("bf-cache", "third-party-facades")
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
                "--disable-component-update --no-first-run")


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
    failed += [f"watched: {audit} ({report['audits'][audit]['title']})" for audit in WATCHED
               if audit in report["audits"] and report["audits"][audit]["score"] == 0]
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
            base, server = serve_output(build_demo(Path(folder), theme))
            try:
                for name, path in pages.items():
                    for desktop in (False, True):
                        found, failed = scores(base + path, args.chromium, desktop)
                        expected = {c: 100 for c in CATEGORIES}
                        if name in NOINDEX:
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
