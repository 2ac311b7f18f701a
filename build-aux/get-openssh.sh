#!/bin/sh
#
# get-openssh.sh: put the pinned OpenSSH portable tarball at DEST, verified.
#
# usage: get-openssh.sh VERSION SHA256 DEST [FILE]
#
# Sources, in order: FILE (from --with-openssh-tarball), a cached copy at
# DEST, the upstream mirror (curl or wget), Debian's source package
# (apt-get source --download-only openssh).  Every candidate is checked
# against SHA256 before it is used; a mismatch stops the build before
# anything is unpacked.

set -u

VERSION="$1"
SHA256="$2"
DEST="$3"
FILE="${4:-}"
URL="${OPENSSH_URL:-https://cdn.openbsd.org/pub/OpenBSD/OpenSSH/portable/openssh-$VERSION.tar.gz}"
TRIED=""

sha256_of() {
	sha256sum "$1" | awk '{print $1}'
}

# verify FILE: exit 1 with a clear message on a mismatch.
verify() {
	actual=`sha256_of "$1"`
	if [ "x$actual" != "x$SHA256" ]; then
		echo "get-openssh: SHA-256 mismatch for $1" >&2
		echo "get-openssh:   expected SHA-256 $SHA256" >&2
		echo "get-openssh:   actual   SHA-256 $actual" >&2
		echo "get-openssh: refusing to unpack it." >&2
		return 1
	fi
	return 0
}

install_copy() {
	mkdir -p "`dirname "$DEST"`" || exit 1
	cp "$1" "$DEST.tmp" && mv -f "$DEST.tmp" "$DEST" || exit 1
	echo "get-openssh: using $2 ($DEST, SHA-256 $SHA256 verified)"
	exit 0
}

# 1. --with-openssh-tarball=FILE: a mismatch is fatal, never skipped.
if [ -n "$FILE" ]; then
	if [ ! -f "$FILE" ]; then
		echo "get-openssh: --with-openssh-tarball: no such file: $FILE" >&2
		exit 1
	fi
	verify "$FILE" || exit 1
	if [ "x$FILE" = "x$DEST" ]; then
		echo "get-openssh: using $FILE (SHA-256 verified)"
		exit 0
	fi
	install_copy "$FILE" "$FILE"
fi

# 2. A cached copy.
if [ -f "$DEST" ]; then
	if verify "$DEST"; then
		echo "get-openssh: using cached $DEST (SHA-256 verified)"
		exit 0
	fi
	echo "get-openssh: the cached copy is corrupt; remove $DEST" >&2
	exit 1
fi
TRIED="$TRIED
  - cached copy: $DEST (absent)"

WORK=`mktemp -d "${TMPDIR:-/tmp}/get-openssh.XXXXXX"` || exit 1
trap 'rm -rf "$WORK"' 0 1 2 15

# 3. The upstream mirror.
fetched=""
if command -v curl >/dev/null 2>&1; then
	curl -fsSL --connect-timeout 10 --max-time 300 -o "$WORK/dl.tar.gz" \
	    "$URL" 2>"$WORK/err" && fetched=yes
	TRIED="$TRIED
  - $URL with curl: `[ -n "$fetched" ] && echo ok || head -n1 $WORK/err`"
elif command -v wget >/dev/null 2>&1; then
	wget -q --timeout=10 -O "$WORK/dl.tar.gz" "$URL" 2>"$WORK/err" && \
	    fetched=yes
	TRIED="$TRIED
  - $URL with wget: `[ -n "$fetched" ] && echo ok || echo failed`"
else
	TRIED="$TRIED
  - $URL: neither curl nor wget installed"
fi
if [ -n "$fetched" ]; then
	verify "$WORK/dl.tar.gz" || exit 1
	install_copy "$WORK/dl.tar.gz" "$URL"
fi

# 4. Debian's source package: openssh_VERSION.orig.tar.gz is the
# upstream tarball.
if command -v apt-get >/dev/null 2>&1; then
	if (cd "$WORK" && apt-get source --download-only openssh) \
	    >"$WORK/apt.log" 2>&1 && \
	    [ -f "$WORK/openssh_$VERSION.orig.tar.gz" ]; then
		verify "$WORK/openssh_$VERSION.orig.tar.gz" || exit 1
		install_copy "$WORK/openssh_$VERSION.orig.tar.gz" \
		    "Debian source package openssh_$VERSION.orig.tar.gz"
	fi
	got=`ls "$WORK"/openssh_*.orig.tar.gz 2>/dev/null | head -n1`
	if [ -n "$got" ]; then
		why="it offers `basename "$got"`, not openssh_$VERSION.orig.tar.gz"
	else
		why="`grep -E '^E:' "$WORK/apt.log" | head -n1`"
		[ -z "$why" ] && why="no source package found"
	fi
	TRIED="$TRIED
  - apt-get source --download-only openssh: $why
    (needs a deb-src entry for Debian 13 'trixie' and apt-get update)"
else
	TRIED="$TRIED
  - apt-get source: apt-get not available"
fi

echo "get-openssh: cannot find openssh-$VERSION.tar.gz; tried:$TRIED" >&2
echo "get-openssh: download it yourself and run" >&2
echo "get-openssh:   ./configure --with-openssh-tarball=/path/to/openssh-$VERSION.tar.gz" >&2
exit 1
