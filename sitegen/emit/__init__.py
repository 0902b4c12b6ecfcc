"""The emit stage: everything between rendered pages and the output folder.

writer.py (the only module that writes the output), manifest.py, lock.py, feed.py,
sitemap.py, assets.py and the beacon script in static/. This package file must
never import the heavy stages.
"""
