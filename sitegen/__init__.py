"""sitegen: a static-site generator for Content Automation Service workspaces.

This package file only names the version and the distribution; it must never import
the heavy stages (httpx, jinja2, markdown) so that `import sitegen` stays cheap.
"""

from __future__ import annotations

#: The distribution's name on the package index (the import package and command: `sitegen`).
DIST_NAME = "sitegen-cas"
#: The version of this source tree; `installed_version` prefers the installed metadata.
__version__ = "0.1.0"


def installed_version() -> str:
    """The installed distribution's version, or this tree's `__version__` when not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST_NAME)
    except PackageNotFoundError:
        return __version__
