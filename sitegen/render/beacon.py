"""The page-view beacon's tag: its settings and the `data-` attributes of each page.

Role: what a page's `<script src=beacon>` tag carries (endpoint, public key, site slug,
page type, from the page kinds registry; article and agent ids) — the script itself is a
static file the emit stage writes. It must never hold the API key (only the public
analytics key) and never print either (`BeaconSettings.__repr__`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sitegen.model.kinds import kind_of
from sitegen.model.views import Page

_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")


@dataclass(frozen=True, slots=True)
class BeaconSettings:
    """What the page-view beacon tag needs (the script itself is written by the emit stage)."""

    endpoint: str
    key: str
    site_slug: str
    script_url: str
    visitor: str = "session"

    def __repr__(self) -> str:  # never show the key, even a public one, in logs
        return f"BeaconSettings(endpoint={self.endpoint!r}, site_slug={self.site_slug!r})"


def beacon_attrs(beacon: BeaconSettings, page: Page) -> dict[str, str]:
    """The `data-` attributes of *page*'s beacon tag (those that do not apply left out)."""
    page_type = kind_of(page.kind).beacon  # (the page kinds registry's `beacon`)
    attrs = {
        "data-endpoint": beacon.endpoint,
        "data-key": beacon.key,
        "data-site-slug": beacon.site_slug,
        "data-page-type": page_type,
    }
    if beacon.visitor == "persistent":
        attrs["data-visitor"] = "persistent"
    article = page.article
    if article is not None:
        if _OBJECT_ID.match(article.id):
            attrs["data-article-id"] = article.id
        if article.agent is not None and _OBJECT_ID.match(article.agent.id):
            attrs["data-agent-id"] = article.agent.id
        attrs["data-article-slug"] = article.slug
    elif page_type == "agent" and page.obj is not None:
        agent_id = str(getattr(page.obj, "id", ""))
        if _OBJECT_ID.match(agent_id):
            attrs["data-agent-id"] = agent_id
    return {k: v for k, v in attrs.items() if v}
