"""The command line: one `error:` line, SPEC exit codes, no traceback without --debug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.cli import main


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bild"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ")
    assert "bild" in err[-1]


def test_bad_config_exits_2_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "site.toml").write_text("[site]\ntitle = 1\n", encoding="utf-8")
    code = main(["build", "-c", str(tmp_path / "site.toml")])
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: ")


def test_python_dash_m_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "sitegen", "--version"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith("sitegen ")


def test_a_finished_build_exits_quickly_with_its_output_and_status(tmp_path: Path) -> None:
    """What `build` and `fetch` printed to buffered pipes arrives whole, with the status."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered pipes
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--demo", "-o", str(tmp_path / "out"),
         "--report", str(report)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("built ")  # the summary line
    assert report.stat().st_size > 0
    fetched = subprocess.run([sys.executable, "-m", "sitegen", "fetch", "--demo"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert fetched.returncode == 0, fetched.stderr
    assert " calls" in fetched.stdout  # a pipe: block-buffered until flushed
    failed = subprocess.run(
        [sys.executable, "-m", "sitegen", "fetch", "-c", str(tmp_path / "missing.toml")],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines()[-1].startswith("error: no configuration at ")


TERM_SCRIPT = """
import sys, time
from sitegen import cli
from sitegen.emit.writer import OutputWriter

original = OutputWriter.adopt  # (each rendered page is staged, then adopted)
def slow(self, path, staged):
    original(self, path, staged)
    if path.endswith("index.html"):
        print("wrote", path, flush=True)
        time.sleep(0.05)
OutputWriter.adopt = slow
sys.argv = ["sitegen", "build", "--demo", "-o", "out", "-q"]
cli.run()
"""


def test_sigterm_ends_a_build_as_ctrl_c_does_keeping_the_previous_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI runner cancelling a job sends SIGTERM: the build cleans up and says so."""
    import hashlib
    import signal

    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q"]) == 0
    out = tmp_path / "out"
    (tmp_path / "site.toml").write_text(  # new content for every page: much to write
        '[site]\ntitle = "Another title"\nurl = "http://localhost:8000/"\n'
        '[api]\nurl = "https://cas.example.test"\nworkspace = "65f0c0ffee0123456789abcd"\n')
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*")
              if p.is_file()}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with subprocess.Popen([sys.executable, "-c", TERM_SCRIPT], cwd=tmp_path, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as build:
        assert build.stdout is not None and build.stderr is not None
        for _ in range(3):
            assert build.stdout.readline().startswith("wrote ")
        build.send_signal(signal.SIGTERM)
        err = build.stderr.read()
        build.wait(timeout=60)
    assert build.returncode == 130, err
    assert err.strip().splitlines()[-1] == "error: interrupted; the previous output was kept"
    assert "Traceback" not in err
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*")
            if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.sitegen-")] in (
        [], [".out.sitegen-lock"])


@pytest.mark.parametrize("argv", [
    ["--debug", "-q", "build", "--demo"], ["build", "--demo", "--debug", "-q"],
    ["-q", "build", "--debug", "--demo"]])
def test_global_flags_before_or_after_the_command(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    from sitegen.cli import build_parser

    options = build_parser().parse_args(argv)
    assert options.debug is True and options.quiet is True
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "-o", "out"]) == 0
    assert "built " not in capsys.readouterr().err  # -q took effect


def test_quiet_and_verbose_contradict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "build", "-v", "--demo"]) == 2
    assert "-q and -v" in capsys.readouterr().err


def test_version_names_the_installed_distribution() -> None:
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", "sitegen", "--version"],
                            capture_output=True, text=True, check=False)
    assert result.stdout.strip() == f"sitegen {version('sitegen-cas')} (sitegen-cas)"


def test_the_terminal_shows_ten_warnings_of_a_kind_and_counts_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """LLM-written articles can hold hundreds of broken links: a build printed 415 warning
    lines for 255 articles. The report, -v and --strict still see every warning."""
    import json

    monkeypatch.chdir(tmp_path)
    (tmp_path / "site.toml").write_text(
        '[site]\ntitle = "Links"\nurl = "https://notes.acme.test/"\ndescription = "Links."\n'
        '[api]\nurl = "https://cas.example.test"\nworkspace = "65f0c0ffee0123456789abcd"\n')
    links = "".join(f"[gone {n}](/gone-{n}/) " for n in range(13))
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "links.md").write_text(f'+++\ntitle = "Links"\n+++\n{links}\n')

    assert main(["build", "--demo", "-o", "out", "--report", "r.json"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    broken = [line for line in lines if "is broken" in line and "gone-" in line]
    assert len(broken) == 10
    assert lines[-1] == ('warning: 3 more warnings like "page …: the link … is broken (…): fix '
                         'or remove it" were not shown (-v shows every warning)')
    report = json.loads((tmp_path / "r.json").read_text())
    assert sum("/gone-" in message for message in report["warnings"]) == 13

    assert main(["build", "--demo", "-o", "out", "-v"]) == 0
    err = capsys.readouterr().err
    assert sum("/gone-" in line for line in err.splitlines()) == 13
    assert "were not shown" not in err

    assert main(["build", "--demo", "-o", "out", "--strict"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert "3 more warnings like" in lines[-2] and lines[-1].startswith("error: --strict: the "
                                                                         "build logged 14 ")


@pytest.mark.parametrize("name, text, said", [
    ("article.html", '{% extends "article.html" %}\n',
     'with template article.html never ended: a template extends or includes itself (an '
     'override of x.html extends "theme/x.html"'),
    ("blocks/text.html", "{{ block.nope.deeper }}",
     "rendering a text block with template blocks/text.html failed (UndefinedError: "),
    ("blocks/code.html", '{% include "blocks/code.html" %}',
     "rendering a code block with template blocks/code.html failed (it extends or includes "
     "itself): fix the template"),
])
def test_a_template_error_is_one_sentence_and_the_output_is_kept(
        name: str, text: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """THEMES.md warns against an override that extends itself: it printed a RecursionError
    traceback of a thousand frames; an error in a block template printed a traceback too."""
    import hashlib

    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q"]) == 0
    before = {p: hashlib.sha256(p.read_bytes()).digest() for p in (tmp_path / "out").rglob("*")
              if p.is_file()}
    (tmp_path / "templates" / name).parent.mkdir(parents=True)
    (tmp_path / "templates" / name).write_text(text)
    capsys.readouterr()
    assert main(["build", "--demo", "-o", "out", "-q"]) == 1
    err = [line for line in capsys.readouterr().err.strip().splitlines()
           if not line.startswith("warning: ")]  # (the demo's slug repair)
    assert len(err) == 1 and err[0].startswith("error: rendering ") and said in err[0], err
    assert {p: hashlib.sha256(p.read_bytes()).digest() for p in (tmp_path / "out").rglob("*")
            if p.is_file()} == before


def test_a_misspelt_command_names_the_one_meant(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["biuld"]) == 2
    assert "did you mean 'build'?" in capsys.readouterr().err.strip().splitlines()[-1]
    assert main(["init", "--ci", "gitlob"]) == 2
    assert "did you mean 'gitlab'?" in capsys.readouterr().err
    assert main(["zzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_max_calls_that_allows_no_call_is_a_usage_error(
        limit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 4 "reached before GET …; run again later", which never progresses."""
    code = main(["build", "--demo", "-o", str(tmp_path / "out"), "--max-calls", limit])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: argument --max-calls: ")
    assert "at least 1" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", [["build", "--offline"], ["serve", "--offline", "--port", "0"]])
def test_offline_with_an_empty_store_says_so_first_and_creates_nothing(
        command: list[str], tmp_path: Path) -> None:
    """Before: `serve` printed the preview's URL, then the error; both left `.sitegen/`
    (an empty store) and the output's lock file behind."""
    (tmp_path / "site.toml").write_text(
        '[site]\ntitle = "T"\nurl = "https://t.test/"\n[api]\nurl = "https://a.test"\n'
        'workspace = "65f0c0ffee0123456789abcd"\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sitegen", *command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stdout == ""  # no preview URL
    assert done.stderr.strip().splitlines() == [
        f"error: the content store {tmp_path.resolve() / '.sitegen' / 'store.sqlite'} is empty: "
        "run once without --offline (e.g. `sitegen fetch`) to fill it"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.toml"]
