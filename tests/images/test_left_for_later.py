"""The images the stage's budget or deadline left for a later build: the service's own show
their alt text (its media are not the site's to hot-link), another host's are linked where
they live, and one warning says both counts (`sitegen.images.shown`)."""

from __future__ import annotations

import logging

import pytest

from sitegen.images.failures import Failure
from sitegen.images.picture import DROPPED
from sitegen.images.shown import Known, entries, left_for_later

SERVICE = "https://api.service.test"
OWN = f"{SERVICE}/media/a.png"
OTHER = "https://cdn.elsewhere.test/b.png"


def _known(later: set[str], failures: dict[str, Failure] | None = None) -> Known:
    return Known(digests={}, failures=failures or {}, pictures={}, now=0.0,
                 service=SERVICE, later=frozenset(later))


def test_the_service_s_own_image_left_for_later_shows_its_alt_text() -> None:
    written = {OWN: OWN, OTHER: OTHER}
    shown, failed = entries(written, {OWN: "/a/", OTHER: "/b/"}, _known({OWN, OTHER}))
    assert shown == {OWN: DROPPED}  # (OTHER: no entry, linked where it lives)
    assert failed == 0  # (made by a later build: not failed)


def test_a_download_the_budget_cut_counts_failed_and_is_not_warned_twice(
        caplog: pytest.LogCaptureFixture) -> None:
    cut = Failure("it did not answer before the images stage's budget ran out", False)
    with caplog.at_level(logging.WARNING, logger="sitegen.images"):
        shown, failed = entries({OWN: OWN}, {OWN: "/a/"}, _known({OWN}, {OWN: cut}))
    assert shown == {OWN: DROPPED} and failed == 1
    assert not caplog.records  # (the stage's one warning says it)


def test_one_warning_counts_both_kinds(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sitegen.images"):
        left_for_later("fetching", "budget", 3, 5, 2)
        left_for_later("making images", "deadline", 30, 0, 0)
    [said] = [r.getMessage() for r in caplog.records]
    assert "5 image(s) are left for a later build" in said
    assert "2 of the service's own show their alt text" in said
    assert "3 on other hosts are linked where they live" in said
    assert "raise [images] budget" in said
