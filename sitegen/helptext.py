"""The foot of each command's `--help`: examples, then what a user needs to know next.

Role: text only, one constant per command (`build_parser` in `cli.py` passes each as its
parser's epilog, kept as written by `RawDescriptionHelpFormatter`). Each shows at least one
example of its command (`tests/test_help.py` checks). This module must never hold
logic or import the rest of sitegen.
"""

from __future__ import annotations

MAIN = """\
Examples:
  sitegen init my-site        scaffold a site in ./my-site (site.toml, templates/, CI)
  sitegen build --demo        build the bundled demo into ./_site: no key, no network
  sitegen serve --demo        preview it at http://127.0.0.1:8000, reloading as you edit
  sitegen build               build your site from ./site.toml (SITEGEN_API_KEY set)

`sitegen COMMAND --help` explains a command. Exit status: 0 done, 1 build failed,
2 usage or configuration, 3 API key refused, 4 quota exhausted, 5 service unreachable."""

INIT = """\
Examples:
  sitegen init                      scaffold the current folder, with a GitHub workflow
  sitegen init my-site --ci gitlab  a new folder my-site, with a GitLab CI file
  sitegen init --upgrade-ci         rewrite only the CI's requirements file
  sitegen init --requirement "sitegen-cas @ git+https://github.com/OWNER/sitegen@COMMIT"

It writes site.toml (every key, with its default), templates/, .gitignore, the CI file
and its requirements file, and never overwrites a file that is there."""

BUILD = """\
Examples:
  sitegen build                     fetch what changed and build into [site] output
  sitegen build --demo -o /tmp/demo the bundled demo, into /tmp/demo
  sitegen build --offline --force   render every page again from the store, no request
  sitegen build --strict --report report.json   as CI runs it
  sitegen build --explain           also say, for each file written, why (what changed)"""

SERVE = """\
Examples:
  sitegen serve                     preview the site at http://127.0.0.1:8000
  sitegen serve --demo --port 0     the demo, on a free port (the first line names it)
  sitegen serve --refresh-every 30  also fetch new content every 30 minutes
  sitegen serve --drafts            also the drafts, marked, at /drafts/ (preview only)

It builds into .sitegen/preview/ (never your output folder), watches site.toml,
templates/, themes/, pages/ and static/, and reloads the open pages. Ctrl-C stops it."""

FETCH = """\
Examples:
  sitegen fetch                     update the store with what changed
  sitegen fetch --dry-run           say what a sync would cost now
  sitegen fetch --refresh           fetch everything again"""

EMULATE = """\
Examples:
  sitegen emulate                   the bundled demo at http://127.0.0.1:8765
  python -m sitegen.emulator.generator --articles 500 --seed 1 -o big.json
  sitegen emulate --data big.json   a generated workspace of 500 articles
  sitegen emulate --latency 200 --fail-rate 0.1   a slow, failing service

Point a site at it: [api] url = "http://127.0.0.1:8765" and [api] workspace = the id
the first line prints; any non-empty SITEGEN_API_KEY is accepted (unless --key).

Changing the content (as the service would, bumping the article's updatedAt so the
next incremental build fetches exactly that article):
  --data FILE is read again whenever the file changes; a file that does not read
  keeps the previous content, with a warning. A reload replaces admin changes.
  Admin routes, without a key, only for clients on this machine (loopback), in
  memory only (the data file is never written):
    POST   /__admin/articles        create an article (JSON body in the data file's
                                    form; id, slug, dates filled in; status draft
                                    unless given)
    PATCH  /__admin/articles/ID     change the fields given in the JSON body
    DELETE /__admin/articles/ID     delete the article

For example (the next `sitegen build` fetches that one article again):
  curl -X PATCH http://127.0.0.1:8765/__admin/articles/ID \\
       -H 'content-type: application/json' -d '{"title": "A better title"}'
"""

DIGEST = """\
Examples:
  sitegen digest show               print the workspace's digest settings
  sitegen digest set --enabled true --frequency weekly --subject "This week"
"""

DEPLOY = """\
Examples:
  sitegen deploy --dry-run          say what would be uploaded and deleted
  sitegen deploy --target production   publish to [deploy.production] only
  sitegen deploy --full             list the bucket and repair what was changed by hand

Credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_PROFILE, a role), never from site.toml. See docs/deploy.md."""
