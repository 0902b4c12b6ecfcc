"""The one error tree of sitegen, with the exit codes of SPEC.md.

Every failure a user can meet is a `SitegenError` whose message is one sentence
naming the thing and the fix. `cli.py` is the only place that catches them and
turns them into an exit status. An error message must never contain an API key,
a token or request headers.

    SitegenError                 exit 1  build failed
    ├── BuildError               exit 1  rendering / writing failed
    │   └── SearchError          exit 1  Pagefind missing or failed to index the site
    ├── StrictError              exit 1  --strict and warnings were logged
    ├── CacheError               exit 1  --offline with no usable cache
    │   └── StoreBusyError       exit 1  another sitegen process holds the store too long
    ├── ConfigError              exit 2  site.toml, arguments, missing key variable
    ├── ApiError                 exit 1  (base of the API failures below)
    │   ├── AuthError            exit 3  401/403: the API refused the key
    │   ├── QuotaError           exit 4  402: monthly quota exhausted (or --max-calls)
    │   └── UnreachableError     exit 5  network failure, 5xx/429 after retries,
    │                                    or the forced API version absent
    └── DeployError              exit 1  `sitegen deploy`: the object store failed
        ├── StorageAuthError     exit 3  the store refused the credentials (403, bad key)
        └── StorageUnreachable   exit 5  connection errors, timeouts, 5xx after retries

    KeyboardInterrupt            exit 130  Ctrl-C (SIGTERM too): "interrupted", output kept
    └── Interrupted              exit 130  a build stopped from inside: Pagefind ended by the
                                           Ctrl-C, or the preview stopping (another thread)

Any other exception is a bug: `cli.py` turns it into one line naming the stage that failed
and suggesting `--debug` (exit 1), and writes the report; the previous output is kept.
"""

from __future__ import annotations


class SitegenError(Exception):
    """Base of every error sitegen reports to the user."""

    exit_code = 1


class BuildError(SitegenError):
    """Rendering or writing the site failed; the previous output is kept."""


class SearchError(BuildError):
    """Pagefind could not be found or could not index the site; the previous output is kept."""


class StrictError(SitegenError):
    """`--strict` was given and the build logged warnings."""


class CacheError(SitegenError):
    """The content cache is missing or unusable where one is required."""


class StoreBusyError(CacheError):
    """Another process (a build, `sitegen serve`) held the store's database past the wait."""


class ConfigError(SitegenError):
    """Configuration or usage error: bad site.toml, bad flag, missing key variable."""

    exit_code = 2


class ApiError(SitegenError):
    """The content service answered in a way the build cannot go on with."""


class AuthError(ApiError):
    """The service refused the key (401 or 403)."""

    exit_code = 3


class QuotaError(ApiError):
    """The workspace's monthly API quota is exhausted (402), or --max-calls was reached."""

    exit_code = 4


class UnreachableError(ApiError):
    """The service could not be reached, kept failing after retries, or the version is absent."""

    exit_code = 5


class DeployError(SitegenError):
    """`sitegen deploy` could not finish; the bucket still serves a whole site."""


class StorageAuthError(DeployError):
    """The object store refused the credentials (invalid key, bad signature, access denied)."""

    exit_code = 3


class StorageUnreachable(DeployError):
    """The object store could not be reached, or kept failing (5xx) after retries."""

    exit_code = 5


class Interrupted(KeyboardInterrupt):
    """A build stopped because the user asked (not an error of the site): handled as Ctrl-C.

    Raised where the interrupt is seen by other means than the main thread's KeyboardInterrupt:
    a subprocess that the same Ctrl-C ended, or a build in a preview thread whose stop event
    was set. It is a KeyboardInterrupt, so no `except Exception` turns it into a failure.
    """
