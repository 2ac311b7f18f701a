#!/bin/sh
#
# get-debian.sh: put Debian's openssh source package for a release in a
# directory, verified: the base of the releases Debian maintains for us
# (patches/releases, "debian:SUITE").
#
# usage: get-debian.sh SUITE RELEASE TARBALL DESTDIR [DIR]
#
# TARBALL is the release's tarball, already verified against its pins
# (get-openssh.sh): Debian's openssh_RELEASE.orig.tar.gz must be that very
# file.  TARBALL "-" takes the orig tarball as the package has it (the
# caller verifies it: mkdeb.sh).  DESTDIR gets openssh_RELEASE-N.dsc, its .debian.tar.xz and the
# orig tarball.  Sources, in order: DIR (--with-debian-source), a cached
# copy in DESTDIR, "apt-get source --download-only openssh=V" for the
# newest V of RELEASE that apt knows (it needs a deb-src entry for SUITE:
# as root, build-aux/add-deb-src.sh SUITE).  The .dsc's SHA-256 of each
# file must match; apt has checked the .dsc against Debian's signed
# index.  Remove DESTDIR to take a newer Debian revision.

set -u
[ $# -ge 4 ] && [ $# -le 5 ] ||
    { echo "usage: get-debian.sh SUITE RELEASE TARBALL DESTDIR [DIR]" >&2; exit 2; }
SUITE="$1"
R="$2"
TARBALL="$3"
DEST="$4"
DIR="${5:-}"

die() {
	echo "get-debian: $*" >&2
	exit 1
}

WORK=`mktemp -d "${TMPDIR:-/tmp}/get-debian.XXXXXX"` || exit 1
trap 'rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

[ "x$TARBALL" = x- ] || [ -f "$TARBALL" ] || die "no $TARBALL"
ORIG="openssh_$R.orig.tar.gz"

# The newest .dsc of RELEASE in a directory.
dsc_in() {
	ls "$1"/openssh_$R-*.dsc 2>/dev/null | LC_ALL=C sort -V | tail -n 1
}

# verify DIR DSC: every file the .dsc lists is in DIR with its SHA-256,
# and the orig tarball is TARBALL.
verify() {
	awk '/^Checksums-Sha256:/ { on = 1; next }
		/^[^ ]/ { on = 0 }
		on && NF == 3 { print $1, $3 }' "$2" >"$WORK/sums"
	[ -s "$WORK/sums" ] || { echo "get-debian: `basename "$2"` lists no SHA-256 sums" >&2; return 1; }
	grep -q "\.debian\.tar\.xz\$" "$WORK/sums" ||
	    { echo "get-debian: `basename "$2"` lists no .debian.tar.xz" >&2; return 1; }
	while read -r sum name; do
		if [ "$name" = "$ORIG" ] && [ "x$TARBALL" != x- ]; then
			f="$TARBALL"
		else
			f="$1/$name"
		fi
		[ -f "$f" ] || { echo "get-debian: no $name in $1" >&2; return 1; }
		actual=`sha256sum "$f" | cut -d' ' -f1`
		if [ "x$actual" != "x$sum" ]; then
			if [ "$name" = "$ORIG" ]; then
				echo "get-debian: Debian's $ORIG (SHA-256 $sum) is not the verified release tarball $TARBALL ($actual)" >&2
			else
				echo "get-debian: $name: SHA-256 $actual, `basename "$2"` says $sum" >&2
			fi
			return 1
		fi
	done <"$WORK/sums"
	return 0
}

# put SRCDIR DSC HOW: copy the package into DEST.
put() {
	rm -rf "$DEST.tmp"
	mkdir -p "$DEST.tmp" || exit 1
	cp "$2" "$DEST.tmp/" || exit 1
	while read -r sum name; do
		case "$name" in
		"$ORIG") [ "x$TARBALL" = x- ] || cp "$TARBALL" "$DEST.tmp/$ORIG" ;;
		esac || exit 1
		[ -f "$DEST.tmp/$name" ] || cp "$1/$name" "$DEST.tmp/$name" || exit 1
	done <"$WORK/sums"
	rm -rf "$DEST"
	mv "$DEST.tmp" "$DEST" || exit 1
	echo "get-debian: using `basename "$2"` ($3; SHA-256 sums verified)"
	exit 0
}

# 1. --with-debian-source=DIR
if [ -n "$DIR" ]; then
	[ -d "$DIR" ] || die "--with-debian-source: no such directory: $DIR"
	dsc=`dsc_in "$DIR"`
	[ -n "$dsc" ] || die "--with-debian-source: no openssh_$R-*.dsc in $DIR"
	verify "$DIR" "$dsc" || die "refusing $dsc"
	if [ -d "$DEST" ] && [ "x`dsc_in "$DEST"`" != x ] &&
	    cmp -s "$dsc" "`dsc_in "$DEST"`"; then
		echo "get-debian: using `basename "$dsc"` (cached in $DEST)"
		exit 0
	fi
	put "$DIR" "$dsc" "from $DIR"
fi

# 2. A cached copy.
dsc=`dsc_in "$DEST"`
if [ -n "$dsc" ]; then
	verify "$DEST" "$dsc" ||
	    die "the cached copy in $DEST does not verify; remove $DEST"
	echo "get-debian: using cached `basename "$dsc"` ($DEST)"
	exit 0
fi

# 3. apt-get source.
command -v apt-get >/dev/null 2>&1 ||
    die "no Debian source for $R: apt-get is not available; download Debian's openssh $R source package (.dsc, .debian.tar.xz, .orig.tar.gz) and run ./configure --with-debian-source=DIR"
V=`apt-cache showsrc openssh 2>/dev/null | sed -n 's/^Version: //p' |
    grep "^\([0-9]*:\)\{0,1\}$R-" | LC_ALL=C sort -V | tail -n 1`
[ -n "$V" ] ||
    die "apt knows no openssh $R source package: it needs a deb-src entry for Debian $SUITE and apt-get update (as root: sh build-aux/add-deb-src.sh $SUITE), or run ./configure --with-debian-source=DIR"
mkdir "$WORK/apt"
(cd "$WORK/apt" && apt-get source --download-only "openssh=$V") \
    >"$WORK/apt.log" 2>&1 || {
	cat "$WORK/apt.log" >&2
	die "apt-get source --download-only openssh=$V failed"
}
dsc=`dsc_in "$WORK/apt"`
[ -n "$dsc" ] || die "apt-get source openssh=$V gave no .dsc"
verify "$WORK/apt" "$dsc" || die "refusing `basename "$dsc"`"
put "$WORK/apt" "$dsc" "apt-get source openssh=$V"
