"""The emit stage: everything between rendered pages and the output folder.

writer.py (the only module that writes the output) with tree.py (its file-system primitives),
lock.py (one build at a time) and manifest.py (the record of what a build wrote); intact.py
(the output checked against that record); ownfiles.py (the owner's static/ files); sitejobs.py
(the site-wide files: the hashed assets as the render named them, headers.py's `_headers`,
redirects.py's pages); sharecards.py with cardpaint.py (the share cards' PNGs, fonts/);
search.py with pagefind.py (the search bundles); links.py and linkcheck.py (the link check);
mediatypes.py (each file's Content-Type). This package file must never import the heavy stages,
and no module here imports the render (what emit needs of it is handed in by the recipe).
"""
