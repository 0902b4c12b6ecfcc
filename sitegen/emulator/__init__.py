"""An emulator of the Content Automation Service's API (v1 + v2) over one workspace JSON.

Role: the package behind `sitegen emulate`, `--demo` builds (in-process through
`httpx.ASGITransport`) and the integration tests: `create_app` builds the ASGI app, `Faults`
describes simulated trouble, `load_demo` reads the bundled demo workspace, and
`python -m sitegen.emulator.generator` (`generator.generate_workspace`) makes workspaces of any
size (not imported here: `-m` would find it loaded already and warn). Nothing here may reach
the network except the `emulate` server itself, bound where the user asks.
"""

from __future__ import annotations

from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.emulator.faults import Faults
from sitegen.emulator.state import EmulatorState

__all__ = ["EmulatorState", "Faults", "create_app", "load_demo"]
