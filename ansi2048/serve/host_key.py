"""The server's SSH host key: made once in its data directory, then reused."""

from __future__ import annotations

import os

import asyncssh

__all__ = ["HOST_KEY_FILE", "host_key"]

HOST_KEY_FILE = "ssh_host_ed25519_key"


def host_key(data_dir: str) -> asyncssh.SSHKey:
    """The server's ed25519 host key in ``data_dir``, made on first start
    (readable by its owner only) and reused after."""
    path = os.path.join(data_dir, HOST_KEY_FILE)
    try:
        return asyncssh.read_private_key(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:  # asyncssh's KeyImportError is a ValueError
        # asyncssh's own words ("Invalid private key", "Missing PEM footer")
        # name neither the file nor what it is for.
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error) or type(error).__name__
        fix = "restore it, or move it away to make a new one"
        raise ValueError(f"the host key {path} cannot be read ({why}): {fix}") from None
    key = asyncssh.generate_private_key("ssh-ed25519")
    # O_EXCL: a key another server made meanwhile is not overwritten.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as stream:
        stream.write(key.export_private_key())
        stream.flush()
        os.fsync(stream.fileno())
    return key
