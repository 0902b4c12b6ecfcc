"""Command-line interface: argument parsing and the one place errors become exit codes.

Role: parse `sitegen [--debug] COMMAND ...`, hand the parsed options to the
module that owns the command, and turn a `SitegenError` into one `error:` line
on stderr and the exit code SPEC.md gives; any other exception (a bug, or a
failure nobody foresaw) is one line too, naming the stage and suggesting
`--debug` (exit 1), and `--report` is written on every exit. It must never contain
build logic, never print a traceback unless `--debug`, and never print a key.
"""

from __future__ import annotations

import argparse
import difflib
import re
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sitegen import helptext
from sitegen.errors import ConfigError, SitegenError
from sitegen.logs import is_quiet, say_hidden_warnings, setup_logging
from sitegen.unforeseen import unforeseen_error

if TYPE_CHECKING:
    from sitegen.report import ReportFile


class _Parser(argparse.ArgumentParser):
    """argparse that raises ConfigError (exit 2, one line) instead of printing usage noise."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{message}{_did_you_mean(message)} (see `{self.prog} --help`)")


#: argparse's sentence for a value outside `choices` (a command name, `--ci`).
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


def _did_you_mean(message: str) -> str:
    """", did you mean 'build'?" when *message* refuses a near miss of one choice (difflib)."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = [choice.strip().strip("'") for choice in found.group(2).split(",")]
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
    return f": did you mean {close[0]!r}?" if close else ""


def _calls_limit(text: str) -> int:
    """`--max-calls N`: a whole number of at least 1 (0 or less could never make progress)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"{value} allows no call at all: give a number of at least 1, or leave "
            "--max-calls out for no limit")
    return value


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from sitegen import DIST_NAME, installed_version

        print(f"sitegen {installed_version()} ({DIST_NAME})")
        parser.exit()


def _globals() -> _Parser:
    """`--debug`, `-q` and `-v`: accepted before and after the command name alike.

    Their defaults are SUPPRESS, so a command's parser never resets a flag given before
    the command; `_main` reads them with `getattr(..., False)`.
    """
    flags = _Parser(add_help=False)
    flags.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the cause chain of errors")
    flags.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="only warnings and errors")
    flags.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help="more detail")
    return flags


_GLOBALS = _globals()


def _common(parser: argparse.ArgumentParser, config: bool = True) -> None:
    if config:
        parser.add_argument("-c", "--config", default="site.toml", metavar="FILE",
                            help="the site configuration; relative paths in it are relative "
                            "to it (default: ./site.toml)")


#: Each command's help keeps its epilog's line breaks (the examples) and wraps the rest.
_HELP = argparse.RawDescriptionHelpFormatter



def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sitegen", description="Build a static website from a workspace "
                     "of the Content Automation Service.", parents=[_GLOBALS],
                     epilog=helptext.MAIN, formatter_class=_HELP)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    init = commands.add_parser("init", parents=[_GLOBALS], help="scaffold a new site",
                               description="Scaffold a site folder.", epilog=helptext.INIT,
                               formatter_class=_HELP)
    init.add_argument("directory", nargs="?", default=".", metavar="DIR",
                      help="the folder to fill: a new or empty one, a site to complete, or "
                      "a fresh repository (default: ., the current folder)")
    init.add_argument("--ci", choices=["github", "gitlab"], default="github",
                      help="the scheduled rebuild to write: github writes "
                      ".github/workflows/sitegen.yml (GitHub Actions, deploys to GitHub "
                      "Pages), gitlab writes .gitlab-ci.yml (GitLab Pages) (default: github)")
    init.add_argument("--requirement", metavar="SPEC",
                      help="what the CI installs sitegen from, a pip requirement (default: "
                      "this sitegen, as it was installed)")
    init.add_argument("--upgrade-ci", action="store_true",
                      help="only rewrite the CI's requirements file from this sitegen")
    _common(init, config=False)

    build = commands.add_parser("build", parents=[_GLOBALS],
                                help="fetch content and build the site",
                                description="Fetch what changed and build the site.",
                                epilog=helptext.BUILD, formatter_class=_HELP)
    _common(build)
    build.add_argument("-o", "--output", metavar="DIR",
                       help="the output folder, relative to the current folder (default: "
                       "[site] output, _site beside site.toml)")
    build.add_argument("--offline", action="store_true",
                       help="make no request: build from the content store")
    build.add_argument("--refresh", action="store_true",
                       help="ignore the store and fetch everything again")
    build.add_argument("--force", action="store_true",
                       help="render every page again from the stored content")
    build.add_argument("--strict", action="store_true",
                       help="fail (exit 1, previous output kept) when any warning was logged")
    build.add_argument("--report", metavar="FILE",
                       help="write a JSON build report (on every exit status)")
    build.add_argument("--explain", action="store_true",
                       help="print each file written or removed, and why (which recorded "
                       "read of the page changed)")
    build.add_argument("--base-url", metavar="URL",
                       help="the public base URL for this build, instead of [site] url "
                       "(also SITEGEN_SITE_URL)")
    build.add_argument("--demo", action="store_true",
                       help="use the bundled demo workspace: no key, no network")
    build.add_argument("--max-calls", type=_calls_limit, metavar="N",
                       help="stop before making more than N API calls, exit 4 (default: no "
                       "limit)")

    serve = commands.add_parser("serve", parents=[_GLOBALS],
                                help="build, serve, watch and live-reload",
                                description="Preview the site as you edit it.",
                                epilog=helptext.SERVE, formatter_class=_HELP)
    _common(serve)
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000,
                       help="the port; 0 picks a free one (default: 8000)")
    serve.add_argument("--demo", action="store_true", help="use the bundled demo workspace")
    serve.add_argument("--offline", action="store_true",
                       help="make no request: build from the content store")
    serve.add_argument("--refresh-every", type=float, default=0.0, metavar="MINUTES",
                       help="refresh API content every MINUTES in the background; each "
                       "refresh spends API calls (default: 0, never)")
    serve.add_argument("--drafts", action="store_true",
                       help="also show the workspace's draft articles, marked, at /drafts/ "
                       "(in this preview only; never built or deployed)")

    fetch = commands.add_parser("fetch", parents=[_GLOBALS],
                                help="update the local content cache only",
                                description="Update the content store (.sitegen/) only.",
                                epilog=helptext.FETCH, formatter_class=_HELP)
    _common(fetch)
    fetch.add_argument("--refresh", action="store_true",
                       help="ignore the store and fetch everything again")
    fetch.add_argument("--demo", action="store_true", help="use the bundled demo workspace")
    fetch.add_argument("--dry-run", action="store_true",
                       help="print how many calls a build would make now "
                       "(spends only the cheap list calls)")

    schedule = commands.add_parser(
        "schedule", parents=[_GLOBALS], help="propose the CI's cron from the agents' schedules",
        description="Propose the CI's rebuild schedule from the active agents' own (read\n"
        "from the content store: no API call), and say why.", formatter_class=_HELP,
        epilog="Examples:\n  sitegen schedule            after a build or `sitegen fetch`\n"
        "  sitegen schedule --demo     the demo workspace's agents")
    _common(schedule)
    schedule.add_argument("--demo", action="store_true", help="use the bundled demo workspace")

    emulate = commands.add_parser("emulate", parents=[_GLOBALS],
                                  help="run a local emulator of the service's API",
                                  description="Serve a workspace as the service's API (v1 "
                                  "and v2) would,\nover HTTP on this machine.",
                                  epilog=helptext.EMULATE,
                                  formatter_class=_HELP)
    emulate.add_argument("--data", metavar="FILE",
                         help="the workspace JSON to serve, reloaded when it changes "
                         "(default: the bundled demo)")
    emulate.add_argument("--host", default="127.0.0.1",
                         help="the address to listen on (default: 127.0.0.1)")
    emulate.add_argument("--port", type=int, default=8765,
                         help="the port; 0 picks a free one (default: 8765)")
    emulate.add_argument("--key", help="accept only this key (default: any non-empty key)")
    emulate.add_argument("--latency", type=float, default=0.0, metavar="MS",
                         help="add this many milliseconds to every response (default: 0)")
    emulate.add_argument("--fail-rate", type=float, default=0.0, metavar="P",
                         help="answer this fraction of requests with 500 (default: 0)")
    emulate.add_argument("--rate-limit-every", type=int, default=0, metavar="N",
                         help="answer every Nth request with 429 (default: 0, never)")
    emulate.add_argument("--quota", type=int, default=None, metavar="N",
                         help="answer 402 after N calls (default: no quota)")
    emulate.add_argument("--no-v2", action="store_true", help="serve v1 only (v2 answers 404)")
    emulate.add_argument("--no-owner-fields", action="store_true",
                         help="serve v2 article records without clusterId and "
                         "authorIdentityId (the per-owner listings still tell them)")
    emulate.add_argument("--seed", type=int, default=0,
                         help="seed of the simulated faults, to repeat them (default: 0)")
    _common(emulate, config=False)

    digest = commands.add_parser("digest", parents=[_GLOBALS],
                                 help="show or change the digest settings (v2)",
                                 description="Read or change the workspace's e-mail digest "
                                 "settings (API v2 only).", epilog=helptext.DIGEST,
                                 formatter_class=_HELP)
    digest_commands = digest.add_subparsers(dest="digest_command", metavar="ACTION",
                                            parser_class=_Parser)
    digest_commands.required = True
    show = digest_commands.add_parser(
        "show", parents=[_GLOBALS], help="print the digest settings", formatter_class=_HELP,
        epilog="Example:\n  sitegen digest show -c sites/notes/site.toml")
    _common(show)
    change = digest_commands.add_parser(
        "set", parents=[_GLOBALS], help="update the digest settings", formatter_class=_HELP,
        description="Change the settings given; the others stay as they are. Values outside\n"
        "the v2 bounds are refused (exit 2) before any request.",
        epilog='Example:\n  sitegen digest set --frequency monthly --sender-name "Acme Notes"')
    _common(change)
    change.add_argument("--enabled", choices=["true", "false"],
                        help="send the digest or not (default: unchanged)")
    change.add_argument("--frequency", choices=["daily", "weekly", "monthly"],
                        help="how often it is sent (default: unchanged)")
    change.add_argument("--subject", help="the e-mail's subject (default: unchanged)")
    change.add_argument("--preview-text", help="the line mail clients show after the subject "
                        "(default: unchanged)")
    change.add_argument("--sender-name", help="the name it comes from (default: unchanged)")
    change.add_argument("--reply-to", metavar="EMAIL",
                        help="the address replies go to (default: unchanged)")

    deploy = commands.add_parser("deploy", parents=[_GLOBALS],
                                 help="publish the built output to object storage (S3)",
                                 description="Publish the last built output to the "
                                 "[deploy.NAME] targets,\nsending only what changed.",
                                 epilog=helptext.DEPLOY, formatter_class=_HELP)
    _common(deploy)
    deploy.add_argument("-o", "--output", metavar="DIR",
                        help="the built output folder, as given to build -o (default: "
                        "[site] output)")
    deploy.add_argument("--target", metavar="NAME",
                        help="only this [deploy.NAME] target (default: every target)")
    deploy.add_argument("--dry-run", action="store_true",
                        help="print what would be uploaded and deleted; send no write")
    deploy.add_argument("--full", action="store_true",
                        help="list the bucket and repair what differs from the record")
    return parser


def _dispatch(options: argparse.Namespace) -> int:
    command = options.command
    if command == "build":
        from sitegen.build_cli import build_command
        from sitegen.siteurl import site_url_from

        with site_url_from(getattr(options, "base_url", None)):
            return build_command(options)
    if command == "fetch":
        from sitegen.fetch_cli import fetch_command

        return fetch_command(options)
    if command == "serve":
        from sitegen.preview.server import serve_command

        return serve_command(options)
    if command == "schedule":
        from sitegen.schedule_cli import schedule_command

        return schedule_command(options)
    if command == "emulate":
        from sitegen.emulator.serve import emulate_command

        return emulate_command(options)
    if command == "init":
        from sitegen.scaffold import init_command

        return init_command(options)
    if command == "digest":
        from sitegen.digest import digest_command

        return digest_command(options)
    if command == "deploy":
        from sitegen.deploy.run import deploy_command

        return deploy_command(options)
    raise ConfigError(f"unknown command {command!r}: see `sitegen --help`")


def run() -> None:
    """The `sitegen` console script and `python -m sitegen`: `main`, then exit the process.

    SIGTERM (a CI runner cancelling a job, `kill`) ends a command as Ctrl-C would: through
    the normal clean-up, so a build removes its staging folder and keeps the old output.
    """
    signal.signal(signal.SIGTERM, _terminated)
    sys.exit(main(sys.argv[1:]))


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; returns the exit status."""
    return _main(list(sys.argv[1:] if argv is None else argv))[0]


def _main(args: list[str]) -> tuple[int, str | None]:
    """The exit status of the command line *args*, and the command it ran (None: none)."""
    debug = "--debug" in args
    command: str | None = None
    reporting: ReportFile | None = None  # `build --report FILE`, written on every exit
    try:
        options = build_parser().parse_args(args)
        command = options.command
        quiet, verbose = is_quiet(options), bool(getattr(options, "verbose", False))
        if quiet and verbose:
            raise ConfigError("-q and -v contradict each other: give one of them")
        options.quiet, options.verbose = quiet, verbose
        verbosity = -1 if quiet else (1 if verbose else 0)
        setup_logging(verbosity)
        if command == "build":
            from sitegen.report import report_file

            reporting = report_file(options)
        try:
            return _dispatch(options), command
        finally:
            say_hidden_warnings()  # before an error's line: that one stays the last
    except Exception as caught:
        if debug:
            traceback.print_exc(file=sys.stderr)
        error = (caught if isinstance(caught, SitegenError)
                 else unforeseen_error(caught, command))
        if reporting is not None:
            reporting.failed(error, error.exit_code)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code, command
    except KeyboardInterrupt:
        if reporting is not None:
            reporting.failed(None, 130)
        print("error: interrupted; the previous output was kept", file=sys.stderr)
        return 130, command
    except SystemExit as exit_:  # argparse --help / --version
        return int(exit_.code or 0), command

