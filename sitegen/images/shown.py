"""What a page shows of each image URL, and the warning for each image that cannot be used.

Role: the images stage's last step before the `ImageMap`: for each image URL as the content
writes it, its `Picture` when the build made it its own, `DROPPED` (its alt text) when it
cannot be used and no URL of its own would work, or no entry (linked where it lives: not
fetched in this build, or kept at its absolute URL). Each image that cannot be used is one
warning naming the URL, where it is first shown and why, in every build while it is shown;
those the stage's budget or deadline left for a later build (`Known.later`) are one warning
(`left_for_later`), and so are those whose stored data does not verify and that this build
cannot fetch (`Known.unverified`). Neither is ever a link to the service's own media (not the
site's to hot-link): such an image shows its alt text, as one refused for good does; an image
on another host is linked where it lives meanwhile. It must never do I/O but log.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Set
from dataclasses import dataclass
from urllib.parse import urlsplit

from sitegen.images.failures import Failure
from sitegen.images.picture import DROPPED, Dropped, Picture

log = logging.getLogger("sitegen.images")
NOT_HTTP = Failure("it is not an http(s) URL", True)  #: a URL no fetch can answer


@dataclass(frozen=True, slots=True)
class Known:
    """What the stage knows of the images, by absolute URL, when it decides the entries."""

    digests: Mapping[str, str]  #: URL → the sha256 of its bytes (fetched, stored)
    failures: Mapping[str, Failure]  #: URL → why it cannot be used
    pictures: Mapping[str, Picture]  #: sha256 → what was made of it
    now: float  #: the stage's clock (a passing failure says when it is asked again)
    #: URLs whose stored data does not verify and that this build does not fetch again.
    unverified: Set[str] = frozenset()
    service: str = ""  #: `[api] url`: its media are never linked for an unverified image
    #: URLs the budget left unfetched or the deadline unmade: made by a later build.
    later: Set[str] = frozenset()


def entries(written: Mapping[str, str | None], where: Mapping[str, str], known: Known
            ) -> tuple[dict[str, Picture | Dropped], int]:
    """The `ImageMap` entries of the URLs *written* (as written → absolute, None when it is
    not http(s)), and how many images failed."""
    found: dict[str, Picture | Dropped] = {}
    failed = 0
    for url, absolute in sorted(written.items()):
        failure = known.failures.get(absolute) if absolute else NOT_HTTP
        picture = known.pictures.get(known.digests.get(absolute or "", ""))
        if absolute in known.later or (failure is None and absolute in known.unverified):
            if failure is not None or absolute in known.unverified:
                failed += 1
            if not _elsewhere(url, absolute, known.service):
                found[url] = DROPPED  # (the stage's one warning said it)
            continue
        if failure is None:
            if picture is not None:
                found[url] = picture
            continue  # (not fetched: linked where it lives, `ImageMap`)
        failed += 1
        if unusable(url, absolute, where[url], reason(failure, known.now), failure.permanent,
                    nonpublic=failure.nonpublic) is DROPPED:
            found[url] = DROPPED
    return found, failed


def left_for_later(step: str, key: str, seconds: float, left: int, kept_back: int) -> None:
    """One warning for the *left* images the stage's *key* (`budget`: fetching, `deadline`:
    making) left for a later build, *kept_back* of them the service's own (alt text)."""
    if not left:
        return
    others = left - kept_back
    meanwhile = " and ".join(part for part in (
        f"{kept_back} of the service's own show their alt text" if kept_back else "",
        f"{others} on other hosts are linked where they live" if others else "") if part)
    log.warning("the images stage stopped %s when its %s of %g s ran out ([images] %s): %d "
                "image(s) are left for a later build, meanwhile %s; raise [images] %s to "
                "wait longer", step, key, seconds, key, left, meanwhile, key)


def _elsewhere(url: str, absolute: str | None, service: str) -> bool:
    """Whether an image refused for good would be linked where it lives: written as an
    absolute URL, on another origin than the service's."""
    if absolute is None or not url.lower().startswith(("http://", "https://", "//")):
        return False
    return origin(absolute) != origin(service)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of *url*, the port filled in from the scheme."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or ""), port or {"http": 80, "https": 443}.get(scheme)


def reason(failure: Failure, now: float) -> str:
    """The warning's reason: a passing failure says when it is asked again."""
    if failure.permanent or failure.until <= now:
        return failure.reason
    hours = (failure.until - now) / 3600
    wait = f"{max(1, round(hours))} h" if hours < 36 else f"{round(hours / 24)} days"
    return f"{failure.reason} (asked again in {wait}, or now with --refresh)"


def unusable(url: str, absolute: str | None, where: str, reason: str,
             permanent: bool, *, nonpublic: bool = False) -> Dropped | None:
    """Warn that the image *url* cannot be used; `DROPPED` when the page shows its alt text
    (a relative URL known to be unusable there, no http(s) URL, or an address that is not
    public: a link would have visitors' browsers ask their own network), None when it links
    to it where it is (an absolute URL, or one that may answer next time)."""
    absolute_written = url.lower().startswith(("http://", "https://", "//"))
    linked = absolute is not None and (absolute_written or not permanent) and not nonpublic
    shown = ("the page shows its alt text instead" if not linked else
             "the page links to it where it is" if absolute_written else
             f"the page links to it at {absolute}")
    log.warning("the image %s shown by %s cannot be used: %s; %s", url, where, reason, shown)
    return None if linked else DROPPED
