"""The local preview: `sitegen serve` (server, watcher, rebuilds, live reload, error overlay).

Role: serve the last good build of a site over real HTTP on the loopback interface, watch the
site's sources, rebuild only what a change needs and tell open browsers over Server-Sent Events.
Nothing in this package may write into the build output (only `emit/writer.py` does, through
`run_build`), and the live-reload script is injected into responses at serve time, never into
files.
"""
