"""Images made the site's own: fetched once, checked by decoding, resized and re-encoded.

`stage` is the build's stage, a recipe of one-job steps: `settings` (`[images]` read once),
`collect` (every image the site shows, from the model), `download` (what to fetch and what
the answers mean; the downloads themselves are `sitegen.fetch.images`), `variants` (decode
and encode, with `process`: Pillow, run by `worker` in child processes under deadlines),
`stored` and `failures` (what the store keeps), and `shown` (what a page shows of each
image, the warnings); `picture` says how a processed image is written in a page.
"""
