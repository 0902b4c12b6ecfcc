"""`sitegen emulate --help` teaches how to change the emulated content."""

from __future__ import annotations

import subprocess

from tests.emulator.running import BIN


def test_emulate_help_documents_the_admin_routes_and_the_reload() -> None:
    shown = subprocess.run([str(BIN / "sitegen"), "emulate", "--help"], capture_output=True,
                           text=True, timeout=60, check=True).stdout
    for words in ("POST   /__admin/articles", "PATCH  /__admin/articles/ID",
                  "DELETE /__admin/articles/ID", "without a key", "loopback",
                  "read again whenever the file changes", "replaces admin changes",
                  "curl -X PATCH http://127.0.0.1:8765/__admin/articles/ID",
                  "-H 'content-type: application/json'"):
        assert words in shown, words
    # the example's lines stay as written (no re-wrapping of the epilog)
    assert "\\\n       -H 'content-type: application/json'" in shown
