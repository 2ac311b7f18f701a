#!/bin/sh
#
# mkdist.sh: write the distributable patch set into OUTDIR.
#
# usage: mkdist.sh TARBALL TOPDIR OUTDIR VERSION [RELEASE]
#
# TARBALL is the verified openssh-RELEASE.tar.gz (RELEASE, e.g. 10.0p1,
# defaults to the name of the one directory in it), TOPDIR this
# repository (patches/RELEASE/, our source files, README.hpn, docs/,
# LICENSE).
# OUTDIR gets:
#
#   NNNN-feature.patch   one per entry of patches/RELEASE/series, against
#                        pristine openssh-RELEASE, creating the new files
#                        the feature needs; each applies alone, and any
#                        subset applies in series order, with "patch -p1"
#                        and no fuzz.  A patch whose header says "Needs:
#                        OTHER.patch" is against pristine plus OTHER
#                        (0010's resume on 0007's pipeline): it applies
#                        after OTHER, in any subset that has OTHER
#   series               those patches in order
#   openssh-RELEASE-VERSION-kitchen-sink.patch
#                        all features in one patch
#   hpn-patches-VERSION.tar.gz
#                        the above with README.hpn, docs/*.md, LICENSE
#                        and SHA256SUMS
#   BASE                 the base these patches apply to (upstream's
#                        RELEASE) and the published security fixes it
#                        lacks (patches/security), with the route to a
#                        base that carries them
#   SHA256SUMS           checksums of everything in OUTDIR
#
# patches/RELEASE/ itself is a quilt-style series (each patch against the
# tree its predecessors made, so the build applies it with no offset); the
# a la carte patches are the same hunks re-diffed against pristine.  A
# feature's new files are the objects its Makefile.in hunk adds to
# libssh: foo.o brings foo.c and, if there is one, foo.h.

set -eu
TARBALL="$1"
TOP=`cd "$2" && pwd`
OUT="$3"
VERSION="$4"
RELEASE="${5:-}"
HERE=`cd "\`dirname "$0"\`" && pwd`
NAME="hpn-patches-$VERSION"

WORK=`mktemp -d "${TMPDIR:-/tmp}/mkdist.XXXXXX"`
trap 'rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

die() {
	echo "mkdist: $*" >&2
	exit 1
}

# The header of patch $1: everything before the "---" line.
header() {
	sed '/^---$/q' "$1" | sed '$d'
}

# Applies patch $2 to tree $1: offsets are fine, fuzz and rejects are not.
apply() {
	out=`patch -d "$1" -p1 -F0 -N --no-backup-if-mismatch <"$2" 2>&1` ||
	    die "`basename "$2"` does not apply to $1: $out"
	if printf "%s\n" "$out" | grep -q fuzz; then
		die "`basename "$2"` needs fuzz on $1: $out"
	fi
}

# The source files the patch $1 adds to libssh.
newfiles() {
	awk '/^\+\+\+ / { f = $2 }
		f == "b/Makefile.in" && /^[-+]\t/ {
			sign = substr($0, 1, 1)
			for (i = 1; i <= NF; i++) {
				o = $i
				if (i == 1)
					o = substr(o, 2)
				if (o !~ /\.o$/)
					continue
				sub(/\.o$/, "", o)
				if (sign == "-")
					had[o] = 1
				else
					add[o] = 1
			}
		}
		END { for (o in add) if (!(o in had)) print o }' "$1" |
	    LC_ALL=C sort |
	while read -r o; do
		[ -f "$TOP/$o.c" ] || die "$1 adds $o.o but $TOP/$o.c is missing"
		echo "$o.c"
		[ ! -f "$TOP/$o.h" ] || echo "$o.h"
	done
}

mkdir "$WORK/src"
tar -xzf "$TARBALL" -C "$WORK/src"
if [ -z "$RELEASE" ]; then
	RELEASE=`ls "$WORK/src" | sed -n 's/^openssh-//p' | head -n 1`
fi
OPENSSH="openssh-$RELEASE"
PATCHDIR="$TOP/patches/$RELEASE"
PRISTINE="$WORK/src/$OPENSSH"
[ -n "$RELEASE" ] && [ -d "$PRISTINE" ] || die "$TARBALL holds no $OPENSSH/"
[ -f "$PATCHDIR/series" ] || die "no series for OpenSSH $RELEASE: $PATCHDIR/series"

rm -rf "$OUT"
mkdir -p "$OUT"
SERIES=`sed -e 's/#.*//' "$PATCHDIR/series"`
[ -n "$SERIES" ] || die "empty series"

# The reference: pristine plus the series plus all our files, as the
# build makes it.
cp -a "$PRISTINE" "$WORK/ref"
for p in $SERIES; do
	apply "$WORK/ref" "$PATCHDIR/$p"
	nf=`newfiles "$PATCHDIR/$p"`
	for f in $nf; do
		cp "$TOP/$f" "$WORK/ref/$f"
	done
done

# A la carte: each patch alone on pristine (or on pristine and the a la
# carte patches it needs), with its new files.
: >"$OUT/series"
for p in $SERIES; do
	rm -rf "$WORK/one" "$WORK/under"
	cp -a "$PRISTINE" "$WORK/under"
	for n in `header "$PATCHDIR/$p" | sed -n 's/^Needs: //p' | tr ',' ' '`; do
		[ -f "$OUT/$n" ] || die "$p needs $n, which is not before it"
		apply "$WORK/under" "$OUT/$n"
	done
	cp -a "$WORK/under" "$WORK/one"
	apply "$WORK/one" "$PATCHDIR/$p"
	nf=`newfiles "$PATCHDIR/$p"`
	for f in $nf; do
		cp "$TOP/$f" "$WORK/one/$f"
	done
	header "$PATCHDIR/$p" >"$WORK/header"
	sh "$HERE/mkpatch.sh" "$WORK/under" "$WORK/one" "$WORK/header" \
	    >"$OUT/$p"
	echo "$p" >>"$OUT/series"
done

# Kitchen sink: all of them, which must give the reference tree.
cp -a "$PRISTINE" "$WORK/all"
for p in $SERIES; do
	apply "$WORK/all" "$OUT/$p"
done
diff -r "$WORK/ref" "$WORK/all" >/dev/null ||
    die "the a la carte patches together differ from $PATCHDIR/series"
{
	echo "Description: hpn-patches $VERSION: every feature in one patch"
	echo " High-performance networking for OpenSSH portable $RELEASE.  This"
	echo " patch is the concatenation, in effect, of the a la carte patches:"
	for p in $SERIES; do
		echo "   $p: `sed -n 's/^Description: //p' "$OUT/$p"`"
	done
	echo " See README.hpn in the patch set for the options and the tests."
	echo " Base: upstream OpenSSH portable $RELEASE; BASE in the patch set says"
	echo " which published security fixes that base lacks."
	echo "Author: hpn-patches authors"
	echo "Forwarded: no"
	echo "Last-Update: `sed -n 's/^Last-Update: //p' "$OUT/$p"`"
} >"$WORK/header"
sh "$HERE/mkpatch.sh" "$PRISTINE" "$WORK/all" "$WORK/header" \
    >"$OUT/$OPENSSH-$VERSION-kitchen-sink.patch"

# BASE: what these patches apply to, and what that base lacks.
missing=`sh "$HERE/check-fixes.sh" "$RELEASE" upstream | sed -n 's/^missing //p'`
rbase=`sed -e 's/#.*//' "$TOP/patches/releases" |
    awk -v v="$RELEASE" '$1 == v { print $4 }'`
{
	echo "Base: upstream OpenSSH portable $RELEASE (openssh-$RELEASE.tar.gz)"
	if [ -z "$missing" ]; then
		echo "Security: it carries every published fix that"
		echo "hpn-patches' patches/security lists."
	else
		echo "Security: upstream $RELEASE LACKS these published security fixes;"
		echo "do not install a build of it, with or without these patches:"
		printf '%s\n' "$missing" | sed 's/^/  /'
		case "$rbase" in
		debian:*)
			suite=`echo "$rbase" | sed 's/^debian://'`
			echo "Route: Debian $suite's openssh $RELEASE source package carries"
			echo "its own backports; hpn-patches' \"make deb DEBIAN=$suite\" (or"
			echo "./configure --with-openssh-version=$RELEASE) puts these patches"
			echo "on top of it and refuses it while it still lacks a fix."
			;;
		*)
			echo "Route: use the patch set for the newest release instead."
			;;
		esac
	fi
} >"$OUT/BASE"
if [ -n "$missing" ]; then
	echo "mkdist: WARNING: upstream $RELEASE lacks published security fixes; see $OUT/BASE" >&2
fi

# The tarball, reproducible: fixed order, owner and time.
mkdir "$WORK/$NAME" "$WORK/$NAME/docs"
cp "$OUT"/*.patch "$OUT/series" "$OUT/BASE" "$TOP/README.hpn" \
    "$TOP/LICENSE" "$WORK/$NAME/"
# README.hpn points to docs/ for the detail and the figures.
cp "$TOP"/docs/*.md "$WORK/$NAME/docs/"
(cd "$WORK/$NAME" && sha256sum `find . -type f | sed 's|^\./||' |
    LC_ALL=C sort` >SHA256SUMS)
mtime=`git -C "$TOP" log -1 --format=@%ct 2>/dev/null || echo @0`
(cd "$WORK" && tar --sort=name --owner=0 --group=0 --numeric-owner \
    --mtime="$mtime" -cf - "$NAME") | gzip -9n >"$OUT/$NAME.tar.gz"
(cd "$OUT" && sha256sum `ls | grep -v '^SHA256SUMS$' | LC_ALL=C sort` \
    >SHA256SUMS)
echo "mkdist: wrote $OUT:"
(cd "$OUT" && ls -l | sed 1d)
