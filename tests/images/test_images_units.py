"""The image downloader's limits and the processor's checks, each on its own."""

from __future__ import annotations

import io

import pytest
from PIL import Image, features

from sitegen.fetch.images import Downloaded, Failed, ImageFetcher
from sitegen.images.picture import DROPPED, ImageMap, Linked, Picture, picture_html
from sitegen.images.process import ImageRefused, Settings, open_checked, process
from sitegen.images.shown import unusable
from sitegen.urls import service_url as resolve
from tests.images.imagehost import bomb_png, image_host, png, rotated_jpeg

SETTINGS = Settings((480, 960, 1600), ("webp",), 80, 50_000_000)


def test_a_host_slower_than_httpx_default_five_seconds_is_waited_for_up_to_the_timeout(
        ) -> None:
    """`[images] timeout` is the one deadline of an image: a host that starts answering after
    6 s, within a 30 s timeout, is waited for (httpx's own 5 s read timeout cut it short)."""
    with image_host({"/late.png": (200, {"x-delay": "6"}, png())}) as host:
        fetcher = ImageFetcher(host.url("/"), max_bytes=100_000, timeout=30)
        found = fetcher.fetch_all([host.url("/late.png")])
    assert isinstance(found[host.url("/late.png")], Downloaded), found


def test_the_size_cap_holds_while_streaming_and_redirects_are_followed_to_public_hops() -> None:
    big = png(1500, 1500, (1, 2, 3)) + b"\x00" * 300_000
    with image_host({"/big.png": (200, {}, big), "/a.png": (200, {"etag": '"x"'}, png()),
                     "/hop.png": (301, {"location": "/a.png"}, b"")}) as host:
        fetcher = ImageFetcher(host.url("/"), max_bytes=100_000, timeout=5)
        found = fetcher.fetch_all([host.url("/big.png"), host.url("/hop.png")])
    assert isinstance(found[host.url("/big.png")], Failed)
    assert "max_bytes" in found[host.url("/big.png")].reason  # type: ignore[union-attr]
    hop = found[host.url("/hop.png")]
    assert isinstance(hop, Downloaded) and hop.etag == '"x"' and hop.data == png()
    assert fetcher.counts.requests == 3 and host.hits["/a.png"] == 1


def test_loopback_is_refused_unless_the_service_is_there() -> None:
    with image_host({"/a.png": (200, {}, png())}) as host:
        fetcher = ImageFetcher("https://cas.example.test", max_bytes=10**6, timeout=5)
        found = fetcher.fetch_all([host.url("/a.png"), "http://169.254.169.254/x.png",
                                   "http://[::1]:1/x.png", "http://10.0.0.1/x.png"])
    assert all(isinstance(r, Failed) and "non-public address" in r.reason
               for r in found.values()), found
    assert host.hits["/a.png"] == 0


def test_relative_urls_resolve_against_the_service_and_other_schemes_do_not() -> None:
    assert resolve("/media/demo/x.png", "http://127.0.0.1:8080") == \
        "http://127.0.0.1:8080/media/demo/x.png"
    assert resolve("//img.test/a.png", "http://s.test") == "https://img.test/a.png"
    assert resolve("data:image/png;base64,xx", "http://s.test") is None


def test_a_declared_bomb_is_refused_before_decoding() -> None:
    with pytest.raises(ImageRefused, match="decompression bomb"):
        open_checked(bomb_png(20_000), 50_000_000)
    with pytest.raises(ImageRefused, match="decompression bomb"):
        process(bomb_png(8_000), SETTINGS)  # 64 Mpx: over the cap, under Pillow's own


def test_variants_are_never_upscaled_and_carry_no_metadata() -> None:
    small = process(png(300, 200), SETTINGS)
    assert {v.width for v in small.variants} == {300}
    assert (small.width, small.height, small.fallback) == (300, 200, "png")
    wide = process(png(2000, 1000), SETTINGS)
    assert sorted({v.width for v in wide.variants}) == [480, 960, 1600]
    assert {v.format for v in wide.variants} == {"webp", "png"}
    rotated = process(rotated_jpeg(), SETTINGS)
    assert (rotated.width, rotated.height, rotated.fallback) == (20, 60, "jpeg")
    for variant in rotated.variants:
        with Image.open(io.BytesIO(variant.data)) as image:
            assert image.size == (20, 60) and not image.getexif()


@pytest.mark.skipif(not features.check("avif"), reason="this Pillow cannot encode AVIF")
def test_avif_comes_first_when_asked_for_and_supported() -> None:
    made = process(png(100, 50), Settings((480,), ("avif", "webp"), 60, 10**6))
    assert {v.format for v in made.variants} == {"avif", "webp", "png"}
    picture = Picture(made.width, made.height, made.fallback,
                      tuple((v.name, v.width, v.format) for v in made.variants))
    html = str(picture_html(picture, alt='a "quoted" alt', link="/blog"))
    assert html.index("image/avif") < html.index("image/webp")
    assert 'alt="a &#34;quoted&#34; alt"' in html and 'src="/blog/media/' in html


def test_each_failure_says_whether_asking_again_could_answer_otherwise() -> None:
    routes = {f"/s{status}.png": (status, {}, b"") for status in (400, 403, 404, 410, 451,
                                                                  408, 429, 500, 503)}
    routes["/big.png"] = (200, {}, b"\x00" * 5000)
    routes["/loop.png"] = (302, {"location": "/loop.png"}, b"")
    routes["/to-ftp.png"] = (302, {"location": "ftp://x.test/a.png"}, b"")
    with image_host(routes) as host:
        fetcher = ImageFetcher(host.url("/"), max_bytes=2048, timeout=5)
        found = fetcher.fetch_all([host.url(path) for path in routes]
                                  + ["http://no-such-host.invalid/a.png"])
    permanence = {url.rsplit("/", 1)[1]: getattr(result, "permanent", None)
                  for url, result in found.items()}
    assert permanence == {
        "s400.png": True, "s403.png": True, "s404.png": True, "s410.png": True,
        "s451.png": True, "big.png": True, "loop.png": True, "to-ftp.png": True,
        "s408.png": False, "s429.png": False, "s500.png": False, "s503.png": False,
        "a.png": False}  # (the host that does not resolve)


def test_an_image_not_made_local_is_linked_where_it_lives() -> None:
    picture = Picture(10, 10, "png", (("ab-10.png", 10, "png"),))
    images = ImageMap({"/made.png": picture, "/gone.png": DROPPED}, {}, "https://cas.test/api")
    assert images.get("/made.png") is picture and images.get("/gone.png") is DROPPED
    assert images.get("/media/x.png") == Linked("https://cas.test/media/x.png")
    assert images.get("https://cdn.test/x.png") is None  # absolute: written as it is
    assert images.get("//cdn.test/x.png") is None and images.get("x.png") is None
    assert ImageMap().get("/media/x.png") is None  # no service: as it is
    assert images.fingerprint("/media/x.png") != ImageMap().fingerprint("/media/x.png")


def test_a_failed_relative_image_is_linked_unless_it_is_known_to_be_unusable(
        caplog: pytest.LogCaptureFixture) -> None:
    absolute = "https://cas.test/media/x.png"
    assert unusable("/media/x.png", absolute, "article 'A'", "HTTP 404", True) is DROPPED
    assert unusable("/media/x.png", absolute, "article 'A'", "HTTP 503", False) is None
    assert unusable(absolute, absolute, "article 'A'", "HTTP 404", True) is None
    assert unusable("x.png", None, "article 'A'", "it is not an http(s) URL", True) is DROPPED
    said = [r.getMessage() for r in caplog.records]
    assert "alt text" in said[0] and f"the page links to it at {absolute}" in said[1]
    assert "where it is" in said[2] and all("article 'A'" in line for line in said)


def test_each_host_is_looked_up_once_per_build_however_many_images_it_serves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that does not resolve may take the resolver's timeout: 114 images on one such
    host cost 20 s when each image looked it up again."""
    import socket

    asked: list[str] = []

    def nowhere(host: str, *args: object, **kwargs: object) -> object:
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "no such name")

    monkeypatch.setattr(socket, "getaddrinfo", nowhere)
    fetcher = ImageFetcher("https://cas.example.test", max_bytes=10**6, timeout=5)
    urls = [f"https://images.example.test/{n}.jpg" for n in range(40)]
    urls += ["https://other.example.test/a.jpg", "https://other.example.test/b.jpg"]
    found = fetcher.fetch_all(urls)
    assert sorted(asked) == ["images.example.test", "other.example.test"]
    assert all(isinstance(result, Failed) and not result.permanent
               and "cannot be resolved" in result.reason for result in found.values())
    assert fetcher.counts.requests == 0
    fetcher.fetch_all(urls[:1])  # the next build asks again: a name may resolve by then
    assert asked.count("images.example.test") == 2
