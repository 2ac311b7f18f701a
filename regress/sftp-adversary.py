#!/usr/bin/python3
#
# sftp-adversary.py: an SFTP (version 3) server that behaves legally but
# unlike OpenSSH's sftp-server, for regress/t-sftplegal.sh.  It serves
# the file system over stdin and stdout, as `sftp -D` and `scp -D` run a
# server (they pass it no arguments), so its switches come from the
# environment, as comma-separated KEY=VALUE pairs in HPN_ADVERSARY:
#
#   short=N        answer a READ with at most N bytes
#   shortrand=1    with short: a random count from 1 to N each time
#   reorder=N      hold up to N replies, then send them in a random order
#                  (and whatever is held whenever no request is waiting)
#   delay=MS       wait up to MS milliseconds before sending held replies
#   chunk=N        at most N names per READDIR reply (default 100)
#   restart=1      a listing starts over after its EOF
#   holddir=K      the Kth READDIR reply of each listing goes out only
#                  after 80 later replies (or when no request waits)
#   failread=OFF   a READ of a file matching failname that reaches
#   failwrite=OFF  (a WRITE) byte OFF fails (a READ: if the file has it)
#   failname=GLOB  (default *)
#   refuse=GLOB    OPEN of a name matching GLOB is refused
#   handles=N      the limits extension states N open handles, and
#                  an OPEN or OPENDIR beyond N fails
#   nolimits=1     no limits extension at all
#   nosize=1       SETSTAT and FSETSTAT cannot change a size
#   stop=N         answer no request after the Nth (read and ignore them)
#   drop=N         close the connection on the Nth request
#   hostile=1      every listing also names "..", "../evil-up",
#                  "/tmp/evil-abs" and "sub/evil"
#   seed=S         seed of the random choices (default 1)
#   log=FILE       append "open PATH", "close PATH" lines to FILE,
#                  "stopped PID" when stop= takes effect, and "data PATH
#                  OFF N" for each READ answered and WRITE done
#   count=DIR      with only: number each server started in DIR, 1 on
#   only=K         only the Kth server numbered in DIR (scp and sftp run
#                  one for each SFTP session: -X streams) takes the other
#                  switches but log and seed; the rest serve plainly
#   checkfile=HOW  state and answer check-file-handle and check-file-name
#                  (draft-ietf-secsh-filexfer-extensions-00): HOW is ok,
#                  bad (hashes of other bytes), fail (FAILURE), unsup
#                  (OP_UNSUPPORTED), unsupfirst (OP_UNSUPPORTED for a
#                  range at offset 0, ok for the others) or md5 (md5,
#                  whatever was asked)
#
# "sftp-adversary.py tree DIR SEED N" makes a test tree of N files;
# "sftp-adversary.py compare ..." checks a copy's result (compare());
# "sftp-adversary.py fuzzcase SEED" picks a random case (fuzz_case()).
#
# Requests are carried out in the order they arrive (as the protocol
# requires of requests on one file); only the replies move.

import errno
import fnmatch
import hashlib
import os
import random
import select
import stat
import struct
import sys
import time

FXP_INIT, FXP_VERSION = 1, 2
FXP_OPEN, FXP_CLOSE, FXP_READ, FXP_WRITE = 3, 4, 5, 6
FXP_LSTAT, FXP_FSTAT, FXP_SETSTAT, FXP_FSETSTAT = 7, 8, 9, 10
FXP_OPENDIR, FXP_READDIR, FXP_REMOVE, FXP_MKDIR = 11, 12, 13, 14
FXP_RMDIR, FXP_REALPATH, FXP_STAT, FXP_RENAME = 15, 16, 17, 18
FXP_READLINK, FXP_SYMLINK = 19, 20
FXP_STATUS, FXP_HANDLE, FXP_DATA, FXP_NAME, FXP_ATTRS = 101, 102, 103, 104, 105
FXP_EXTENDED, FXP_EXTENDED_REPLY = 200, 201

FX_OK, FX_EOF, FX_NO_SUCH_FILE, FX_PERMISSION_DENIED = 0, 1, 2, 3
FX_FAILURE, FX_BAD_MESSAGE, FX_OP_UNSUPPORTED = 4, 5, 8

A_SIZE, A_UIDGID, A_PERM, A_TIME, A_EXT = 1, 2, 4, 8, 0x80000000

MAX_MSG = 256 * 1024


def options():
    opts = {}
    for item in os.environ.get("HPN_ADVERSARY", "").split(","):
        if not item:
            continue
        k, _, v = item.partition("=")
        if k not in ("short", "shortrand", "reorder", "delay", "chunk",
                     "restart", "failread", "failwrite", "failname",
                     "refuse", "handles", "nolimits", "nosize", "stop",
                     "drop", "hostile", "seed", "log", "checkfile",
                     "holddir", "count", "only"):
            sys.stderr.write("sftp-adversary: unknown switch %r\n" % k)
            sys.exit(2)
        opts[k] = v
    if "only" in opts:
        n = 1
        while True:
            try:
                os.close(os.open(os.path.join(opts["count"],
                                              "server.%d" % n),
                                 os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                n += 1
        if n != int(opts["only"]):
            opts = {k: v for k, v in opts.items() if k in ("log", "seed")}
    return opts


OPT = options()


def opt_int(k, default=0):
    return int(OPT.get(k, default))


RNG = random.Random(opt_int("seed", 1))


class Msg:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def u8(self):
        self.p += 1
        return self.d[self.p - 1]

    def u32(self):
        self.p += 4
        return struct.unpack(">I", self.d[self.p - 4:self.p])[0]

    def u64(self):
        self.p += 8
        return struct.unpack(">Q", self.d[self.p - 8:self.p])[0]

    def string(self):
        n = self.u32()
        self.p += n
        if self.p > len(self.d):
            raise ValueError("short string")
        return self.d[self.p - n:self.p]

    def attrs(self):
        a = {}
        flags = self.u32()
        if flags & A_SIZE:
            a["size"] = self.u64()
        if flags & A_UIDGID:
            a["uid"], a["gid"] = self.u32(), self.u32()
        if flags & A_PERM:
            a["perm"] = self.u32()
        if flags & A_TIME:
            a["atime"], a["mtime"] = self.u32(), self.u32()
        if flags & A_EXT:
            for _ in range(self.u32()):
                self.string()
                self.string()
        return a


def p32(v):
    return struct.pack(">I", v)


def p64(v):
    return struct.pack(">Q", v)


def pstr(s):
    if isinstance(s, str):
        s = s.encode()
    return p32(len(s)) + s


def pattrs(st):
    if st is None:
        return p32(0)
    return (p32(A_SIZE | A_UIDGID | A_PERM | A_TIME) + p64(st.st_size) +
            p32(st.st_uid) + p32(st.st_gid) + p32(st.st_mode) +
            p32(int(st.st_atime)) + p32(int(st.st_mtime)))


def longname(name, st):
    kind = "d" if stat.S_ISDIR(st.st_mode) else \
        "l" if stat.S_ISLNK(st.st_mode) else "-"
    bits = ""
    for i in range(8, -1, -1):
        bits += "rwxrwxrwx"[8 - i] if st.st_mode & (1 << i) else "-"
    t = time.strftime("%b %d %H:%M", time.gmtime(st.st_mtime))
    return "%s%s %4d %-8d %-8d %8d %s %s" % (
        kind, bits, st.st_nlink, st.st_uid, st.st_gid, st.st_size, t, name)


def errno_status(e):
    if e.errno == errno.EOPNOTSUPP:
        return FX_OP_UNSUPPORTED
    if e.errno == errno.ENOENT:
        return FX_NO_SUCH_FILE
    if e.errno in (errno.EACCES, errno.EPERM):
        return FX_PERMISSION_DENIED
    return FX_FAILURE


class Server:
    def __init__(self):
        self.inbuf = b""
        self.held = []
        self.late = None        # [reply, replies still to go before it]
        self.handles = {}
        self.next_handle = 0
        self.nreq = 0
        self.stopped = False
        self.eof = False
        self.log = open(OPT["log"], "a") if "log" in OPT else None

    def logline(self, s):
        if self.log is not None:
            self.log.write(s + "\n")
            self.log.flush()

    # --- replies
    def reply(self, data, late=False):
        if late:
            self.late = [p32(len(data)) + data, 80]
            return
        self.held.append(p32(len(data)) + data)
        if self.late is not None:
            self.late[1] -= 1
            if self.late[1] <= 0:
                self.release_late()
        if len(self.held) >= max(opt_int("reorder"), 1):
            self.flush()

    def release_late(self):
        if self.late is not None:
            self.held.append(self.late[0])
            self.late = None

    def flush(self):
        if not self.held:
            return
        if opt_int("delay"):
            time.sleep(RNG.random() * opt_int("delay") / 1000.0)
        if opt_int("reorder"):
            RNG.shuffle(self.held)
        out = b"".join(self.held)
        self.held = []
        # Read requests while the replies go out: a client may be
        # blocked sending its requests, not reading, while the pipe to
        # it is full (scp and sftp through -D write with blocking I/O).
        # Standard input and output may be one socket: both non-blocking
        # meanwhile.
        os.set_blocking(1, False)
        try:
            while out:
                r, w, _ = select.select([] if self.eof else [0], [1], [])
                if w:
                    try:
                        out = out[os.write(1, out):]
                    except BlockingIOError:
                        pass
                if r:
                    try:
                        data = os.read(0, 1 << 20)
                    except BlockingIOError:
                        continue
                    if data:
                        self.inbuf += data
                    else:
                        self.eof = True
        finally:
            os.set_blocking(1, True)

    def status(self, rid, code, text=""):
        self.reply(bytes([FXP_STATUS]) + p32(rid) + p32(code) +
                   pstr(text) + pstr(""))

    # --- handles
    def new_handle(self, h):
        limit = opt_int("handles")
        if limit and len(self.handles) >= limit:
            return None
        self.next_handle += 1
        name = b"h%d" % self.next_handle
        self.handles[name] = h
        return name

    def close_handle(self, hid):
        h = self.handles.pop(hid, None)
        if h is None:
            return False
        if h["kind"] == "file":
            os.close(h["fd"])
            self.logline("close %s" % h["path"])
        return True

    # --- requests
    def handle(self, m):
        t = m.u8()
        if t == FXP_INIT:
            exts = b""
            if not opt_int("nolimits"):
                exts += pstr("limits@openssh.com") + pstr("1")
            if "checkfile" in OPT:
                exts += pstr("check-file-handle") + pstr("1")
                exts += pstr("check-file-name") + pstr("1")
            self.reply(bytes([FXP_VERSION]) + p32(3) + exts)
            return
        rid = m.u32()
        self.nreq += 1
        if opt_int("drop") and self.nreq >= opt_int("drop"):
            self.flush()
            os._exit(0)
        if self.stopped or (opt_int("stop") and self.nreq > opt_int("stop")):
            if not self.stopped:
                self.logline("stopped %d" % os.getpid())
            self.stopped = True
            self.flush()
            return
        try:
            fn = {
                FXP_OPEN: self.do_open, FXP_CLOSE: self.do_close,
                FXP_READ: self.do_read, FXP_WRITE: self.do_write,
                FXP_LSTAT: self.do_lstat, FXP_STAT: self.do_stat,
                FXP_FSTAT: self.do_fstat, FXP_SETSTAT: self.do_setstat,
                FXP_FSETSTAT: self.do_fsetstat, FXP_OPENDIR: self.do_opendir,
                FXP_READDIR: self.do_readdir, FXP_REMOVE: self.do_remove,
                FXP_MKDIR: self.do_mkdir, FXP_RMDIR: self.do_rmdir,
                FXP_REALPATH: self.do_realpath, FXP_RENAME: self.do_rename,
                FXP_READLINK: self.do_readlink, FXP_SYMLINK: self.do_symlink,
                FXP_EXTENDED: self.do_extended,
            }.get(t)
            if fn is None:
                self.status(rid, FX_OP_UNSUPPORTED, "unsupported")
            else:
                fn(rid, m)
        except OSError as e:
            self.status(rid, errno_status(e), os.strerror(e.errno))

    def path(self, m):
        p = m.string().decode("utf-8", "surrogateescape")
        return p if p else "."

    def do_open(self, rid, m):
        path = self.path(m)
        pflags = m.u32()
        a = m.attrs()
        if "refuse" in OPT and fnmatch.fnmatch(os.path.basename(path),
                                               OPT["refuse"]):
            self.status(rid, FX_PERMISSION_DENIED, "refused")
            return
        flags = 0
        if pflags & 1 and pflags & 2:
            flags = os.O_RDWR
        elif pflags & 2:
            flags = os.O_WRONLY
        if pflags & 4:
            flags |= os.O_APPEND
        if pflags & 8:
            flags |= os.O_CREAT
        if pflags & 0x10:
            flags |= os.O_TRUNC
        if pflags & 0x20:
            flags |= os.O_EXCL
        if opt_int("handles") and len(self.handles) >= opt_int("handles"):
            self.status(rid, FX_FAILURE, "too many handles")
            return
        fd = os.open(path, flags, a.get("perm", 0o666) & 0o7777)
        hid = self.new_handle({"kind": "file", "fd": fd, "path": path})
        self.logline("open %s" % path)
        self.reply(bytes([FXP_HANDLE]) + p32(rid) + pstr(hid))

    def do_close(self, rid, m):
        hid = m.string()
        if self.close_handle(hid):
            self.status(rid, FX_OK)
        else:
            self.status(rid, FX_FAILURE, "bad handle")

    def file(self, m):
        h = self.handles.get(m.string())
        if h is None or h["kind"] != "file":
            raise OSError(errno.EBADF, "bad handle")
        return h

    def fails(self, h, key, off, n):
        if key not in OPT:
            return False
        if not fnmatch.fnmatch(os.path.basename(h["path"]),
                               OPT.get("failname", "*")):
            return False
        return off <= int(OPT[key]) < off + max(n, 1)

    def do_read(self, rid, m):
        h = self.file(m)
        off = m.u64()
        n = m.u32()
        if (self.fails(h, "failread", off, n) and
                int(OPT["failread"]) < os.fstat(h["fd"]).st_size):
            self.status(rid, FX_FAILURE, "read failed")
            return
        if opt_int("short"):
            cap = opt_int("short")
            if opt_int("shortrand"):
                cap = RNG.randint(1, cap)
            n = min(n, cap)
        data = os.pread(h["fd"], n, off)
        if not data:
            self.status(rid, FX_EOF, "EOF")
            return
        self.logline("data %s %d %d" % (h["path"], off, len(data)))
        self.reply(bytes([FXP_DATA]) + p32(rid) + pstr(data))

    def do_write(self, rid, m):
        h = self.file(m)
        off = m.u64()
        data = m.string()
        if self.fails(h, "failwrite", off, len(data)):
            self.status(rid, FX_FAILURE, "write failed")
            return
        os.pwrite(h["fd"], data, off)
        self.logline("data %s %d %d" % (h["path"], off, len(data)))
        self.status(rid, FX_OK)

    def do_stat(self, rid, m):
        self.reply(bytes([FXP_ATTRS]) + p32(rid) + pattrs(os.stat(
            self.path(m))))

    def do_lstat(self, rid, m):
        self.reply(bytes([FXP_ATTRS]) + p32(rid) + pattrs(os.lstat(
            self.path(m))))

    def do_fstat(self, rid, m):
        self.reply(bytes([FXP_ATTRS]) + p32(rid) + pattrs(os.fstat(
            self.file(m)["fd"])))

    def setattrs(self, target, a):
        if "size" in a and opt_int("nosize"):
            raise OSError(errno.EOPNOTSUPP, "no size")
        if "size" in a:
            os.truncate(target, a["size"])
        if "perm" in a:
            os.chmod(target, a["perm"] & 0o7777)
        if "atime" in a:
            os.utime(target, (a["atime"], a["mtime"]))

    def do_setstat(self, rid, m):
        path = self.path(m)
        self.setattrs(path, m.attrs())
        self.status(rid, FX_OK)

    def do_fsetstat(self, rid, m):
        h = self.file(m)
        self.setattrs(h["fd"], m.attrs())
        self.status(rid, FX_OK)

    def do_opendir(self, rid, m):
        path = self.path(m)
        names = [".", ".."] + sorted(os.listdir(path))
        if opt_int("hostile"):
            names += ["../evil-up", "/tmp/evil-abs", "sub/evil"]
        ents = []
        for n in names:
            try:
                st = os.lstat(os.path.join(path, n))
            except OSError:
                st = os.lstat(path)
            ents.append((n, st))
        hid = self.new_handle({"kind": "dir", "ents": ents, "pos": 0})
        if hid is None:
            self.status(rid, FX_FAILURE, "too many handles")
            return
        self.reply(bytes([FXP_HANDLE]) + p32(rid) + pstr(hid))

    def do_readdir(self, rid, m):
        h = self.handles.get(m.string())
        if h is None or h["kind"] != "dir":
            self.status(rid, FX_FAILURE, "bad handle")
            return
        chunk = h["ents"][h["pos"]:h["pos"] + opt_int("chunk", 100)]
        if not chunk:
            if opt_int("restart"):
                h["pos"] = 0
            self.status(rid, FX_EOF, "EOF")
            return
        h["pos"] += len(chunk)
        h["nreaddir"] = h.get("nreaddir", 0) + 1
        out = bytes([FXP_NAME]) + p32(rid) + p32(len(chunk))
        for n, st in chunk:
            out += pstr(n.encode("utf-8", "surrogateescape")) + \
                pstr(longname(n, st)) + pattrs(st)
        self.reply(out, late=h["nreaddir"] == opt_int("holddir", -1))

    def do_remove(self, rid, m):
        os.unlink(self.path(m))
        self.status(rid, FX_OK)

    def do_mkdir(self, rid, m):
        path = self.path(m)
        a = m.attrs()
        os.mkdir(path, a.get("perm", 0o777) & 0o7777)
        self.status(rid, FX_OK)

    def do_rmdir(self, rid, m):
        os.rmdir(self.path(m))
        self.status(rid, FX_OK)

    def do_realpath(self, rid, m):
        p = os.path.normpath(os.path.join(os.getcwd(), self.path(m)))
        if p.startswith("//"):
            p = p[1:]
        self.reply(bytes([FXP_NAME]) + p32(rid) + p32(1) + pstr(p) +
                   pstr(p) + p32(0))

    def do_rename(self, rid, m):
        old = self.path(m)
        new = self.path(m)
        if os.path.exists(new):
            self.status(rid, FX_FAILURE, "exists")
            return
        os.rename(old, new)
        self.status(rid, FX_OK)

    def do_readlink(self, rid, m):
        t = os.readlink(self.path(m))
        self.reply(bytes([FXP_NAME]) + p32(rid) + p32(1) + pstr(t) +
                   pstr(t) + p32(0))

    def do_symlink(self, rid, m):
        target = self.path(m)
        link = self.path(m)
        os.symlink(target, link)
        self.status(rid, FX_OK)

    def check_file(self, rid, m, fd):
        algs = m.string().decode().split(",")
        off, n, bsize = m.u64(), m.u64(), m.u32()
        how = OPT["checkfile"]
        known = [a for a in algs if a in ("sha256", "sha512", "sha1", "md5")]
        if how == "fail":
            self.status(rid, FX_FAILURE, "cannot hash")
            return
        if how == "unsup" or not known or (how == "unsupfirst" and off == 0):
            self.status(rid, FX_OP_UNSUPPORTED, "no such hash")
            return
        alg = "md5" if how == "md5" else known[0]
        size = os.fstat(fd).st_size
        end = size if n == 0 else min(size, off + n)
        step = bsize if bsize else max(end - off, 1)
        out = b""
        pos = off
        while True:
            stop = min(end, pos + step)
            h = hashlib.new(alg)
            data = os.pread(fd, max(stop - pos, 0), pos) if stop > pos else b""
            if how == "bad":
                data = b"x" + data
            h.update(data)
            out += h.digest()
            pos = stop
            if pos >= end:
                break
        self.reply(bytes([FXP_EXTENDED_REPLY]) + p32(rid) +
                   pstr("check-file") + pstr(alg) + out)

    def do_extended(self, rid, m):
        name = m.string()
        if name == b"check-file-handle" and "checkfile" in OPT:
            self.check_file(rid, m, self.file(m)["fd"])
            return
        if name == b"check-file-name" and "checkfile" in OPT:
            fd = os.open(self.path(m), os.O_RDONLY)
            try:
                self.check_file(rid, m, fd)
            finally:
                os.close(fd)
            return
        if name == b"limits@openssh.com" and not opt_int("nolimits"):
            self.reply(bytes([FXP_EXTENDED_REPLY]) + p32(rid) +
                       p64(MAX_MSG) + p64(MAX_MSG - 1024) +
                       p64(MAX_MSG - 1024) + p64(opt_int("handles")))
            return
        self.status(rid, FX_OP_UNSUPPORTED, "unsupported")

    # --- the loop
    def waiting(self):
        r, _, _ = select.select([0], [], [], 0.002)
        return bool(r)

    def run(self):
        while True:
            while len(self.inbuf) >= 4:
                n = struct.unpack(">I", self.inbuf[:4])[0]
                if n > MAX_MSG + 1024:
                    sys.stderr.write("sftp-adversary: message too long\n")
                    return 1
                if len(self.inbuf) < 4 + n:
                    break
                m = Msg(self.inbuf[4:4 + n])
                self.inbuf = self.inbuf[4 + n:]
                self.handle(m)
            if self.late is not None and (self.eof or not self.waiting()):
                self.release_late()
            if self.held and (self.eof or not self.waiting()):
                # It may have read more requests: to them first.
                self.flush()
                continue
            if self.eof:
                return 0
            data = os.read(0, 1 << 20)
            if not data:
                return 0
            self.inbuf += data


def make_tree(top, seed, nfiles):
    """A tree for the tests: nested directories, an empty one, files of
    0 bytes to a few MB, the same for the same seed.  Top-level files
    are named f*, directories d*."""
    rng = random.Random(seed)
    dirs = [top]
    os.makedirs(os.path.join(top, "empty"))
    for i in range(1 + nfiles // 8):
        d = os.path.join(rng.choice(dirs), "d%d" % i)
        os.mkdir(d)
        dirs.append(d)
    sizes = [0, 1, 4095, 32767, 32768, 32769, 261119, 261120, 261121]
    for i in range(nfiles):
        r = rng.random()
        if r < 0.3:
            n = rng.choice(sizes)
        elif r < 0.95:
            n = rng.randint(2, 150000)
        else:
            n = rng.randint(1000000, 3000000)
        d = top if i % 3 == 0 else rng.choice(dirs)
        with open(os.path.join(d, "f%d" % i), "wb") as f:
            f.write(rng.randbytes(n))


def tree_files(top):
    out = {}
    if top is None or not os.path.isdir(top):
        return out
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out[os.path.relpath(p, top)] = p
    return out


def read(p):
    if p is None:
        return None
    with open(p, "rb") as f:
        return f.read()


def resumed(got, src, old):
    """Whether got is a start of src, or (a resumed copy) old followed
    by src from old's length on, without a gap."""
    if src.startswith(got):
        return True
    if old is None or not got.startswith(old) or len(got) > len(src):
        return False
    return got[len(old):] == src[len(old):len(got)]


def compare(argv):
    """compare KIND OURS STOCK BEFORE SRC ERRFILE: after a copy into
    OURS (and STOCK, by the unpatched client) from SRC (src/X is SRC/X;
    f, of the collision modes, is one of SRC/../dup/*/f), each file of
    OURS is
      same:  what STOCK has (with -p: mode and mtime too), or its whole
             source (the later of two of one name), or, if an error line
             names it, what BEFORE had (absent included), a start of
             its source, or (resuming) what BEFORE had followed by the
             rest of its source up to some point;
      lossless: what BEFORE had, a whole source, or named in an error
             line; losslessup: also empty where BEFORE had nothing (an
             upload's open in flight creates the file).
    KIND is same, samep, lossless or losslessup.  Prints what is
    wrong."""
    kind, ours, stock, before, src, errfile = argv
    with open(errfile, errors="replace") as f:
        errs = [l for l in f.read().splitlines()
                if "debug" not in l and l.strip()]

    def named(rel):
        base = os.path.basename(rel)
        for l in errs:
            for w in l.replace('"', " ").replace(":", " ").split():
                if os.path.basename(w) == base:
                    return True
        return False

    def sources(rel):
        if rel.startswith("src/"):
            return [os.path.join(src, rel[4:])]
        dup = os.path.join(os.path.dirname(src), "dup")
        return [os.path.join(dup, d, rel) for d in ("b", "a")]

    got = tree_files(ours)
    old = tree_files(before)
    problems = []
    if kind not in ("same", "samep", "lossless", "losslessup"):
        print("compare: unknown kind %s" % kind)
        return 2
    if kind in ("same", "samep"):
        ref = tree_files(stock)
        for rel in sorted(set(got) | set(ref)):
            a, b = read(got.get(rel)), read(ref.get(rel))
            if a == b:
                if kind == "samep" and a is not None and not named(rel):
                    sa, sb = os.stat(got[rel]), os.stat(ref[rel])
                    if (sa.st_mode != sb.st_mode or
                            int(sa.st_mtime) != int(sb.st_mtime)):
                        problems.append("%s: mode or mtime differs "
                                        "from stock's" % rel)
                continue
            # Whole where the unpatched client lost data (9.2p1's scp
            # truncates short, reordered reads), never the earlier of two
            # sources of one name.
            src0 = sources(rel)[0]
            if a is not None and os.path.exists(src0) and read(src0) == a:
                continue
            if named(rel) and (a == read(old.get(rel)) or (
                    a is not None and
                    any(os.path.exists(s) and resumed(a, read(s),
                                                      read(old.get(rel)))
                        for s in sources(rel)))):
                continue
            problems.append("%s: %s bytes, stock's %s" % (
                rel, "no" if a is None else len(a),
                "none" if b is None else len(b)))
    else:
        for rel in sorted(set(got) | set(old)):
            a, o = read(got.get(rel)), read(old.get(rel))
            if a == o or named(rel):
                continue
            if a is not None and any(os.path.exists(s) and read(s) == a
                                     for s in sources(rel)):
                continue
            if a == b"" and o is None and kind == "losslessup":
                continue
            problems.append("%s: lost (%s bytes, before %s)" % (
                rel, "no" if a is None else len(a),
                "none" if o is None else len(o)))
    if problems:
        print("; ".join(problems[:3]) +
              (" (and %d more)" % (len(problems) - 3)
               if len(problems) > 3 else ""))
        return 1
    return 0


def fuzz_case(seed):
    """fuzzcase SEED: a random mix of switches and a copy mode, as
    "MODE SWITCHES NFILES", the same for the same seed."""
    rng = random.Random("fuzz%d" % seed)
    sw = ["seed=%d" % seed]
    if rng.random() < 0.5:
        cap = rng.choice([512, 4096, 8192, 32768, rng.randint(256, 70000)])
        sw.append("short=%d" % cap)
        if cap >= 4096 and rng.random() < 0.5:
            sw.append("shortrand=1")
    if rng.random() < 0.5:
        sw.append("reorder=%d" % rng.randint(2, 64))
    if rng.random() < 0.15:
        sw.append("delay=%d" % rng.randint(1, 4))
    if rng.random() < 0.5:
        sw.append("chunk=%d" % rng.randint(1, 20))
    if rng.random() < 0.3:
        sw.append("restart=1")
    if rng.random() < 0.25:
        sw.append("handles=%d" % rng.choice([1, 3, 4, 7, 16, 1000]))
    elif rng.random() < 0.1:
        sw.append("nolimits=1")
    if rng.random() < 0.1:
        sw.append("nosize=1")
    for k in ("failread", "failwrite"):
        if rng.random() < 0.15:
            sw.append("%s=%d" % (k, rng.randint(0, 300000)))
            sw.append("failname=%s" % rng.choice(["f*", "f1*", "f?"]))
    if rng.random() < 0.1:
        sw.append("refuse=f%d*" % rng.randint(0, 9))
    if rng.random() < 0.1:
        sw.append("hostile=1")
    if rng.random() < 0.15:
        sw.append("drop=%d" % rng.randint(5, 200))
    modes = ["sftp-get-r", "sftp-put-r", "sftp-get-rp", "sftp-put-rp",
             "sftp-get-glob", "sftp-put-glob", "sftp-get-one",
             "sftp-get-ra", "sftp-put-ra", "scp-down-r", "scp-up-r",
             "scp-down-rp", "scp-up-rp", "scp-down-glob",
             "scp-up-args", "scp-up-one", "sftp-get-dup", "sftp-put-dup",
             "scp-down-dup", "scp-up-dup"]
    print("%s %s %d" % (rng.choice(modes), ",".join(sw), rng.randint(1, 40)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "fuzzcase":
        sys.exit(fuzz_case(int(sys.argv[2])))
    if len(sys.argv) == 8 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2:]))
    if len(sys.argv) == 5 and sys.argv[1] == "tree":
        make_tree(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        sys.exit(0)
    sys.exit(Server().run())
