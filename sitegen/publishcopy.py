"""`python -m sitegen.publishcopy OUTPUT FOLDER`: the files a build wrote, copied for a host.

Role: the GitLab scaffold's pages job builds into its cached output folder and publishes
`public/` made by this module: a new folder holding exactly the files the build's manifest
(`emit.manifest`, written by the build that just passed) names, each checked against the
sha256 the manifest gives it, so nothing else a restored CI cache may hold (a `.git/`, a
planted page, the manifest itself) is ever published. The manifest's paths are checked as
the writer checks them (`Manifest.from_bytes`), and a symbolic link is never followed.
Each failure is one `error:` line and exit 1. It must never write into the output folder,
nor into a folder that exists already.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from sitegen.emit.manifest import MANIFEST_NAME, Manifest
from sitegen.errors import BuildError


def copy_published(output: Path, folder: Path) -> int:
    """Copy the files *output*'s manifest names into the new *folder*; how many."""
    try:
        manifest = Manifest.from_bytes((output / MANIFEST_NAME).read_bytes())
    except OSError:
        manifest = None
    if manifest is None:
        raise BuildError(f"{output} holds no sitegen manifest: run `sitegen build -o {output}` "
                         "first, and publish only after it passed")
    if os.path.lexists(folder):
        raise BuildError(f"{folder} exists already: remove it first (it is made afresh from "
                         "the build's files)")
    for rel, entry in sorted(manifest.files.items()):  # (paths checked as the writer does)
        data = _read_plain(output / rel)
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise BuildError(f"{output / rel} is not the file the build wrote (its bytes "
                             "changed since): build again, then publish")
        target = folder / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as handle:
                handle.write(data)
        except OSError as error:
            raise BuildError(f"cannot copy {rel} into {folder} ({error.strerror}): check "
                             "that folder's permissions") from None
    folder.mkdir(parents=True, exist_ok=True)  # (a site of no file: an empty folder)
    return len(manifest.files)


def _read_plain(path: Path) -> bytes:
    """The bytes of the plain file *path* (a symbolic link is refused, never followed)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise BuildError(f"cannot read {path} ({error.strerror}): build again, then "
                         "publish") from None
    with os.fdopen(handle, "rb") as opened:
        if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
            raise BuildError(f"{path} is not a plain file: build again, then publish")
        return opened.read()


def main(argv: list[str]) -> int:
    """The command: OUTPUT FOLDER → exit 0 (a line saying how many), or 1 (one error line)."""
    if len(argv) != 2:
        print("usage: python -m sitegen.publishcopy OUTPUT FOLDER", file=sys.stderr)
        return 2
    try:
        count = copy_published(Path(argv[0]), Path(argv[1]))
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"copied the {count} files of {argv[0]}'s build into {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
