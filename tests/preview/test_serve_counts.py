"""`sitegen serve`'s counts agree with the service's: the first build's sync is announced
before it starts, and its line counts every request the emulator saw, the drafts' included
(before: "drafts: … (5 API calls)" was the only count, where the service saw 34)."""

from __future__ import annotations

from pathlib import Path

from tests.emulator.running import Emulate
from tests.preview.draftsite import serving, write_site


def test_serve_drafts_counts_every_request_the_service_saw(tmp_path: Path) -> None:
    with Emulate(cwd=tmp_path) as emulator:
        site = write_site(tmp_path / "site", emulator.url)
        with serving(site) as preview:
            built = preview.wait_for_line("built ")
            announced = preview.wait_for_line("fetching what changed at the service")
            seen = [line for line in emulator.lines if " /api/" in line]
        assert preview.errors.index(announced) < preview.errors.index(built)
        assert any("status=draft" in line for line in seen)
        assert built.rstrip().endswith(f"; {len(seen)} API calls (the drafts' included)"), \
            (built, len(seen))
