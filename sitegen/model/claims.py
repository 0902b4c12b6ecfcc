"""The output paths the site owner's own files hold, which service-named pages give way to.

Role: the service names articles, tags, agents, topics, authors, social posts and
languages, and the owner cannot rename them there; the owner's pages (`pages/*.md`) and
files (`static/`) are the owner's to name. Where both want one path, the owner keeps it
and the service-named page moves to a free slug, with one warning naming both
(`sitegen.model.site`, `sitegen.model.social`). `Claims` answers, for the URL a page
would get, which of the owner's files holds it — the same file, a file where its folder
would be, or a folder where its file would be (as `sitegen.emit.ownfiles.check_collisions`
sees a clash). A section's URL is also held by a file among its feed, pagination or search
pages. Pure: it must never do I/O or log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

#: What a section's folder holds besides its page: its feed, its pages 2…, its search.
_SECTION_PARTS = ("feed.xml", "page", "search")
#: Slugs tried before giving up (more than an owner's folder of files can hold).
_TRIES = 1000


class Claims:
    """The owner's output paths (each with the name the warnings give its owner)."""

    def __init__(self, pages: Mapping[str, str] | None = None,
                 static: Iterable[str] = ()) -> None:
        #: output path → "your page pages/about.md" / "your file static/x/index.html"
        self._files = {path: f"your page {name}" for path, name in (pages or {}).items()}
        for path in static:
            self._files.setdefault(path, f"your file static/{path}")
        self._folders: dict[str, str] = {}  # every folder of an owner's file → that owner
        for path, owner in sorted(self._files.items()):
            folder = path.rpartition("/")[0]
            while folder and folder not in self._folders:
                self._folders[folder] = owner
                folder = folder.rpartition("/")[0]

    def __bool__(self) -> bool:
        return bool(self._files)

    def owner_of(self, url: str, section: bool = False) -> str | None:
        """Who holds the page at root-relative *url* ("/a/b/"), or None when it is free.

        With *section*, a file of the owner's among the section's feed, pagination or
        search pages holds it too.
        """
        folder = url.strip("/")
        if not folder:
            return None
        files, folders = self._files, self._folders
        page = folder + "/index.html"
        found = files.get(page) or folders.get(page)
        if found is None and section:
            found = next((files.get(p) or folders.get(p) for p in
                          (f"{folder}/{part}" for part in _SECTION_PARTS)
                          if p in files or p in folders), None)
        while found is None and folder:  # a file of the owner's where a folder must be
            found = files.get(folder)
            folder = folder.rpartition("/")[0]
        return found


def give_way(claims: Claims, slug: str, url_of: Callable[[str], str],
             another: Callable[[], str], what: str, section: bool = False,
             ) -> tuple[str, str | None]:
    """*slug*, or the first slug *another* gives whose URL no file of the owner's holds,
    with the warning saying so (None when *slug* was free). When no slug frees it (the
    owner's file stands where a folder above the slug must be) *slug* is kept: the
    owner's file is then a configuration error (`check_collisions`), the owner's to fix."""
    if not claims:
        return slug, None
    wanted = url_of(slug)
    owner = claims.owner_of(wanted, section)
    if owner is None:
        return slug, None
    moved = slug
    for _ in range(_TRIES):
        moved = another()
        if claims.owner_of(url_of(moved), section) is None:
            kind = what.split(" ", 1)[0]
            return moved, (f"{what} wants the URL {wanted}, which {owner} has: the {kind} "
                           f"moved to {url_of(moved)}")
    return slug, None
