"""Reading a user's file safely: regular files only, and never more than a cap of bytes.

A FIFO would block the reader forever and a device (`/dev/zero`) would be read until memory runs
out; both are refused before they are opened for reading (`os.open` with `O_NONBLOCK`, then
`fstat`), and a file over the cap is refused after reading one byte past it.
"""

from __future__ import annotations

import os
import stat

__all__ = ["NotReadable", "read_regular"]


class NotReadable(Exception):
    """The file is not a regular file, is larger than the cap, or cannot be read: `str()` says which."""


def read_regular(path: str | os.PathLike[str], cap: int) -> bytes:
    """The bytes of the regular file at `path`, at most `cap` of them.

    Raises:
        NotReadable: It is a FIFO, a device, a socket or a directory, or it holds more than `cap`
            bytes (the message gives the cap), or the OS refused to read it.
        FileNotFoundError: There is no such file.

    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise NotReadable("is a directory, not a regular file") from None
    except OSError as exc:
        raise NotReadable(f"cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise NotReadable("is a directory, not a regular file")
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "not a regular file"
            )
            raise NotReadable(f"is {kind}, not a regular file: only regular files are read")
        with os.fdopen(fd, "rb", closefd=True) as file:
            fd = -1
            data = file.read(cap + 1)
    except OSError as exc:
        raise NotReadable(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > cap:
        raise NotReadable(f"is larger than {cap:,} bytes, the most wirescript reads")
    return data
