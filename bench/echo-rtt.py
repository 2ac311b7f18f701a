#!/usr/bin/env python3
#
# echo-rtt.py: the keystroke round trip of a pty session (bench-busy.sh).
#
# usage: echo-rtt.py N COMMAND...
#
# Runs COMMAND (an ssh that opens a session with a pty, running cat) on a
# pseudo-terminal of its own, waits for the session to answer, then N
# times writes one character and times until the remote tty's echo of it
# comes back.  Prints the N round trips in seconds, one per line, and
# exits 1 if the session did not answer or an echo did not come back
# within 30 s.

import os
import pty
import select
import sys
import time
import tty


def read_until(fd, want, limit):
    """Reads from fd until want was seen; False after limit seconds."""
    seen = b""
    end = time.monotonic() + limit
    while want not in seen:
        left = end - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return False
        try:
            data = os.read(fd, 4096)
        except OSError:
            return False
        if not data:
            return False
        seen = (seen + data)[-4096:]
    return True


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: echo-rtt.py N COMMAND...\n")
        return 2
    n = int(sys.argv[1])
    pid, fd = pty.fork()
    if pid == 0:
        # No echo but the remote tty's: until ssh has the session (a
        # round trip or more on a busy connection) and puts the terminal
        # in raw mode itself, this pty's own echo would come back at
        # once, and be timed as the remote's.  The byte after tells the
        # parent that nothing it writes now is echoed or flushed.
        tty.setraw(0)
        os.write(1, b"\x01")
        os.execvp(sys.argv[2], sys.argv[2:])
    rc = 0
    if not read_until(fd, b"\x01", 30):
        sys.stderr.write("echo-rtt: the pty was not set up\n")
        os.kill(pid, 15)
        os.waitpid(pid, 0)
        return 1
    # The session is up once the remote tty echoes a first word.
    os.write(fd, b"ready\r")
    if not read_until(fd, b"ready", 60):
        sys.stderr.write("echo-rtt: the session did not answer\n")
        rc = 1
    else:
        # Whatever else the first line brings back.
        read_until(fd, b"\xff", 1)
    for i in range(n if rc == 0 else 0):
        ch = bytes([ord("0") + i % 10])
        t0 = time.monotonic()
        os.write(fd, ch)
        if not read_until(fd, ch, 30):
            sys.stderr.write("echo-rtt: no echo of keystroke %d\n" % i)
            rc = 1
            break
        print("%.4f" % (time.monotonic() - t0), flush=True)
        time.sleep(0.2)
    os.write(fd, b"\r\x04")
    time.sleep(0.5)
    try:
        os.kill(pid, 15)
    except OSError:
        pass
    os.waitpid(pid, 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
