"""The output folder's fixed names: its manifest, and the folders only sitegen writes.

Role: the names every layer agrees on about the output's layout, in the base so the
configuration can check a page path against them (`config`), the folder check can recognise
an output sitegen built by its manifest (`folders`), and the emitter, the headers and the
deploy use the same ones. Content-hashed assets (`emit.assets`) go to `static/`, the images
made the site's own (`images.stage`) to `media/`, Pagefind's bundles (`emit.search`) to
`pagefind/`. This module must never import anything of sitegen nor touch the filesystem.
"""

from __future__ import annotations

#: The manifest of what a build wrote, at the output's top (`emit.manifest`).
MANIFEST_NAME = ".sitegen-manifest.json"
#: Output folder of the content-hashed assets (`emit.assets`): cached for a year.
HASHED_FOLDER = "static/"
#: Output folder of the images made the site's own, `<hash>-<width>.<ext>` (`images.stage`).
MEDIA_FOLDER = "media/"
#: Pagefind's bundles (`[search]`, one per shard: `pagefind/<shard>/`), whose folders of
#: files named by their hash are cached for a year (`emit.headers`).
SEARCH_FOLDER = "pagefind/"
#: Every output folder where only sitegen writes (`emit.ownfiles` refuses an owner's file
#: in them): files named by a hash of their bytes, and the search bundles.
HASHED_FOLDERS = (HASHED_FOLDER, MEDIA_FOLDER, SEARCH_FOLDER)
