"""How a processed image is written into a page: `<picture>` with sized sources.

Role: `ImageMap` holds, for each image URL as the content writes it, what this build made of
it: a `Picture` (its variants under `/media/`, its size), `DROPPED` (it cannot be used and
has no URL of its own that works: the page shows its alt text), or nothing (images off, not
fetched in this build, or kept at its absolute URL): the page then links to the image where
it lives, its size unknown — an absolute URL as it is, a root-relative one at the service's
base URL (`Linked`), since that is where a relative URL of the content points, never the
built site — but for the root-relative images of the owner's own pages (`local`), which name
files of the site itself (`static/`) and are written as they are. `picture_html` writes one
image: a `<source>` per modern format and an `<img>` of the fallback format, each with a
`srcset` of every width, and `width`, `height`, `sizes`, `decoding="async"`, and
`loading="lazy"`, or `fetchpriority="high"` (eager: the page's first image), or
`loading="eager"` (not lazy: an image in the first screen that is not the first). It must
never do I/O and never write an attribute value unescaped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from sitegen.urls import service_url

#: The `sizes` of an image that spans the text column (themes pass their own for cards).
DEFAULT_SIZES = "(min-width: 48rem) 46rem, 100vw"
_MIME = {"webp": "image/webp", "avif": "image/avif", "jpeg": "image/jpeg", "png": "image/png"}
_ORDER = ("avif", "webp")  # the smallest first: the browser takes the first it knows


@dataclass(frozen=True, slots=True)
class Picture:
    """A processed image: its largest variant's size, and (name, width, format) of each."""

    width: int
    height: int
    fallback: str
    files: tuple[tuple[str, int, str], ...]

    @property
    def src(self) -> str:
        """The path of the largest fallback file (`/media/<name>`)."""
        return "/media/" + max((f for f in self.files if f[2] == self.fallback),
                               key=lambda f: f[1])[0]

    def srcset(self, fmt: str, link: str = "") -> str:
        """The `srcset` of one format (`/media/a-480.webp 480w, …`), under *link*'s path."""
        return ", ".join(f"{link}/media/{name} {width}w"
                         for name, width, kind in self.files if kind == fmt)

    def formats(self) -> list[str]:
        """The modern formats there are files of, smallest first (not the fallback)."""
        present = {kind for _, _, kind in self.files}
        return [fmt for fmt in _ORDER if fmt in present and fmt != self.fallback]


class Dropped:
    """An image that could not be made the site's own and has no URL to keep."""

    def __repr__(self) -> str:
        return "DROPPED"


DROPPED = Dropped()


@dataclass(frozen=True, slots=True)
class Linked:
    """An image the build did not make its own, shown at this absolute URL (a root-relative
    URL of the content made absolute at the service), its size unknown."""

    url: str


@dataclass(slots=True)
class ImageMap:
    """What this build made of each image URL (see the module docstring)."""

    entries: dict[str, Picture | Dropped] = field(default_factory=dict)
    #: body hash → the image URLs its HTML holds (they key the body cache).
    bodies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The service's base URL (`[api] url`): a root-relative image URL with no entry is
    #: linked there; "" writes it as it is.
    service: str = ""
    #: Root-relative image URLs of the owner's own pages: files of the site, written as they are.
    local: frozenset[str] = frozenset()

    def get(self, url: str) -> Picture | Dropped | Linked | None:
        """The entry of *url*, as written; `Linked` when it is root-relative and has none
        (None: write it as it is)."""
        found = self.entries.get(url)
        if found is not None or not self.service or not url.startswith("/") \
                or url.startswith("//") or url in self.local:
            return found
        absolute = service_url(url, self.service)
        return Linked(absolute) if absolute is not None else None

    def fingerprint(self, url: str) -> str:
        """A text that changes exactly when what a page shows for *url* changes."""
        return repr(self.get(url))

    def digest(self, urls: Iterable[str]) -> str:
        """A short hash of the entries of *urls* ("" when there are none)."""
        urls = list(urls)
        if not urls:
            return ""
        text = "\x00".join(f"{u}\x01{self.fingerprint(u)}" for u in urls)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def loading_attr(*, eager: bool, lazy: bool = True) -> str:
    """How an `<img>` is fetched: first and at once (*eager*), at once, or when near the view."""
    if eager:
        return ' fetchpriority="high"'
    return ' loading="lazy"' if lazy else ' loading="eager"'


def picture_html(picture: Picture, *, alt: str, sizes: str = DEFAULT_SIZES, eager: bool = False,
                 cls: str = "", link: str = "", lazy: bool = True) -> Markup:
    """One processed image as `<picture>` (see the module docstring); *link* is the site's
    base path ("/blog"), put before every `/media/` path."""
    size_attr = escape(sizes)
    sources = "".join(
        f'<source type="{_MIME[fmt]}" srcset="{escape(picture.srcset(fmt, link))}" '
        f'sizes="{size_attr}">' for fmt in picture.formats())
    loading = loading_attr(eager=eager, lazy=lazy)
    klass = f' class="{escape(cls)}"' if cls else ""
    img = (f'<img{klass} src="{escape(link + picture.src)}" '
           f'srcset="{escape(picture.srcset(picture.fallback, link))}" sizes="{size_attr}" '
           f'width="{picture.width}" height="{picture.height}" alt="{escape(alt)}"'
           f'{loading} decoding="async">')
    return Markup(f"<picture>{sources}{img}</picture>")


def plain_img_html(src: str, *, alt: str, eager: bool = False, cls: str = "",
                   square: int | None = None, lazy: bool = True) -> Markup:
    """An image whose size is unknown (not made the site's own: shown where it lives); *square*
    writes it as a square of that many CSS pixels (an avatar, cropped by `object-fit`)."""
    loading = loading_attr(eager=eager, lazy=lazy)
    klass = f' class="{escape(cls)}"' if cls else ""
    size = f' width="{square}" height="{square}"' if square is not None else ""
    return Markup(f'<img{klass} src="{escape(src)}"{size} alt="{escape(alt)}"{loading} '
                  'decoding="async">')
