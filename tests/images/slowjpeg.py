"""Test helper: a small progressive JPEG that costs minutes of CPU to decode.

Pillow writes a flat-coloured progressive JPEG, whose last scan (a refinement of the AC
coefficients) is a few dozen bytes; that scan is then repeated, byte for byte, before the
end marker. Every copy is a valid scan, and libjpeg walks the whole coefficient buffer for
each: 7000×7000 pixels and 3,000 copies are a ~500 kB file and ~100 s of CPU, under every
limit of `[images]` but the decode's deadline.
"""

from __future__ import annotations

import functools
import io

from PIL import Image


def scans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each scan of a JPEG: its SOS segment and entropy-coded data."""
    found: list[tuple[int, int]] = []
    at = 2  # (after SOI)
    while at < len(data):
        assert data[at] == 0xFF, f"no marker at {at}"
        marker = data[at + 1]
        if marker == 0xD9:  # EOI
            return found
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if marker != 0xDA:  # (not a scan: its segment only)
            at += 2 + length
            continue
        end = at + 2 + length
        while True:  # the data runs to the next marker that is not a stuffed 0xFF or RSTn
            end = data.index(b"\xff", end)
            if data[end + 1] == 0 or 0xD0 <= data[end + 1] <= 0xD7:
                end += 2
                continue
            break
        found.append((at, end))
        at = end
    raise ValueError("no end of image")


@functools.cache
def slow_jpeg(side: int = 7000, repeats: int = 3000) -> bytes:
    """A progressive JPEG of side×side pixels whose last scan is there *repeats* more times."""
    out = io.BytesIO()
    Image.new("RGB", (side, side), (120, 80, 40)).save(out, "JPEG", progressive=True,
                                                       quality=90)
    data = out.getvalue()
    start, end = scans(data)[-1]
    return data[:end] + data[start:end] * repeats + data[end:]
