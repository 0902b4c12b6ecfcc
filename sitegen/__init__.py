"""sitegen: a static-site generator for Content Automation Service workspaces.

This package file only names the version; it must never import the heavy stages
(httpx, jinja2, markdown) so that `import sitegen` stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"
