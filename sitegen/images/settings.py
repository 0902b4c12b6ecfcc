"""The images stage's settings: `[images]` (and `[api] url`) read once, as one frozen value.

Role: the stage reads the configuration here and nowhere else; every step of the recipe
(`sitegen.images.stage`) is handed this value, or the part of it that it needs. It also
names the two keys the stored data is kept under: the variants' (`variants_key`: how
variants are made) and the failures' (`failure_key`: what decides whether a failed image
would fail again besides its URL, keyed on the code fingerprint). It must never do I/O,
and never hold a secret.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sitegen.codeprint import code_fingerprint
from sitegen.config import Config
from sitegen.images.process import Settings


@dataclass(frozen=True, slots=True)
class ImageSettings:
    """Everything the images stage takes from the configuration."""

    enabled: bool
    #: `[api] url`: where a relative image URL lives, and the one loopback origin allowed.
    service: str
    budget: float
    #: `[images] decode_seconds`: CPU seconds one image's processing may take.
    decode_seconds: float
    #: `[images] deadline`: seconds the whole stage may take (downloads and processing).
    deadline: float
    max_bytes: int
    timeout: float
    concurrency: int
    #: How variants are made (widths, formats, quality, pixel cap).
    variants: Settings
    #: 12 hex digits naming `variants`: part of the key of each image's stored variants.
    variants_key: str
    #: 12 hex digits: part of the key each permanent failure is kept under.
    failure_key: str


def read_settings(config: Config) -> ImageSettings:
    """The stage's settings, from `[images]` and `[api] url` (the one read of them)."""
    section = config.images
    variants = Settings(tuple(section.widths), tuple(section.formats), section.quality,
                        section.max_pixels)
    return ImageSettings(
        enabled=section.enabled, service=config.api.base_url, budget=section.budget,
        decode_seconds=section.decode_seconds, deadline=section.deadline,
        max_bytes=section.max_bytes, timeout=section.timeout,
        concurrency=section.concurrency, variants=variants,
        variants_key=hashlib.sha256(variants.key().encode()).hexdigest()[:12],
        failure_key=failure_key(section.max_bytes, section.max_pixels, config.api.base_url,
                                section.decode_seconds))


def failure_key(max_bytes: int, max_pixels: int, service: str, decode_seconds: float) -> str:
    """What decides whether a failed image would fail again besides its URL: the limits
    and the service (`[images] max_bytes`, `max_pixels`, `decode_seconds`, `[api] url`),
    and the code that fetches and checks with Pillow's version (the code fingerprint,
    `sitegen.codeprint`); part of the key a failure is kept under."""
    text = f"{max_bytes}|{max_pixels}|{decode_seconds:g}|{service}|{code_fingerprint()}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]
