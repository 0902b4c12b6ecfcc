"""The render stage: the model → the bytes of each page, drawn by the theme's templates.

`setup` is the one room that turns the configuration into a ready renderer (`themes`: the theme
chain, `compiled`: its templates kept in the store, `assets`: the theme's static files under
content-hashed names and the beacon script in static/, `beacon`: the beacon tag, `bodies`: the
body cache, `i18n`: the message catalogue); `pages` is the renderer (with `blocks`, `markdown`,
`highlight`, `filters`, `images`, `seo`, `sharecard`, `feeds`, `feedhtml`, `fingerprints`,
`contextprint` and `reads` for what a page read), `pool` renders in worker processes. Nothing
here writes the output (the emit stage does) or imports the emit stage.
"""
