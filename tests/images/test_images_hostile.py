"""Image hosts are hostile: tall images past an encoder's limit, PostScript that would reach
Ghostscript, hosts that never answer, images on the service's machine under another port or
name. Each build ends with its pages, a warning for each trouble, never a traceback."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

from sitegen.fetch.images import Downloaded, Failed, ImageFetcher
from sitegen.images.failures import LONGEST_WAIT, wait_after
from sitegen.images.process import MAX_SIDE, Settings, process
from tests.images.imagehost import image_host, png
from tests.images.sites import build, config, page_of, workspace

PNG_HEADERS = {"content-type": "image/png"}


def rotated_tall_jpeg() -> bytes:
    """A 17,000×64 JPEG whose EXIF says "rotate 90°" (orientation 6): shown 64×17,000."""
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    Image.new("RGB", (17_000, 64), (90, 30, 160)).save(out, "JPEG", exif=exif.tobytes())
    return out.getvalue()


def tall_gif() -> bytes:
    out = io.BytesIO()
    Image.new("P", (40, 20_000), 3).save(out, "GIF")
    return out.getvalue()


def test_images_taller_than_webp_allows_build_with_the_formats_that_can_write_them(
        tmp_path: Path) -> None:
    """64×17,000 px is past WebP's 16,383: the image keeps its fallback (PNG, JPEG), without
    WebP, and the build goes on (it raised ValueError outside the stage's error handling)."""
    tall = png(64, 17_000)
    assert len(tall) < 100_000  # (a small file: nothing but its height is unusual)
    routes = {"/tall.png": (200, PNG_HEADERS, tall),
              "/turned.jpg": (200, {"content-type": "image/jpeg"}, rotated_tall_jpeg()),
              "/tall.gif": (200, {"content-type": "image/gif"}, tall_gif()),
              "/a.png": (200, PNG_HEADERS, png())}
    with image_host(routes) as host:
        data = workspace("\n\n".join(f"![Picture {p}]({host.url(p)})" for p in routes) + "\n")
        out = tmp_path / "_site"
        report = build(config(tmp_path, api=host.origin), out, data)
    html = page_of(out)
    assert not [w for w in report.warning_messages if "cannot be used" in w]
    assert report.images["failed"] == 0
    for path, ext, size in (("/tall.png", "png", (64, 17_000)),
                            ("/turned.jpg", "jpg", (64, 17_000)),  # (checked after rotating)
                            ("/tall.gif", "jpg", (40, 20_000))):
        shown = re.search(r"<picture>(?:(?!</picture>).)*alt=\"Picture " + re.escape(path)
                          + r'"[^>]*></picture>', html)
        assert shown is not None, path
        assert "image/webp" not in shown.group(0), path  # (no WebP of it: too tall)
        src = re.search(r'<img [^>]*src="/media/([^"]+)"', shown.group(0))
        assert src is not None and src.group(1).endswith("." + ext), shown.group(0)
        with Image.open(out / "media" / src.group(1)) as image:
            assert image.size == size, path
    small = re.search(r'<picture><source type="image/webp"[^>]*>[^<]*<img [^>]*'
                      r'alt="Picture /a.png"', html)
    assert small is not None  # (the others keep their WebP)


def test_each_variant_fits_its_encoder_and_a_jpeg_too_tall_for_jpeg_falls_back_to_png() -> None:
    settings = Settings((480,), ("webp", "avif"), 60, 50_000_000)
    made = process(png(64, 17_000), settings)
    assert {v.format for v in made.variants} <= {"avif", "png"} and made.fallback == "png"
    out = io.BytesIO()
    Image.new("RGB", (10, 66_000), (1, 2, 3)).save(out, "TIFF")  # (JPEG stops at 65,500)
    too_tall = process(out.getvalue(), settings)
    assert too_tall.fallback == "png" and "jpeg" not in {v.format for v in too_tall.variants}
    for variant in (*made.variants, *too_tall.variants):
        assert max(variant.width, variant.height) <= MAX_SIDE[variant.format]


EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 64 48\n"
       b"0.2 0.4 0.8 setrgbcolor 0 0 64 48 rectfill\nshowpage\n%%EOF\n")
LOOP = b"%!PS\n%%BoundingBox: 0 0 64 48\n{ } loop\n"  # never ends when it is run
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]"
       b"/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def test_postscript_and_pdf_never_reach_ghostscript(tmp_path: Path) -> None:
    """Served as image/png under a .png name: refused before anything decodes them. With
    every Pillow format enabled, the EPS was drawn by Ghostscript and published under
    /media/, and the loop hung the build."""
    assert shutil.which("gs"), ("Ghostscript (gs) must be installed for this test, as on "
                                "GitHub's runners and in .ci/run: apt-get install ghostscript")
    routes = {"/drawing.png": (200, PNG_HEADERS, EPS), "/loop.png": (200, PNG_HEADERS, LOOP),
              "/doc.png": (200, PNG_HEADERS, PDF)}
    with image_host(routes) as host:
        data = workspace("\n\n".join(f"![Picture {p}]({host.url(p)})" for p in routes) + "\n")
        out = tmp_path / "_site"
        report = build(config(tmp_path, api=host.origin), out, data)
    html = page_of(out)
    for path in routes:
        line = next(w for w in report.warning_messages if host.url(path) + " " in w)
        assert "not an image of a format sitegen publishes" in line, line
        assert "The picture test" in line
        assert f'src="{host.url(path)}"' in html  # (linked where it lives, never made local)
    assert report.images["failed"] == 3
    assert "not an image" not in "".join(  # (the demo's own images are made local)
        w for w in report.warning_messages if host.url("/") not in w)


def test_the_stage_stops_fetching_at_its_budget_and_a_silent_host_waits_before_it_is_asked(
        tmp_path: Path) -> None:
    """Three URLs that never answer, one asked at a time: the first is cut off by `[images]
    budget`, the others are not asked; ONE warning names the setting. The next build does
    not ask the first again (it backs off), but asks the second. The service's own images
    left unfetched show their alt text meanwhile, never a link to the service."""
    hang = (200, {"x-hang": "1"}, b"")
    routes = {"/h1.png": hang, "/h2.png": hang, "/h3.png": hang}
    with image_host(routes) as host:
        data = workspace("\n\n".join(f"![Picture {p}]({host.url(p)})" for p in routes) + "\n")
        out = tmp_path / "_site"
        cfg = config(tmp_path, api=host.origin, budget=3, timeout=300, concurrency=1)
        first = build(cfg, out, data)
        said = [w for w in first.warning_messages if "budget" in w]
        assert len(said) == 1 and "[images] budget" in said[0], first.warning_messages
        left = int(re.findall(r"(\d+) image\(s\) are left for a later build", said[0])[0])
        assert left == first.images["images"]  # (h1 first, in URL order; then none)
        assert not [w for w in first.warning_messages if "cannot be used" in w]
        assert dict(host.hits) == {"/h1.png": 1}
        html = page_of(out)
        assert host.url("/") not in html  # (the service's own media: never hot-linked)
        assert all(f"Picture {p}" in html for p in routes)  # (their alt text)
        assert f"{left} of the service's own show their alt text" in said[0]
        second = build(cfg, out, data)
        assert dict(host.hits) == {"/h1.png": 1, "/h2.png": 1}
        waiting = [w for w in second.warning_messages if host.url("/h1.png") in w]
        assert len(waiting) == 1 and "asked again in 1 h" in waiting[0], waiting
        assert f"{left - 1} image(s) are left for a later build" in next(
            w for w in second.warning_messages if "[images] budget" in w)


def test_only_the_service_s_exact_origin_may_be_a_private_address(tmp_path: Path) -> None:
    """With the service on 127.0.0.1, an image on another port there, or on the service's
    own port under another name, is refused; the pages show its alt text, never a link
    that would have visitors' browsers probe their own network."""
    with image_host({"/ok.png": (200, PNG_HEADERS, png())}) as service, \
            image_host({"/inside.png": (200, PNG_HEADERS, png())}) as other:
        aliased = f"http://localhost:{service.port}/ok.png"
        data = workspace(f"![Inside]({other.url('/inside.png')})\n\n![Aliased]({aliased})\n\n"
                         f"![Fine]({service.url('/ok.png')})\n")
        data["authorIdentities"][0]["imageUrl"] = other.url("/inside.png")
        out = tmp_path / "_site"
        report = build(config(tmp_path, api=service.origin), out, data)
    assert sum(other.hits.values()) == 0 and dict(service.hits) == {"/ok.png": 1}
    for url in (other.url("/inside.png"), aliased):
        line = next(w for w in report.warning_messages if url + " " in w)
        assert "non-public address (" in line and "alt text" in line, line
    html = page_of(out)
    assert "Inside" in html and "Aliased" in html and 'alt="Fine"' in html
    for page in out.rglob("*.html"):  # cards, bodies, author images, feeds' pages...
        text = page.read_text()
        assert other.origin not in text and "localhost:" not in text, page


def test_the_fetcher_exempts_the_service_s_origin_and_nothing_else() -> None:
    with image_host({"/a.png": (200, {}, png())}) as host:
        fetcher = ImageFetcher(host.origin, max_bytes=10**6, timeout=30)
        found = fetcher.fetch_all([host.url("/a.png"), f"http://localhost:{host.port}/a.png",
                                   f"http://127.0.0.1:{host.port + 1}/a.png",
                                   f"https://127.0.0.1:{host.port}/a.png"])
    assert isinstance(found.pop(host.url("/a.png")), Downloaded)
    assert all(isinstance(r, Failed) and r.nonpublic and r.permanent
               for r in found.values()), found
    assert host.hits["/a.png"] == 1


@pytest.mark.parametrize(("times", "hours"), [(1, 1), (2, 2), (3, 4), (8, 128), (9, 168),
                                              (500, 168)])
def test_a_passing_failure_waits_longer_each_time_up_to_a_week(times: int, hours: int) -> None:
    assert wait_after(times) == hours * 3600 and wait_after(times) <= LONGEST_WAIT


@pytest.mark.parametrize("value", ['"60"', "0", "-5", "true"])
def test_the_budget_is_a_strict_number_of_seconds(tmp_path: Path, value: str) -> None:
    from sitegen.config import load_config
    from sitegen.errors import ConfigError

    site = tmp_path / "site.toml"
    site.write_text('[site]\ntitle = "T"\nurl = "https://t.example.test/"\n'
                    '[api]\nurl = "https://cas.example.test"\n'
                    'workspace = "65f0c0ffee0123456789abcd"\n'
                    f"[images]\nbudget = {value}\n")
    with pytest.raises(ConfigError, match=r"\[images\] budget"):
        load_config(site)
    site.write_text(site.read_text().replace(f"budget = {value}", "budget = 12.5"))
    assert load_config(site).images.budget == 12.5
