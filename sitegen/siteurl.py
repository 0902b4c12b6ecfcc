"""`--base-url URL`: the public base URL of one build, given on the command line.

Role: the option becomes `SITEGEN_SITE_URL` for the command's duration, so there is one way
in: the environment variable, which `config.build_config` reads and the no-change check
(`sitegen.unchanged`) hashes. It loads nothing heavy (the no-change check runs
before the configuration models are imported) and must never read anything else.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

#: The environment variable that overrides `[site] url` for one build (`--base-url` sets it).
SITE_URL_ENV = "SITEGEN_SITE_URL"


@contextmanager
def site_url_from(option: str | None) -> Iterator[None]:
    """`--base-url URL` as `SITEGEN_SITE_URL=URL` for the command's duration (then restored).

    One way in keeps one rule: the override is part of the environment the build's
    no-change check hashes (`sitegen.unchanged`).
    """
    if option is None:
        yield
        return
    before = os.environ.get(SITE_URL_ENV)
    os.environ[SITE_URL_ENV] = option
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SITE_URL_ENV, None)
        else:
            os.environ[SITE_URL_ENV] = before
