"""The site model: the pure middle of the flow (Workspace + Config → Site).

Role: `build_site` turns one content snapshot into the site graph — published
articles with safe slugs and URLs, sections, pagination, related links and the
list of pages — that the render and emit stages work from. Nothing in this
package does I/O or renders HTML; repairs are logged as warnings.
"""

from __future__ import annotations

from sitegen.model.layout import page_url
from sitegen.model.site import build_site
from sitegen.model.slugs import reserved, slugify
from sitegen.model.views import (
    AgentView,
    ArticleView,
    AuthorView,
    ClusterView,
    LanguageView,
    Page,
    PageKind,
    Section,
    Site,
    SocialPostView,
    TagRef,
    TagView,
)

__all__ = [
    "AgentView", "ArticleView", "AuthorView", "ClusterView", "LanguageView",
    "Page", "PageKind", "Section", "Site", "SocialPostView", "TagRef", "TagView",
    "build_site", "page_url", "reserved", "slugify",
]
