"""Reading files given by the user safely: regular files only, up to a size, and never writing through a foreign link.

A path may name a FIFO (reading blocks for ever), a device such as
``/dev/zero`` (reading never ends), or a symbolic link planted to make a write
land on another program's file. :func:`read_regular_file` opens without
blocking, refuses anything but a regular file and reads at most ``limit``
bytes; :func:`check_store_link` refuses to write a profile store through a
link whose target is not one; :func:`make_folders` creates an output file's
missing folders, but never through a link to nothing.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tsuka_core.errors import StoreError, TsukaError

__all__ = ["MAX_FILE_BYTES", "UnreadableFileError", "check_store_link", "make_folders", "read_regular_file"]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest profile store or tools file read."""

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


class UnreadableFileError(TsukaError, OSError):
    """The path is not a regular file, or is larger than the limit; ``str()`` is the reason alone."""

    def __str__(self) -> str:
        return str(self.strerror)


def read_regular_file(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``limit`` of them.

    Raises FileNotFoundError when there is none, :class:`UnreadableFileError` when it is
    not a regular file or is larger than ``limit`` bytes, another OSError when
    it cannot be read. Opening never blocks, even on a FIFO.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise UnreadableFileError(errno.EINVAL, f"{kind}, not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFileError(errno.EFBIG, f"larger than the {limit // (1024 * 1024)} MiB limit")
    return data


def check_store_link(path: str | os.PathLike[str], contents: Mapping[str, Any] | None) -> None:
    """Raise StoreError when ``path`` is a symbolic link whose target is not a profile store.

    ``contents`` is the target's top level as read (None when it does not
    exist). A profile store is an empty object or one with ``profiles`` or
    ``recommendations``; a link to anything else (or to nothing) is never
    written through.
    """
    link = Path(path)
    if not link.is_symlink():
        return
    if contents is not None and (not contents or "profiles" in contents or "recommendations" in contents):
        return
    target = os.path.realpath(link)
    found = "nothing" if contents is None else f"{target}, which is not a profile store"
    raise StoreError(
        f"{link} is a symbolic link to {found}; nothing was written. Point it at a profile store or remove it"
    )


def make_folders(folder: str | os.PathLike[str]) -> None:
    """Create ``folder`` and its missing parents, as pytest does for its JUnit file.

    A link on the way to a folder is followed; a link to nothing (creating it
    would make a folder wherever the link points) or a file in the way raises
    :class:`UnreadableFileError` with the reason, and nothing is created.
    Another OSError (permission denied) is raised as it is.
    """
    missing: list[Path] = []
    current = Path(folder)
    while not current.is_dir():
        if current.is_symlink():
            target = os.readlink(current)
            raise UnreadableFileError(errno.ENOTDIR, f"{current} is a symbolic link to {target}, which is not a folder")
        if os.path.lexists(current):
            raise UnreadableFileError(errno.ENOTDIR, f"{current} is a file, not a folder")
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for part in reversed(missing):
        try:
            os.mkdir(part)
        except FileExistsError:
            if not part.is_dir():
                raise UnreadableFileError(errno.ENOTDIR, f"{part} appeared meanwhile and is not a folder") from None
