"""How templates and bodies show images: the `picture()` and `image()` helpers.

Role: answer, for an image URL as the content writes it, what the page shows, from the
build's `ImageMap` (`sitegen.images`): a sized `<picture>` of its variants, a plain `<img>`
where it lives when it was not processed (a relative URL of the content at the service), its
alt text when it could not be used; the URL link previews get; and the HTML of a body's
image (markdown and `blocks/image.html`). Each answer given to a page records the read `I
<url>` (`sitegen.render.reads`), so the page renders again when what the build made of that
image changes. It must never do I/O and never write an attribute unescaped.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from sitegen.images.picture import (
    DEFAULT_SIZES,
    Dropped,
    ImageMap,
    Linked,
    Picture,
    picture_html,
    plain_img_html,
)
from sitegen.render.reads import RecordingEnvironment


class ShownImages:
    """The image helpers of one Renderer (THEMES.md "Images")."""

    def __init__(self, images: ImageMap, env: RecordingEnvironment, base_path: str) -> None:
        self.images = images
        self.env = env
        self.base_path = base_path

    def _note(self, url: str) -> None:
        recorder = self.env.recorder
        if recorder is not None:
            recorder.reads.add("I\x00" + url)

    def image(self, url: str) -> Picture | None:
        """`image(url)`: what this build made of the image *url* (None: use it as it is)."""
        self._note(url)
        found = self.images.get(url)
        return found if isinstance(found, Picture) else None

    def picture(self, url: str, alt: str = "", sizes: str = DEFAULT_SIZES,
                eager: bool = False, cls: str = "", width: int | None = None,
                lazy: bool = True) -> Markup:
        """`picture(url, alt, sizes, eager, cls, width, lazy)`: the image *url* as the page
        shows it: a sized `<picture>` of its variants, or a plain `<img>` when it was not
        processed, or its alt text when it could not be used; *width* (CSS pixels) sets the
        shown `width`/`height` of a fixed-size image (an avatar; a square of that size when
        the image was not processed); *eager* fetches it first, `lazy=false` at once."""
        if not url:
            return Markup("")
        self._note(url)
        found = self.images.get(url)
        if isinstance(found, Dropped):
            return Markup(escape(alt))
        if found is None or isinstance(found, Linked):
            src = found.url if found is not None else url
            return plain_img_html(src, alt=alt, eager=eager, cls=cls, square=width, lazy=lazy)
        if width is not None:
            found = Picture(width, max(1, round(found.height * width / found.width)),
                            found.fallback, found.files)
        return picture_html(found, alt=alt, sizes=sizes, eager=eager, cls=cls,
                            link=self.base_path, lazy=lazy)

    def share_image(self, url: str) -> str:
        """The URL link previews get for the image *url*: its largest processed file (the
        fallback format: JPEG or PNG, which every platform reads), *url* as it is when it
        was not processed (where it lives), "" when it could not be used."""
        found = self.images.get(url)
        if isinstance(found, Dropped):
            return ""
        if isinstance(found, Linked):
            return found.url
        return found.src if isinstance(found, Picture) else url

    def body_image(self, url: str, alt: str, index: int) -> str | None:
        """A body's image (markdown or block): None to write it as it is; "" to drop it
        (its alt text stays where the caller puts it). The body's first is not lazy."""
        found = self.images.get(url)
        if found is None:
            return None
        if isinstance(found, Dropped):
            return ""
        if isinstance(found, Linked):
            return str(plain_img_html(found.url, alt=alt, eager=index == 0))
        return str(picture_html(found, alt=alt, eager=index == 0, link=self.base_path))
