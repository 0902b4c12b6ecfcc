"""Images made the site's own: fetched once, checked by decoding, resized and re-encoded.

`collect` finds every image the site shows, `process` decodes and makes the variants
(Pillow), `picture` says how a processed image is written in a page, and `stage` is the
build's stage that ties them to the store and the writer. The downloads themselves are
`sitegen.fetch.images`.
"""
