"""The benchmark harness behind `benchmarks/run.py`.

Role: measure sitegen (and Hugo) as whole processes and report median with min–max
beside each target. `measure` runs one process and reads its own rusage; `stats`
summarises samples and formats the table; `machine` describes the host; `sites`
prepares workspaces, emulators, site folders and caches; `steps` holds one function
per benchmark step, `ci` the CI cases (a tar-restored site beside Hugo and Hugo +
Pagefind) and `scale` the memory and model figures at two sizes. Nothing here is
imported by sitegen, and nothing here may write inside the repository (generated data
lives in a temporary folder).
"""
