#!/bin/sh
#
# get-openssh.sh: put the pinned OpenSSH portable tarball at DEST, verified.
#
# usage: get-openssh.sh VERSION CONTENT-SHA256 TARBALL-SHA256 DEST [FILE]
#
# Sources, in order: FILE (from --with-openssh-tarball), a cached copy at
# DEST, the upstream mirror (curl or wget), Debian's source package
# (apt-get source --download-only openssh).  Every candidate is checked
# before it is used: a tarball whose SHA-256 is TARBALL-SHA256 (upstream's
# file, "-" if unknown) is the release; any other must unpack to one
# directory openssh-VERSION whose content pin (build-aux/tree-sha256.sh)
# is CONTENT-SHA256, as Debian's orig tarball and an archive of upstream's
# signed tag do.  A mismatch stops the build before anything is unpacked
# into build/.

set -u

VERSION="$1"
CONTENT="$2"
SHA256="$3"
DEST="$4"
FILE="${5:-}"
URL="${OPENSSH_URL:-https://cdn.openbsd.org/pub/OpenBSD/OpenSSH/portable/openssh-$VERSION.tar.gz}"
HERE=`cd "\`dirname "$0"\`" && pwd`
TRIED=""
HOW=""

WORK=`mktemp -d "${TMPDIR:-/tmp}/get-openssh.XXXXXX"` || exit 1
trap 'rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

sha256_of() {
	sha256sum "$1" | awk '{print $1}'
}

# mismatch FILE WHY: the message for a file that is not the release.
mismatch() {
	echo "get-openssh: $1 is not OpenSSH $VERSION: $2" >&2
	if [ "x$SHA256" != "x-" ]; then
		echo "get-openssh:   expected tarball SHA-256 $SHA256" >&2
	fi
	echo "get-openssh:   actual   tarball SHA-256 $actual" >&2
	echo "get-openssh:   expected content pin    $CONTENT" >&2
	echo "get-openssh:   actual   content pin    ${pin:-none (see above)}" >&2
	echo "get-openssh: refusing to unpack it." >&2
}

# verify FILE: return 1 with a clear message on a mismatch; set HOW.
verify() {
	actual=`sha256_of "$1"`
	pin=""
	if [ "x$actual" = "x$SHA256" ]; then
		HOW="tarball SHA-256 $SHA256 verified"
		return 0
	fi
	rm -rf "$WORK/unpack"
	mkdir "$WORK/unpack"
	if ! tar -xzf "$1" -C "$WORK/unpack" >"$WORK/tar.err" 2>&1; then
		mismatch "$1" "tar cannot unpack it (`head -n1 "$WORK/tar.err"`)"
		return 1
	fi
	top=`ls -A "$WORK/unpack"`
	if [ "x$top" != "xopenssh-$VERSION" ] ||
	    [ ! -d "$WORK/unpack/$top" ] || [ -h "$WORK/unpack/$top" ]; then
		mismatch "$1" "it holds `echo $top | head -c 200`, not only openssh-$VERSION/"
		return 1
	fi
	pin=`sh "$HERE/tree-sha256.sh" "$WORK/unpack/$top"` || pin=""
	rm -rf "$WORK/unpack"
	if [ "x$pin" != "x$CONTENT" ]; then
		mismatch "$1" "its unpacked content differs from the release's"
		return 1
	fi
	if [ "x$SHA256" = "x-" ]; then
		HOW="content pin $CONTENT verified"
	else
		HOW="content pin $CONTENT verified; not upstream's tarball ($SHA256) but the same files"
	fi
	return 0
}

install_copy() {
	mkdir -p "`dirname "$DEST"`" || exit 1
	cp "$1" "$DEST.tmp" && mv -f "$DEST.tmp" "$DEST" || exit 1
	echo "get-openssh: using $2 ($DEST, $HOW)"
	exit 0
}

# 1. --with-openssh-tarball=FILE: a mismatch is fatal, never skipped.
if [ -n "$FILE" ]; then
	if [ ! -f "$FILE" ]; then
		echo "get-openssh: --with-openssh-tarball: no such file: $FILE" >&2
		exit 1
	fi
	verify "$FILE" || exit 1
	# An identical copy stays as it is: a new mtime would make the
	# trees unpacked from it look out of date.
	if [ "x$FILE" = "x$DEST" ] || cmp -s "$FILE" "$DEST"; then
		echo "get-openssh: using $FILE ($HOW)"
		exit 0
	fi
	install_copy "$FILE" "$FILE"
fi

# 2. A cached copy.
if [ -f "$DEST" ]; then
	if verify "$DEST"; then
		echo "get-openssh: using cached $DEST ($HOW)"
		exit 0
	fi
	echo "get-openssh: the cached copy is corrupt; remove $DEST" >&2
	exit 1
fi
TRIED="$TRIED
  - cached copy: $DEST (absent)"

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
	mkdir "$WORK/apt"
	if (cd "$WORK/apt" && apt-get source --download-only openssh) \
	    >"$WORK/apt.log" 2>&1 && \
	    [ -f "$WORK/apt/openssh_$VERSION.orig.tar.gz" ]; then
		verify "$WORK/apt/openssh_$VERSION.orig.tar.gz" || exit 1
		install_copy "$WORK/apt/openssh_$VERSION.orig.tar.gz" \
		    "Debian source package openssh_$VERSION.orig.tar.gz"
	fi
	got=`ls "$WORK"/apt/openssh_*.orig.tar.gz 2>/dev/null | head -n1`
	if [ -n "$got" ]; then
		why="it offers `basename "$got"`, not openssh_$VERSION.orig.tar.gz"
	else
		why="`grep -E '^E:' "$WORK/apt.log" | head -n1`"
		[ -z "$why" ] && why="no source package found"
	fi
	TRIED="$TRIED
  - apt-get source --download-only openssh: $why
    (needs a deb-src entry for a Debian suite whose openssh is $VERSION,
    e.g. Debian 13 'trixie' for 10.0p1, and apt-get update)"
else
	TRIED="$TRIED
  - apt-get source: apt-get not available"
fi

echo "get-openssh: cannot find openssh-$VERSION.tar.gz; tried:$TRIED" >&2
echo "get-openssh: download it yourself and run" >&2
echo "get-openssh:   ./configure --with-openssh-tarball=/path/to/openssh-$VERSION.tar.gz" >&2
exit 1
