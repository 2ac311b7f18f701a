#!/usr/bin/python3
#
# sftp-checkfile.py SERVER DIR: the check-file-handle and check-file-name
# requests (draft-ietf-secsh-filexfer-extensions-00, section 3) of the
# SFTP server program SERVER (sftp-server, run on pipes), against
# Python's hashlib: files in DIR (which it makes).  One line per case:
# "ok NAME" or "fail NAME: WHY".  For regress/t-resume.sh.

import hashlib
import importlib.util
import os
import struct
import subprocess
import sys

FXP_INIT, FXP_VERSION, FXP_OPEN, FXP_CLOSE = 1, 2, 3, 4
FXP_OPENDIR = 11
FXP_STATUS, FXP_HANDLE = 101, 102
FXP_EXTENDED, FXP_EXTENDED_REPLY = 200, 201
FX_OK, FX_NO_SUCH_FILE, FX_FAILURE, FX_BAD_MESSAGE = 0, 2, 4, 5
FX_OP_UNSUPPORTED = 8


# The adversary's encoders (it runs nothing when imported).
sys.dont_write_bytecode = True
_spec = importlib.util.spec_from_file_location(
    "adversary", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "sftp-adversary.py"))
_adv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_adv)
p32, p64, pstr = _adv.p32, _adv.p64, _adv.pstr


class Conn:
    def __init__(self, server):
        self.p = subprocess.Popen([server], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.rid = 0

    def send(self, data):
        self.p.stdin.write(p32(len(data)) + data)
        self.p.stdin.flush()

    def recv(self):
        n = struct.unpack(">I", self.p.stdout.read(4))[0]
        return self.p.stdout.read(n)

    def request(self, t, body):
        self.rid += 1
        self.send(bytes([t]) + p32(self.rid) + body)
        r = self.recv()
        if struct.unpack(">I", r[1:5])[0] != self.rid:
            raise ValueError("reply to another request")
        return r[0], r[5:]


def strings(data):
    out = []
    while data:
        n = struct.unpack(">I", data[:4])[0]
        out.append(data[4:4 + n])
        data = data[4 + n:]
    return out


def expect(data, off, n, bsize, alg):
    end = len(data) if n == 0 else min(len(data), off + n)
    step = bsize if bsize else max(end - off, 1)
    out, pos = b"", off
    while True:
        stop = min(end, pos + step)
        out += hashlib.new(alg, data[pos:max(stop, pos)]).digest()
        pos = stop
        if pos >= end:
            return out


def main():
    server, top = sys.argv[1], sys.argv[2]
    os.makedirs(top, exist_ok=True)
    path = os.path.join(top, "f")
    data = os.urandom(1000003)
    with open(path, "wb") as f:
        f.write(data)
    c = Conn(server)
    c.send(bytes([FXP_INIT]) + p32(3))
    v = c.recv()
    exts = strings(v[5:])
    names = dict(zip(exts[0::2], exts[1::2]))
    bad = 0

    def result(name, ok, why=""):
        nonlocal bad
        if ok:
            print("ok %s" % name)
        else:
            bad += 1
            print("fail %s: %s" % (name, why))

    for e in (b"check-file-handle", b"check-file-name"):
        result("advertised-%s" % e.decode(), names.get(e) == b"1",
               "VERSION has %r" % names.get(e))
    t, body = c.request(FXP_OPEN, pstr(path) + p32(1) + p32(0))
    if t != FXP_HANDLE:
        result("open", False, "type %d" % t)
        return 1
    handle = strings(body)[0]

    def ask(by_name, algs, off, n, bsize):
        what = pstr(path) if by_name else pstr(handle)
        ext = "check-file-name" if by_name else "check-file-handle"
        return c.request(FXP_EXTENDED, pstr(ext) + what + pstr(algs) +
                         p64(off) + p64(n) + p32(bsize))

    cases = [
        ("whole", "sha256", 0, 0, 0, "sha256"),
        ("first-known", "crc32,sha512,sha256", 0, 0, 0, "sha512"),
        ("range", "sha256", 100, 50000, 0, "sha256"),
        ("blocks", "sha256", 0, 0, 65536, "sha256"),
        ("blocks-range", "sha1", 7, 300000, 4096, "sha1"),
        ("past-end", "sha256", 999000, 10000, 0, "sha256"),
        ("from-end", "md5", 2000000, 0, 0, "md5"),
        ("sha384", "sha384", 1, 2, 256, "sha384"),
    ]
    for by_name in (False, True):
        kind = "name" if by_name else "handle"
        for name, algs, off, n, bsize, alg in cases:
            t, body = ask(by_name, algs, off, n, bsize)
            if t != FXP_EXTENDED_REPLY:
                result("%s-%s" % (kind, name), False, "reply type %d" % t)
                continue
            s = strings(body[:4 + struct.unpack(">I", body[:4])[0]])
            rest = body[4 + len(s[0]):]
            got_alg = strings(rest[:4 + struct.unpack(">I", rest[:4])[0]])[0]
            hashes = rest[4 + len(got_alg):]
            want = expect(data, off, n, bsize, alg)
            ok = (s[0] == b"check-file" and got_alg == alg.encode() and
                  hashes == want)
            result("%s-%s" % (kind, name), ok,
                   "%r %r, %d bytes of hashes (want %s, %d)" %
                   (s[0], got_alg, len(hashes), alg, len(want)))

    def status_case(name, want, t, body):
        got = struct.unpack(">I", body[:4])[0] if t == FXP_STATUS else None
        result(name, got == want, "type %d status %r, want %d" %
               (t, got, want))

    t, body = ask(False, "sha256", 0, 0, 100)
    status_case("small-block", FX_BAD_MESSAGE, t, body)
    t, body = ask(False, "crc32,whirlpool", 0, 0, 0)
    status_case("no-known-hash", FX_OP_UNSUPPORTED, t, body)
    t, body = ask(False, "sha512", 0, 0, 256)
    status_case("too-many-blocks", FX_FAILURE, t, body)
    t, body = c.request(FXP_EXTENDED, pstr("check-file-name") +
                        pstr(os.path.join(top, "none")) + pstr("sha256") +
                        p64(0) + p64(0) + p32(0))
    status_case("name-missing", FX_NO_SUCH_FILE, t, body)
    t, body = c.request(FXP_EXTENDED, pstr("check-file-name") + pstr(top) +
                        pstr("sha256") + p64(0) + p64(0) + p32(0))
    status_case("name-directory", FX_FAILURE, t, body)
    t, body = c.request(FXP_OPENDIR, pstr(top))
    dh = strings(body)[0] if t == FXP_HANDLE else b"none"
    t, body = c.request(FXP_EXTENDED, pstr("check-file-handle") + pstr(dh) +
                        pstr("sha256") + p64(0) + p64(0) + p32(0))
    status_case("handle-directory", FX_NO_SUCH_FILE, t, body)
    t, body = c.request(FXP_OPEN, pstr(path) + p32(2) + p32(0))
    wh = strings(body)[0] if t == FXP_HANDLE else b"none"
    t, body = c.request(FXP_EXTENDED, pstr("check-file-handle") + pstr(wh) +
                        pstr("sha256") + p64(0) + p64(0) + p32(0))
    # sftp-server reports EBADF as "no such file", as for a READ.
    status_case("handle-write-only", FX_NO_SUCH_FILE, t, body)
    c.p.stdin.close()
    c.p.wait()
    return 1 if bad else 0


sys.exit(main())
