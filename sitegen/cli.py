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
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sitegen.errors import ConfigError, SitegenError
from sitegen.logs import say_hidden_warnings, setup_logging

if TYPE_CHECKING:
    from sitegen.report import ReportFile


class _Parser(argparse.ArgumentParser):
    """argparse that raises ConfigError (exit 2, one line) instead of printing usage noise."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ConfigError(f"{message} (see `{self.prog} --help`)")


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
                            help="the site configuration (default: ./site.toml)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sitegen", description="Build a static website from a workspace.",
                     parents=[_GLOBALS])
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    init = commands.add_parser("init", parents=[_GLOBALS], help="scaffold a new site")
    init.add_argument("directory", nargs="?", default=".", metavar="DIR")
    init.add_argument("--ci", choices=["github", "gitlab"], default="github")
    init.add_argument("--requirement", metavar="SPEC",
                      help="what the CI installs sitegen from (default: this sitegen, as it "
                      "was installed)")
    init.add_argument("--upgrade-ci", action="store_true",
                      help="only rewrite the CI's requirements file from this sitegen")
    _common(init, config=False)

    build = commands.add_parser("build", parents=[_GLOBALS],
                                help="fetch content and build the site")
    _common(build)
    build.add_argument("-o", "--output", metavar="DIR", help="output folder (relative to cwd)")
    build.add_argument("--offline", action="store_true", help="no requests: build from cache")
    build.add_argument("--refresh", action="store_true", help="ignore the cache, fetch all")
    build.add_argument("--force", action="store_true",
                       help="render every page again from the stored content")
    build.add_argument("--strict", action="store_true", help="fail when any warning was logged")
    build.add_argument("--report", metavar="FILE",
                       help="write a JSON build report (on every exit status)")
    build.add_argument("--base-url", metavar="URL",
                       help="the public base URL for this build, instead of [site] url "
                       "(also SITEGEN_SITE_URL)")
    build.add_argument("--demo", action="store_true", help="use the bundled demo workspace")
    build.add_argument("--max-calls", type=int, metavar="N",
                       help="stop before making more than N API calls (exit 4)")

    serve = commands.add_parser("serve", parents=[_GLOBALS],
                                help="build, serve, watch and live-reload")
    _common(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    serve.add_argument("--demo", action="store_true", help="use the bundled demo workspace")
    serve.add_argument("--offline", action="store_true", help="no requests: build from cache")
    serve.add_argument("--refresh-every", type=float, default=0.0, metavar="MINUTES",
                       help="refresh API content every N minutes in the background "
                       "(default 0: never; each refresh spends API calls)")
    serve.add_argument("--drafts", action="store_true",
                       help="also show the workspace's draft articles, marked, at /drafts/ "
                       "(in this preview only; never built or deployed)")

    fetch = commands.add_parser("fetch", parents=[_GLOBALS],
                                help="update the local content cache only")
    _common(fetch)
    fetch.add_argument("--refresh", action="store_true", help="ignore the cache, fetch all")
    fetch.add_argument("--demo", action="store_true", help="use the bundled demo workspace")
    fetch.add_argument("--dry-run", action="store_true",
                       help="print how many calls a build would make now "
                       "(spends only the cheap list calls)")

    emulate = commands.add_parser("emulate", parents=[_GLOBALS],
                                  help="run a local emulator of the service's API")
    emulate.add_argument("--data", metavar="FILE", help="workspace JSON (default: the demo)")
    emulate.add_argument("--host", default="127.0.0.1")
    emulate.add_argument("--port", type=int, default=8765)
    emulate.add_argument("--key", help="accept only this key (default: any non-empty key)")
    emulate.add_argument("--latency", type=float, default=0.0, metavar="MS",
                         help="add this many milliseconds to every response")
    emulate.add_argument("--fail-rate", type=float, default=0.0, metavar="P",
                         help="answer this fraction of requests with 500")
    emulate.add_argument("--rate-limit-every", type=int, default=0, metavar="N",
                         help="answer every Nth request with 429")
    emulate.add_argument("--quota", type=int, default=None, metavar="N",
                         help="answer 402 after N calls")
    emulate.add_argument("--no-v2", action="store_true", help="serve v1 only (v2 answers 404)")
    emulate.add_argument("--seed", type=int, default=0, help="seed for simulated faults")
    _common(emulate, config=False)

    digest = commands.add_parser("digest", parents=[_GLOBALS],
                                 help="show or change the digest settings (v2)")
    digest_commands = digest.add_subparsers(dest="digest_command", metavar="ACTION",
                                            parser_class=_Parser)
    digest_commands.required = True
    show = digest_commands.add_parser("show", parents=[_GLOBALS], help="print the digest settings")
    _common(show)
    change = digest_commands.add_parser("set", parents=[_GLOBALS],
                                        help="update the digest settings")
    _common(change)
    change.add_argument("--enabled", choices=["true", "false"])
    change.add_argument("--frequency", choices=["daily", "weekly", "monthly"])
    change.add_argument("--subject")
    change.add_argument("--preview-text")
    change.add_argument("--sender-name")
    change.add_argument("--reply-to", metavar="EMAIL")

    deploy = commands.add_parser("deploy", parents=[_GLOBALS],
                                 help="publish the built output to object storage (S3)")
    _common(deploy)
    deploy.add_argument("-o", "--output", metavar="DIR",
                        help="the built output folder, as given to build -o (relative to cwd)")
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
        from sitegen.fetch.command import fetch_command

        return fetch_command(options)
    if command == "serve":
        from sitegen.preview.server import serve_command

        return serve_command(options)
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
        quiet, verbose = getattr(options, "quiet", False), getattr(options, "verbose", False)
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
        error = caught if isinstance(caught, SitegenError) else _unexpected(caught, command)
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


#: Environment variables whose values never reach an error line (the key variables' names).
_SECRET_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def _unexpected(error: Exception, command: str | None) -> SitegenError:
    """One sentence for an exception no module foresaw: what failed, and `--debug`."""
    from sitegen.fetch.scrub import scrub
    from sitegen.report import failed_stage

    stage = failed_stage() if command == "build" else None
    where = f"the {stage} stage" if stage else f"sitegen {command}" if command else "sitegen"
    said = (str(error).strip().splitlines() or [""])[0][:200]
    for name, value in os.environ.items():
        if len(value) >= 8 and any(part in name.upper() for part in _SECRET_NAMES):
            said = scrub(said, value)
    what = f"{type(error).__name__}: {said}" if said else type(error).__name__
    kept = "; the previous output was kept" if command in ("build", "serve") else ""
    return SitegenError(f"unexpected failure in {where} ({what}){kept}: run again with "
                        "--debug for the details")
