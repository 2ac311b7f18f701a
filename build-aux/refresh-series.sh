#!/bin/sh
#
# refresh-series.sh: rewrite every patch in a series so that it
# applies, in series order, with no offset and no fuzz (as the build
# demands): each patch is applied to the tree its predecessors made
# (offsets allowed, fuzz not) and re-diffed against that tree.  DEP-3
# headers are kept.
#
# usage: refresh-series.sh PRISTINE-TREE [PATCHDIR]
#
# PATCHDIR defaults to patches/RELEASE when PRISTINE-TREE is named
# openssh-RELEASE (as the tarball unpacks).

set -eu
PRISTINE="$1"
RELEASE=`basename "$PRISTINE" | sed -n 's/^openssh-//p'`
PATCHDIR="${2:-patches/$RELEASE}"
if [ ! -f "$PATCHDIR/series" ]; then
	echo "refresh-series: no $PATCHDIR/series; name the series' directory" >&2
	exit 1
fi
HERE=`cd "\`dirname "$0"\`" && pwd`
WORK=`mktemp -d "${TMPDIR:-/tmp}/refresh.XXXXXX"`
trap 'rm -rf "$WORK"' 0

cp -a "$PRISTINE" "$WORK/prev"
for p in `sed -e 's/#.*//' "$PATCHDIR/series"`; do
	f="$PATCHDIR/$p"
	rm -rf "$WORK/next"
	cp -a "$WORK/prev" "$WORK/next"
	if ! patch -d "$WORK/next" -p1 -F0 -N -s --no-backup-if-mismatch \
	    <"$f"; then
		echo "refresh-series: $p does not apply, even with offsets" >&2
		exit 1
	fi
	find "$WORK/next" -name '*.orig' -delete
	sed '/^---$/q' "$f" | sed '$d' >"$WORK/header"
	sh "$HERE/mkpatch.sh" "$WORK/prev" "$WORK/next" "$WORK/header" \
	    >"$WORK/new.patch"
	if cmp -s "$WORK/new.patch" "$f"; then
		echo "refresh-series: $p unchanged"
	else
		mv "$WORK/new.patch" "$f"
		echo "refresh-series: $p refreshed"
	fi
	rm -rf "$WORK/prev"
	mv "$WORK/next" "$WORK/prev"
done
