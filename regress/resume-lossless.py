#!/usr/bin/python3
#
# resume-lossless.py DIR SRC BEFORE AFTER ERR: after a resumed copy of the
# tree SRC, in direction DIR (down or up), was cut short (t-resume.sh):
#
#   - a file complete in BEFORE is complete in AFTER;
#   - down: every byte of each file of AFTER is its source's at that
#     offset or the one BEFORE had there (nothing new and wrong, no
#     holes), and a file of its source's size is its source or as it was
#     (a file cut short never looks complete);
#   - up: each file of AFTER is as it was in BEFORE, a true start of its
#     source, or named in ERR (the client's messages): the client cannot
#     cut a remote file back once the connection is gone.
#
# Both trees keep their files under a directory "src", as a message
# names them.  Prints the first three files that break a rule, and
# exits 1 if any does.

import os
import sys


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def down_ok(s, b, a):
    if a is None or a == b:
        return True
    if len(a) == len(s) and a != s:
        return False
    b = b or b""
    for i in range(len(a)):
        if i < len(s) and a[i] == s[i]:
            continue
        if i < len(b) and a[i] == b[i]:
            continue
        return False
    return True


def main():
    way, src, before, after, err = sys.argv[1:6]
    with open(err, errors="replace") as f:
        named = f.read()
    bad = []
    for d, _, files in os.walk(src):
        for n in sorted(files):
            rel = os.path.relpath(os.path.join(d, n), src)
            s = read(os.path.join(d, n))
            b = read(os.path.join(before, rel))
            a = read(os.path.join(after, rel))
            size = "none" if a is None else "%d bytes" % len(a)
            if b == s:
                if a != s:
                    bad.append("%s was complete, now %s" % (rel, size))
            elif way == "down":
                if not down_ok(s, b, a):
                    bad.append("%s: %s, bytes neither the source's nor "
                               "its own before, or not whole at full "
                               "size" % (rel, size))
            elif a == b or (a is not None and s.startswith(a)):
                pass
            elif any(("/src/" + rel + e) in named for e in ('"', " ", "\n")):
                pass
            else:
                bad.append("%s: %s, not a start, not named" % (rel, size))
    print("; ".join(bad[:3]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
