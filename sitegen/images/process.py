"""Bytes → checked image → resized, re-encoded variants (Pillow).

Role: decide whether downloaded bytes are an image by decoding them (never by their
extension or content type) with only the raster decoders of `DECODERS` (EPS, PS and PDF
never reach Ghostscript: their plugins are never asked), refuse a decompression bomb from
its declared size before any pixel is allocated, apply the EXIF orientation, drop every
metadata chunk (EXIF, XMP, ICC comments, text), and encode each configured width (never
wider than the original) in each modern format plus a fallback (the original's JPEG or PNG;
other formats fall back to PNG when they have transparency, else JPEG). A format whose
encoder cannot write the image's tallest variant (`MAX_SIDE`: WebP's 16,383 px) is left out
for that image, measured after the EXIF rotation; a JPEG fallback too tall for JPEG becomes
PNG. SVG is refused (ARCHITECTURE.md says why). It must never do I/O and never keep the
original's metadata.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError, features

from sitegen.codeprint import code_fingerprint

#: The only decoders bytes are offered to (Pillow's `formats=`): the raster formats the
#: stage publishes. Never EPS (Pillow runs Ghostscript on it), PDF, or the exotic rest.
DECODERS = ("JPEG", "PNG", "GIF", "WEBP", "BMP", "TIFF")
#: The longest side (pixels) each encoder writes: libwebp's 16,383, libjpeg's 65,500,
#: AV1's 65,536; PNG's 2³¹ − 1 is never reached under `max_pixels`.
MAX_SIDE = {"webp": 16_383, "jpeg": 65_500, "avif": 65_536, "png": 2**31 - 1}
_MIME = {"webp": "image/webp", "avif": "image/avif", "jpeg": "image/jpeg", "png": "image/png"}
_EXT = {"webp": "webp", "avif": "avif", "jpeg": "jpg", "png": "png"}


class ImageRefused(Exception):
    """The bytes are not an image sitegen will publish (the message says why)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How variants are made: `[images]` widths, formats and quality, and the pixel cap."""

    widths: tuple[int, ...]
    formats: tuple[str, ...]
    quality: int
    max_pixels: int

    def usable_formats(self) -> tuple[str, ...]:
        """The configured formats this Pillow can encode (AVIF needs a build with it)."""
        return tuple(f for f in self.formats if f != "avif" or features.check("avif"))

    def key(self) -> str:
        """A text naming these settings and the code that makes variants (the code
        fingerprint, `sitegen.codeprint`): part of every variant's name."""
        return f"{code_fingerprint()}|{self.widths}|{self.usable_formats()}|{self.quality}"


@dataclass(frozen=True, slots=True)
class Variant:
    """One encoded file: its output name (`<hash12>-<width>.<ext>`), width and type."""

    name: str
    width: int
    height: int
    format: str
    data: bytes

    @property
    def mime(self) -> str:
        """The variant's media type (`image/webp`, ...)."""
        return _MIME[self.format]


@dataclass(frozen=True, slots=True)
class Processed:
    """An image made the site's own: its shown size, fallback format and variants."""

    width: int
    height: int
    fallback: str
    variants: tuple[Variant, ...]


def looks_like_svg(data: bytes) -> bool:
    """True when *data* starts like an SVG (or any XML) document."""
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<?xml", b"<svg", b"<!doctype svg", b"<!--"))


def decoders() -> tuple[str, ...]:
    """The formats bytes may be decoded as: `DECODERS`, and AVIF when this Pillow reads it."""
    return (*DECODERS, "AVIF") if features.check("avif") else DECODERS


def open_checked(data: bytes, max_pixels: int) -> Image.Image:
    """The image in *data*, its header read but no pixel decoded; refused when it is not an
    image of `decoders()`, or declares more than *max_pixels* pixels."""
    if looks_like_svg(data):
        raise ImageRefused("it is an SVG document (sitegen publishes raster images only)")
    accepted = decoders()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data), formats=accepted)
        except Image.DecompressionBombError:
            raise ImageRefused("it declares too many pixels (a decompression bomb)") from None
        except UnidentifiedImageError:
            raise ImageRefused("it is not an image of a format sitegen publishes ("
                               + ", ".join(accepted) + ")") from None
        except (OSError, ValueError, SyntaxError) as error:
            raise ImageRefused(f"it is not an image ({type(error).__name__})") from None
    width, height = image.size
    if width < 1 or height < 1 or width * height > max_pixels:
        raise ImageRefused(f"it declares {width}×{height} pixels, over the cap of "
                           f"{max_pixels:,} (a decompression bomb)")
    return image


def process(data: bytes, settings: Settings) -> Processed:
    """Decode *data* and make its variants (see the module docstring)."""
    image = open_checked(data, settings.max_pixels)
    source_format = (image.format or "").upper()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image.load()
            image = ImageOps.exif_transpose(image) or image
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        raise ImageRefused(f"it cannot be decoded ({type(error).__name__})") from None
    alpha = image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info)
    if source_format == "JPEG" and not alpha:
        fallback = "jpeg"
    elif source_format == "PNG" or alpha:
        fallback = "png"
    else:
        fallback = "jpeg"
    image = image.convert("RGBA" if alpha else "RGB")
    image.info = {}  # no EXIF, XMP, ICC profile or text chunk goes on
    width, height = image.size  # (as shown: after the EXIF rotation)
    widths = sorted({w for w in settings.widths if w < width} | {min(width, max(settings.widths))})
    tallest = max(widths[-1], round(height * widths[-1] / width))
    if tallest > MAX_SIDE[fallback]:
        fallback = "png"
    formats = [f for f in settings.usable_formats() if tallest <= MAX_SIDE[f]]
    name_key = hashlib.sha256(hashlib.sha256(data).digest() + settings.key().encode()
                              ).hexdigest()[:12]
    variants: list[Variant] = []
    for target in widths:
        scaled = image if target == width else image.resize(
            (target, max(1, round(height * target / width))), Image.Resampling.LANCZOS,
            reducing_gap=3.0)
        for fmt in (*formats, fallback):
            encoded = _encode(scaled, fmt, settings.quality)
            variants.append(Variant(f"{name_key}-{target}.{_EXT[fmt]}", target,
                                    scaled.height, fmt, encoded))
    shown_width = widths[-1]
    shown_height = max(1, round(height * shown_width / width))
    return Processed(shown_width, shown_height, fallback, tuple(variants))


def _encode(image: Image.Image, fmt: str, quality: int) -> bytes:
    try:
        return _save(image, fmt, quality)
    except (OSError, ValueError, RuntimeError) as error:
        raise ImageRefused(f"its {image.width}×{image.height} variant cannot be encoded as "
                           f"{fmt.upper()} ({type(error).__name__}: {error})") from None


def _save(image: Image.Image, fmt: str, quality: int) -> bytes:
    out = io.BytesIO()
    if fmt == "jpeg":
        image.save(out, "JPEG", quality=quality, optimize=True, progressive=True)
    elif fmt == "png":
        image.save(out, "PNG", optimize=True)
    elif fmt == "webp":
        image.save(out, "WEBP", quality=quality, method=4)
    else:
        image.save(out, "AVIF", quality=quality)
    return out.getvalue()
