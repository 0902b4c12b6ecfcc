"""`sitegen emulate --data FILE` follows its file: an edit shows in the next build, exactly.

The emulator runs as users run it (a subprocess); a test changes the file, waits until the
emulator answers with the new content (polling the API, never a fixed sleep) and builds again.
A broken file keeps the previous content, with one warning naming the file.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main
from sitegen.emulator.generator import generate_workspace
from sitegen.emulator.reload import stamp_changes
from tests.emulator.running import DETAIL, KEY, Emulate, page_bytes, read_json, write_site

pytestmark = pytest.mark.timeout(600)


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write the file as an editor saving it would: a new file renamed over the old one."""
    fresh = path.with_suffix(".saving")
    fresh.write_text(json.dumps(data, indent=1), encoding="utf-8")
    fresh.replace(path)


def _build(config: Path, output: Path) -> dict[str, Any]:
    report = config.parent / "report.json"
    status = main(["build", "-q", "-c", str(config), "-o", str(output),
                   "--report", str(report)])
    answer: dict[str, Any] = read_json(report)
    assert status == 0, answer.get("error")
    return answer


def test_an_edit_of_the_data_file_shows_in_the_next_build_as_one_changed_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = generate_workspace(30, seed=12)
    path = tmp_path / "workspace.json"
    _write(path, data)
    published = [a for a in data["articles"] if a["status"] == "published"]
    target = [a for a in published if not a["blocks"]][2]  # (blocks, if any, are shown)
    detail = f"/api/v2/workspaces/{data['workspace']['id']}/articles/{target['id']}"
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    with Emulate("--data", str(path), cwd=tmp_path) as emulator:
        config = write_site(tmp_path / "site", emulator.url, data["workspace"]["id"])
        output = tmp_path / "site" / "_site"
        _build(config, output)
        before = page_bytes(output)

        edited = copy.deepcopy(data)
        article = next(a for a in edited["articles"] if a["id"] == target["id"])
        article["content"] = "Edited in the data file, then reloaded."
        article["updatedAt"] = "2030-01-01T00:00:00.000Z"
        _write(path, edited)
        emulator.wait_for(lambda: "Edited in the data file" in emulator.get(detail).text)
        assert emulator.wait_for_line(lambda line: line.startswith("reloaded ")) == (
            f"reloaded {path}: 30 articles (1 changed, 0 added, 0 removed)")

        report = _build(config, output)
        assert report["api"]["calls"][DETAIL] == 1
        after = page_bytes(output)
        page = f"{target['slug']}/index.html"
        assert "Edited in the data file" in after[page].decode()
        others = [f"{a['slug']}/index.html" for a in published if a is not target]
        assert [p for p in others if after[p] != before[p]] == []

        path.write_text('{"workspace": ', encoding="utf-8")  # a broken save
        warning = emulator.wait_for_line(lambda line: "not valid JSON" in line)
        assert warning.startswith(f"warning: --data file {path} is not valid JSON")
        assert warning.endswith("still serving its previous content")
        answer = emulator.get(detail)
        assert answer.status_code == 200 and "Edited in the data file" in answer.text
        assert _build(config, output)["api"]["calls"].get(DETAIL, 0) == 0
        assert page_bytes(output) == after


def test_an_article_edited_without_a_new_date_still_reaches_the_next_sync() -> None:
    served = [{"id": "a", "title": "A", "updatedAt": "2024-01-01T00:00:00.000Z"},
              {"id": "b", "title": "B", "updatedAt": "2031-06-01T00:00:00.000Z"},
              {"id": "c", "title": "C", "updatedAt": "2024-02-01T00:00:00.000Z"}]
    incoming = copy.deepcopy(served)
    incoming[0]["title"] = "A, edited"  # its date left as it was
    incoming[2]["title"] = "C, edited"
    incoming[2]["updatedAt"] = "2024-03-01T00:00:00.000Z"  # a later date, still behind b's
    incoming.append({"id": "d", "title": "D", "updatedAt": "2040-01-01T00:00:00.000Z"})
    del incoming[1]
    assert stamp_changes(served, incoming) == (2, 1, 1)
    a, c, d = incoming
    assert "2031-06-01T00:00:00.000Z" < a["updatedAt"] < c["updatedAt"]
    assert d["updatedAt"] == "2040-01-01T00:00:00.000Z"  # already the newest: kept
    assert stamp_changes(incoming, copy.deepcopy(incoming)) == (0, 0, 0)


_NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("bad", "problem"), [
    ('"articles": 5', "has an 'articles' value that is not a list"),
    ('"articles": [{"id": ["not", "hashable"], "title": "x"}]', "cannot be served (TypeError"),
    (f'"articles": [{{"id": "deep", "meta": {_NESTED}}}]', "is nested too deeply"),
])
def test_a_data_file_that_cannot_be_served_keeps_the_emulator_following_the_file(
        tmp_path: Path, bad: str, problem: str) -> None:
    data = generate_workspace(6, seed=3)
    path = tmp_path / "workspace.json"
    _write(path, data)
    target = data["articles"][0]
    detail = f"/api/v2/workspaces/{data['workspace']['id']}/articles/{target['id']}"
    with Emulate("--data", str(path), cwd=tmp_path) as emulator:
        saving = path.with_suffix(".saving")
        saving.write_text(f'{{"workspace": {json.dumps(data["workspace"])}, {bad}}}',
                          encoding="utf-8")
        saving.replace(path)
        warning = emulator.wait_for_line(lambda line: line.startswith("warning: "))
        assert warning.startswith(f"warning: --data file {path} ") and problem in warning
        assert warning.endswith("still serving its previous content")
        answer = emulator.get(detail)
        assert answer.status_code == 200 and target["title"] in answer.text
        edited = copy.deepcopy(data)
        edited["articles"][0]["title"] = "Served after the bad save"
        _write(path, edited)
        emulator.wait_for(lambda: "Served after the bad save" in emulator.get(detail).text)
        emulator.stop()
        assert emulator.process.returncode == 0, emulator.lines[-5:]
        assert emulator.lines[-1] == "emulator stopped"
        assert not [line for line in emulator.lines if "unexpected" in line]
