"""Package data: the files `sitegen init` writes (see sitegen/scaffold.py)."""
