"""Help that teaches: every command's `--help` has an example, and every option with a default
says it.

The commands are found by walking the help itself (each parser lists its subcommands under
its COMMAND or ACTION), so a command added later is checked too; each option's default is
what the parser gives when the option is left out (`parse_args`), and its help paragraph
must say "default" and the value.
"""

from __future__ import annotations

import re

import pytest

from sitegen.cli import build_parser, main

#: A subcommand line under a parser's COMMAND/ACTION heading: four spaces, the name, its help.
_SUBCOMMAND = re.compile(r"^    ([a-z][a-z-]*)(?:\s{2,}.*)?$")
#: What each command needs besides its options to parse (a positional without default).
_REQUIRED: dict[tuple[str, ...], list[str]] = {}


def help_text(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*command, "--help"]) == 0
    return capsys.readouterr().out


def subcommands(text: str) -> list[str]:
    """The subcommands a help text lists under its upper-case metavar heading."""
    found, listing = [], False
    for line in text.splitlines():
        if re.fullmatch(r"  [A-Z]+", line):
            listing = True
        elif listing and (match := _SUBCOMMAND.match(line)):
            found.append(match.group(1))
        elif listing and line.strip() and not line.startswith("    "):
            listing = False
    return found


def all_commands(capsys: pytest.CaptureFixture[str]) -> dict[tuple[str, ...], str]:
    """Every command path (`()` the top level, `("digest", "set")`…) → its help text."""
    found: dict[tuple[str, ...], str] = {}
    waiting: list[tuple[str, ...]] = [()]
    while waiting:
        command = waiting.pop(0)
        text = found[command] = help_text(command, capsys)
        waiting += [(*command, name) for name in subcommands(text)]
    return found


def option_help(text: str, option: str) -> str:
    """The help paragraph of *option* (`--port`, or a positional's metavar) in *text*."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        names = re.split(r"[ ,]+", line.strip())
        if line.startswith("  ") and not line.startswith("    ") and option in names:
            paragraph = [line]
            for more in lines[number + 1:]:
                if not more.startswith(" " * 6) or not more.strip():
                    break
                paragraph.append(more)
            return " ".join(part.strip() for part in paragraph)
    raise AssertionError(f"{option} is not in the help:\n{text}")


def shown(value: object) -> list[str]:
    """How a default may be written: 8000, 0 for 0.0, the text itself."""
    if isinstance(value, float):
        return [f"{value:g}", str(value)]
    return [str(value)]


def test_every_command_has_an_example_and_names_every_default(
        capsys: pytest.CaptureFixture[str]) -> None:
    helps = all_commands(capsys)
    commands = {" ".join(command) for command in helps}
    assert {"", "init", "build", "serve", "fetch", "emulate", "digest", "digest show",
            "digest set", "deploy"} <= commands, commands
    parser = build_parser()
    for command, text in helps.items():
        name = " ".join(("sitegen", *command))
        assert re.search(r"^Examples?:$", text, re.M), f"`{name} --help` has no example"
        examples = text[text.index("Example"):]
        assert re.search(rf"^  (sitegen|python -m sitegen)\b.*{re.escape(' '.join(command))}",
                         examples, re.M), f"`{name} --help`: no example runs it\n{examples}"
        if command and subcommands(text):
            continue  # (a group: its subcommands have the options)
        if not command:
            continue
        defaults = vars(parser.parse_args([*command, *_REQUIRED.get(command, [])]))
        for dest, value in defaults.items():
            if value is None or isinstance(value, bool) or dest.endswith("command"):
                continue
            option = "DIR" if dest == "directory" else "--" + dest.replace("_", "-")
            said = option_help(text, option)
            assert "default" in said, f"`{name} --help`: {option} does not say its default"
            assert any(form in said for form in shown(value)), (
                f"`{name} --help`: {option} does not say its default {value!r}: {said}")


def test_init_and_emulate_explain_what_a_new_owner_asks(
        capsys: pytest.CaptureFixture[str]) -> None:
    init = help_text(("init",), capsys)
    assert "current folder" in option_help(init, "DIR")
    ci = option_help(init, "--ci")
    assert "default: github" in ci and ".github/workflows/sitegen.yml" in ci
    assert ".gitlab-ci.yml" in ci
    emulate = help_text(("emulate",), capsys)
    assert "default: 127.0.0.1" in option_help(emulate, "--host")
    assert "default: 8765" in option_help(emulate, "--port")
    assert "python -m sitegen.emulator.generator" in emulate
