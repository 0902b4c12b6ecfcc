"""The environment a test's `sitegen` subprocess runs under: the suite's own, less the
variables that say "this is a CI runner". On a runner, sitegen prints one line about
`SITEGEN_CACHE_KEY` (`sitegen.cachekey.ci_without_cache_key`); a test that compares a command's
whole stderr runs it as on a developer's machine, and the tests of that line set the variables
themselves."""

from __future__ import annotations

import os

CI_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "CI")


def developer_env(**extra: str) -> dict[str, str]:
    """`os.environ` without the CI variables, plus *extra*."""
    env = {name: value for name, value in os.environ.items() if name not in CI_VARIABLES}
    return {**env, **extra}
