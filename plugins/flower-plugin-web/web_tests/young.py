"""A flood of young connections from another local user: ``rate`` new connections a
second, each sending a request's first line (``GET /state HTTP/1.1``) and stalling, as
long as the test keeps the flood's stdin open.

This file is the flood itself too: :class:`YoungFlood` runs its own source as
``runuser -u nobody -- /usr/bin/python3 -c …`` (standard library only; the account
cannot read the test's files, and needs no virtualenv), so the flood is a process of
another uid, with descriptors of its own, as an attacker on the same machine would be.
When it ends it prints what it did as one JSON line.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"
FIRST_LINE = b"GET /state HTTP/1.1\r\n"


def flood(host: str, port: int, rate: float) -> dict[str, int]:
    """Until stdin closes: ``rate`` connections a second, each sends the first line."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    seen = {"opened": 0, "closed_by_server": 0, "failed": 0}
    stamp, owed = time.monotonic(), 0.0
    while True:
        now = time.monotonic()
        owed, stamp = owed + (now - stamp) * rate, now
        while owed >= 1:
            owed -= 1
            try:
                sock = socket.socket()
                sock.setblocking(False)
                sock.connect_ex((host, port))
            except OSError:
                seen["failed"] += 1
                continue
            sel.register(sock, selectors.EVENT_WRITE, "new")
            seen["opened"] += 1
        for key, _ in sel.select(0.002):
            if key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 1024):
                    return seen
                continue
            conn = key.fileobj
            if not isinstance(conn, socket.socket):
                continue
            if key.data == "new":
                try:
                    conn.send(FIRST_LINE)  # ...and never the rest
                    sel.modify(conn, selectors.EVENT_READ, "sent")
                    continue
                except OSError:
                    pass
            else:
                try:
                    if conn.recv(4096):
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
            sel.unregister(conn)
            conn.close()
            seen["closed_by_server"] += 1
        if len(sel.get_map()) > 6000:  # what the server still holds is far fewer
            for key in list(sel.get_map().values())[1:1000]:
                sel.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]


class YoungFlood:
    """``with YoungFlood(port, rate) as f:`` the flood runs as the user ``nobody``;
    ``f.seen`` says what it did once the block has ended."""

    def __init__(self, host: str, port: int, rate: float) -> None:
        self.args = [host, str(port), str(rate)]
        self.seen: dict[str, int] = {}
        self.proc: subprocess.Popen[str] | None = None

    @staticmethod
    def missing() -> str | None:
        """Why the flood cannot run here, or ``None``."""
        if os.geteuid() != 0:
            return "runs as root only: runuser switches to the user nobody"
        if shutil.which("runuser") is None or not os.path.exists(SYSTEM_PYTHON):
            return "needs runuser and the system's python3"
        return None

    def __enter__(self) -> YoungFlood:
        source = Path(__file__).read_text(encoding="utf-8")
        runuser = str(shutil.which("runuser"))
        command = [runuser, "-u", "nobody", "--", SYSTEM_PYTHON, "-c", source, *self.args]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        return self

    def __exit__(self, *_: object) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()  # the flood ends when its stdin does
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.proc.wait(60)
        lines = out.strip().splitlines()
        self.seen = json.loads(lines[-1]) if lines else {}


if __name__ == "__main__":
    print(json.dumps(flood(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))), flush=True)
