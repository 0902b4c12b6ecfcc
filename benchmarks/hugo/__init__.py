"""The Hugo side of the benchmark: the same published articles as a Hugo site.

Role: `content.py` turns a workspace JSON (the emulator's format) into a Hugo source
folder (config, content, and the minimal layout set in `layouts/`) so that
`benchmarks/run.py` can time `hugo` against `sitegen build` on identical articles.
It must never touch sitegen's own output or cache, and never run Hugo itself.
"""
