"""The images stage in real builds: a fake image host on 127.0.0.1 serving good images and
every kind of trouble; the demo in both themes; rebuilds that make no image request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from sitegen.build import BuildOptions, run_build
from sitegen.config import demo_config, parse_config
from tests.content import synced
from tests.images.imagehost import ImageHost, image_host, png
from tests.images.sites import (
    API,
    IMG,
    build,
    config,
    expire_waits,
    page_of,
    tree,
    workspace,
)


def body_for(host: ImageHost) -> str:
    names = ["a.png", "rot.jpg", "c.webp", "evil.svg", "bomb.png", "text.jpg", "missing.png",
             "slow.png", "to-file.png", "to-metadata.png"]
    lines = [f"![Picture {name}]({host.url('/' + name)})" for name in names]
    lines.append("![A relative picture that is not there](/media/demo/nowhere.png)")
    return "# Pictures\n\n" + "\n\n".join(lines) + "\n"


def test_every_outcome_of_the_fake_host(tmp_path: Path, host: ImageHost) -> None:
    out = tmp_path / "_site"
    report = build(config(tmp_path, api=host.origin), out, workspace(body_for(host)))
    html = page_of(out)
    warnings = "\n".join(report.warning_messages)
    media = out / "media"

    def shown(name: str) -> str:
        match = re.search(r'<img\b[^>]*alt="Picture ' + re.escape(name) + r'"[^>]*>', html)
        assert match, name
        return match.group(0)

    # good images: sized <picture>s of local files; the body's first is fetched first
    for name in ("a.png", "rot.jpg", "c.webp"):
        img = shown(name)
        assert 'src="/media/' in img and "width=" in img and "height=" in img, img
        assert "srcset=" in img and "sizes=" in img and 'decoding="async"' in img
    assert 'fetchpriority="high"' in shown("a.png") and 'loading="lazy"' in shown("c.webp")
    for src in re.findall(r'(?:src|srcset)="([^"]+)"', html):
        for part in src.split(", "):
            path = part.split(" ")[0]
            if path.startswith("/media/"):
                assert (out / path.lstrip("/")).is_file(), path
    # EXIF orientation applied (60×20 stored, shown 20×60) and every metadata dropped
    rot = shown("rot.jpg")
    assert 'width="20" height="60"' in rot
    jpeg = media / re.search(r'src="/media/([^"]+\.jpg)"', rot).group(1)  # type: ignore[union-attr]
    with Image.open(jpeg) as image:
        assert image.size == (20, 60) and not image.getexif()
        assert image.getpixel((10, 2))[1] > 150  # the green band is on top now
    for variant in media.glob(jpeg.name.split("-")[0] + "-*"):
        with Image.open(variant) as image:
            assert not image.getexif() and "exif" not in image.info, variant
    # trouble: a warning naming the page and the URL; the absolute URL is kept as it is, but
    # for one that leads to a non-public address: its alt text (no visitor's browser asks it)
    expected = {"evil.svg": "SVG", "bomb.png": "decompression bomb", "text.jpg": "not an image",
                "missing.png": "HTTP 404", "slow.png": "longer than",
                "to-file.png": "file: URL", "to-metadata.png": "non-public address (169.254"}
    for name, reason in expected.items():
        line = next((w for w in report.warning_messages if host.url("/" + name) in w), "")
        assert reason in line and "The picture test" in line, (name, warnings)
        if name == "to-metadata.png":
            assert "alt text" in line and host.url("/" + name) not in html
            assert "Picture to-metadata.png" in html
        else:
            assert f'src="{host.url("/" + name)}"' in shown(name)
    assert not list(media.glob("*.svg"))
    # a relative URL that cannot be fetched is dropped to its alt text
    assert "A relative picture that is not there" in html
    assert "/media/demo/nowhere.png" not in html
    # image requests are counted apart from API calls, in the summary and the report
    assert report.images["requests"] >= 10 and report.images["failed"] == 8
    assert "images: " in report.summary() and report.to_json()["images"] == report.images
    assert host.hits["/to-file.png"] == 1 and host.hits["/to-metadata.png"] == 1
    assert host.credentials == 0


def test_a_rebuild_makes_no_image_request_and_strict_fails_on_a_bad_one(
        tmp_path: Path) -> None:
    with image_host() as host:
        data = workspace(f"![One]({host.url('/a.png')})\n\n![Two]({host.url('/wide.png')})\n")
        out = tmp_path / "_site"
        first = build(config(tmp_path, api=host.origin), out, data)
        assert host.hits["/a.png"] == 1 and host.hits["/wide.png"] == 1
        assert first.images["requests"] >= 2
        html = page_of(out)
        # never upscaled: 2000 px wide gives 480, 960 and 1600; 64 px wide gives 64 only
        assert "-1600.webp 1600w" in html and "-2000." not in html and "-64.png 64w" in html
        second = build(config(tmp_path, api=host.origin), out, data)
        assert sum(host.hits.values()) == 2 and second.images["requests"] == 0
        assert second.written == [] and page_of(out) == html
        bad = workspace(f"![Gone]({host.url('/missing.png')})\n")
        from sitegen.errors import StrictError

        with pytest.raises(StrictError):
            build(config(tmp_path, api=host.origin), out, bad, strict=True)
        assert page_of(out) == html  # the previous output is kept


def test_an_empty_output_with_the_store_kept_encodes_no_image_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in CI: the store restored, the output empty. Each image's variants come from the
    store, byte for byte, without a request or an encode; a damaged stored entry is made
    again from the stored source."""
    import shutil

    from sitegen.fetch.stored import open_config_store
    from sitegen.images import stored, variants

    encoded: list[int] = []
    real = variants.process_all
    monkeypatch.setattr(variants, "process_all", lambda jobs, settings, limits: (
        encoded.extend(len(d) for d in jobs.values()), real(jobs, settings, limits))[1])
    with image_host() as host:
        data = workspace(f"![One]({host.url('/a.png')})\n\n![Two]({host.url('/wide.png')})\n")
        cfg, out = config(tmp_path, api=host.origin), tmp_path / "_site"
        build(cfg, out, data)
        first, made = tree(out), len(encoded)
        assert made >= 2
        shutil.rmtree(out)
        again = build(cfg, out, data)
        assert len(encoded) == made and again.images["requests"] == 0
        assert tree(out) == first
        with open_config_store(cfg) as store:
            keys = [str(k) for (k,) in store.db.execute(
                "SELECT key FROM derived WHERE kind = ?", (stored.VARIANTS_KIND,))]
            store.save_derived(stored.VARIANTS_KIND, {keys[0]: b"damaged"}, keys)
        shutil.rmtree(out)
        build(cfg, out, data)
        assert len(encoded) == made + 1 and tree(out) == first
        assert sum(host.hits.values()) == 2  # the source came from the store


def test_an_image_that_comes_back_renders_exactly_what_a_fresh_build_does(
        tmp_path: Path) -> None:
    """Incremental exactness: a page whose image changed from broken to processed (an `I`
    read) is rendered again, file for file as a fresh build makes it. (A passing failure: a
    503 is asked again once its wait is over; a 404 would be remembered.)"""
    with image_host({"/late.png": (503, {}, b"busy")}) as host:
        data = workspace(f"Intro.\n\n![Late]({host.url('/late.png')})\n")
        data["authorIdentities"][0]["imageUrl"] = host.url("/late.png")
        out, cfg = tmp_path / "_site", config(tmp_path, api=host.origin)
        build(cfg, out, data)
        assert f'src="{host.url("/late.png")}"' in page_of(out)
        host.routes["/late.png"] = (200, {}, png(800, 400))
        expire_waits(cfg)
        build(cfg, out, data)
        fresh_root = tmp_path / "fresh"
        fresh_root.mkdir()
        build(config(fresh_root, api=host.origin), fresh_root / "_site", data)
    assert 'src="/media/' in page_of(out)
    assert tree(out) == tree(fresh_root / "_site")


def test_images_off_keeps_the_urls_as_written_a_relative_one_at_the_service(
        tmp_path: Path, host: ImageHost) -> None:
    """Hot-linked: an absolute URL as it is, a root-relative one where it lives (at `[api]
    url`: as it is, it would point at the built site, which has no such file)."""
    out = tmp_path / "_site"
    data = workspace(f"![Kept]({host.url('/a.png')})\n\n![Rel](/media/demo/rail-lines.jpg)\n")
    report = build(config(tmp_path, enabled=False), out, data)
    html = page_of(out)
    assert f'<img src="{host.url("/a.png")}" alt="Kept"' in html
    assert f'<img src="{API}/media/demo/rail-lines.jpg" alt="Rel"' in html
    assert 'src="/media/' not in html and not (out / "media").exists()
    author = (out / "authors" / "mara-lindqvist" / "index.html").read_text()
    assert f'src="{API}/media/demo/avatar-mara.png"' in author
    assert sum(host.hits.values()) == 0 and not report.images.get("images")
    assert not [w for w in report.warning_messages if "/media/demo/" in w]  # (link check)


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_the_demo_shows_sized_local_pictures_in_both_themes(tmp_path: Path, theme: str) -> None:
    base = parse_config({"site": {"title": "Demo", "url": "https://demo.example.test/",
                                  "theme": theme, "description": "The demo"},
                         "api": {"url": "https://x.example.test",
                                 "workspace": "65f0c0ffee0123456789abcd"}}, tmp_path)
    cfg = demo_config(base, tmp_path)
    out = tmp_path / "_site"
    report = run_build(cfg, BuildOptions(output=out, demo=True))
    assert report.images["processed"] >= 10 and report.images["failed"] == 0
    home = (out / "index.html").read_text()
    assert home.count("<picture>") >= 2  # the home page cards show their articles' images
    assert len(re.findall(r'fetchpriority="high"', home)) == 1
    for page in out.rglob("*.html"):
        text = page.read_text()
        for img in IMG.findall(text):
            assert " width=" in img and " height=" in img, (page, img)
            assert 'src="/media/' in img, (page, img)
        for srcset in re.findall(r'srcset="([^"]+)"', text):
            for part in srcset.split(", "):
                assert (out / part.split(" ")[0].lstrip("/")).is_file(), part
    manifest = json.loads((out / ".sitegen-manifest.json").read_text())
    assert any(name.startswith("media/") and name.endswith(".webp")
               for name in manifest["files"])
    assert not (out / "media" / "demo").exists()


HASHED_NAME = re.compile(r"[0-9a-f]{12}-[0-9]+\.(?:webp|avif|jpg|png)")


def test_the_demo_offline_makes_its_images_its_own_and_media_holds_only_hashed_names(
        tmp_path: Path) -> None:
    """`sitegen fetch --demo` stores no image; an `--offline` demo build still makes every
    demo image its own (its service runs in-process: no network), so nothing under `media/`
    keeps a name of its own (`_headers` caches the folder for a year)."""
    cfg = demo_config(None, tmp_path)
    synced(cfg)  # the content only, as `sitegen fetch --demo` leaves it
    out = tmp_path / "_site"
    report = run_build(cfg, BuildOptions(output=out, demo=True, offline=True))
    assert report.images["processed"] >= 10 and report.images["failed"] == 0
    media = [p.relative_to(out / "media").as_posix() for p in (out / "media").rglob("*")
             if p.is_file()]
    assert media and all(HASHED_NAME.fullmatch(name) for name in media), media
    assert not any("/media/demo/" in page.read_text() for page in out.rglob("*.html"))


def test_link_previews_name_the_largest_local_file(tmp_path: Path) -> None:
    cfg = demo_config(None, tmp_path)
    out = tmp_path / "_site"
    run_build(cfg, BuildOptions(output=out, demo=True))
    shared = set()
    for page in out.rglob("index.html"):
        for url in re.findall(r'<meta property="og:image" content="([^"]+)"', page.read_text()):
            shared.add(url)
            path = url.removeprefix(cfg.site.url.rstrip("/"))
            # (a page without an image of its own shares its generated card: issue 53)
            assert path.startswith(("/media/", "/share-cards/")) and \
                (out / path.lstrip("/")).is_file(), url
    assert shared


def test_an_image_the_build_dropped_leaves_a_magazine_text_card_not_an_empty_frame(
        tmp_path: Path) -> None:
    data = workspace("![gone](/media/demo/nowhere.png)\n\nA body whose only picture is gone.\n")
    out = tmp_path / "_site"
    build(config(tmp_path, theme="magazine"), out, data)
    pages = {p: p.read_text() for p in out.rglob("*.html")}
    card = re.compile(r'<article class="card[^>]*>(?:(?!</article>).)*The picture test', re.S)
    shown = [m.group(0) for html in pages.values() for m in card.finditer(html)]
    assert shown, "the article's card is on some list"
    for html in shown:  # a text card, never an empty picture frame
        assert 'class="card card--text"' in html and '<div class="art">' not in html
