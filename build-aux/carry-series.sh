#!/bin/sh
#
# carry-series.sh: carry a change made in the default release's series
# to the other series, by a 3-way merge on unpacked trees.  docs/porting.md
# describes the workflow.
#
# usage: carry-series.sh [-k] [-b REV] [-d TARBALL-DIR] [-w WORKDIR] [RELEASE...]
#        carry-series.sh -t WORKDIR/RELEASE
#        carry-series.sh -c | -s [RELEASE...]
#
# FROM is configure.ac's OPENSSH_DEFAULT_VERSION.  The change is every
# patch of FROM's series whose text differs from REV's (default HEAD; a
# patch new since REV is carried whole).  For each such patch P, in series
# order:
#   D = the difference between FROM's pristine tree with its (new)
#       patches before P and P as at REV, and that tree with P as it is
#       now: what the change does, as a diff of the source files;
#   for each other release R (default: every release of patches/releases
#   with a series): R's pristine tree with R's patches before P is
#   "before", with R's P too is "at"; D is applied to "at" (offsets and
#   fuzz allowed: the releases' contexts differ), and R's P is written
#   anew from "before" and the merged tree, with its own DEP-3 header
#   and FROM's change to that header merged in (git merge-file).  Then
#   R's later patches are re-diffed so that each still applies exactly
#   (refresh-series.sh).
# A hunk of D that does not apply stops R, with its tree and the .rej
# files in WORKDIR/R/merged (default build/carry): resolve them there
# (delete the .rej files), then "carry-series.sh -t WORKDIR/R" writes R's
# P from it as above, and "carry-series.sh -k" goes on with the patches
# after it (-k keeps what this carry did already: WORKDIR/R.done).  The pristine trees come from TARBALL-DIR's
# openssh-R.tar.gz (default: build/, ../shared/openssh), checked against
# patches/releases' content pins.  Exit status 0 when every release took
# the whole change.
#
# Each other series keeps in patches/R/carried the SHA-256 of each of
# FROM's patches and of R's own as they were when R was last brought in
# step (a carry writes it).  -c checks them (make check's docs suite): a
# patch of FROM edited and not carried, or one of R edited by hand, is
# out of step, and named.  -s stamps R as in step as it is (after a
# change that belongs to R alone: say why in its commit).

set -u
LC_ALL=C
export LC_ALL
HERE=`cd "\`dirname "$0"\`" && pwd`
TOP=`cd "$HERE/.." && pwd`
REV=HEAD
DIRS=""
WORK="$TOP/build/carry"
RESUME=""

die() {
	echo "carry-series: $*" >&2
	exit 2
}

MODE=carry
KEEP=no
while getopts b:d:w:t:cks o; do
	case $o in
	k)	KEEP=yes ;;
	c)	MODE=check ;;
	s)	MODE=stamp ;;
	b)	REV="$OPTARG" ;;
	d)	DIRS="$DIRS $OPTARG" ;;
	w)	WORK="$OPTARG" ;;
	t)	RESUME="$OPTARG" ;;
	*)	die "usage: carry-series.sh [-b REV] [-d DIR] [-w WORKDIR] [RELEASE...] | -t WORKDIR/RELEASE" ;;
	esac
done
shift `expr $OPTIND - 1`
DIRS="$DIRS $TOP/build $TOP/../shared/openssh"

FROM=`sed -n 's/^OPENSSH_DEFAULT_VERSION=//p' "$TOP/configure.ac"`
[ -n "$FROM" ] || die "no OPENSSH_DEFAULT_VERSION in configure.ac"

pin() {
	sed -e 's/#.*//' "$TOP/patches/releases" |
	    awk -v v="$1" '$1 == v { print $2 }'
}

series() {
	sed -e 's/#.*//' "$TOP/patches/$1/series"
}

# pristine R DIR: R's upstream tree in DIR, checked against its pin.
pristine() {
	_t=""
	for _d in $DIRS; do
		if [ -f "$_d/openssh-$1.tar.gz" ]; then
			_t="$_d/openssh-$1.tar.gz"
			break
		fi
	done
	[ -n "$_t" ] || die "no openssh-$1.tar.gz in:$DIRS (-d DIR)"
	rm -rf "$2"
	mkdir -p "$2"
	tar -xzf "$_t" -C "$2" --strip-components=1 ||
	    die "cannot unpack $_t"
	_sum=`sh "$HERE/tree-sha256.sh" "$2"`
	[ "$_sum" = "`pin $1`" ] ||
	    die "$_t: content $_sum, not patches/releases' pin for $1"
}

# apply DIR PATCHFILE [FUZZ]: patch DIR; exactly unless FUZZ is given.
apply() {
	patch -d "$1" -p1 -F"${3:-0}" -N -s --no-backup-if-mismatch <"$2"
}

# header PATCHFILE: its DEP-3 header, up to the line "---".
header() {
	sed '/^---$/q' "$1" | sed '$d'
}

# merge_header R P HDR: FROM's change to P's header since REV merged
# into R's (HDR); where the two do not merge, R's is kept, and said.
merge_header() {
	header "$WORK/old/$2" >"$WORK/$1/header.base"
	header "$TOP/patches/$FROM/$2" >"$WORK/$1/header.from"
	cp "$3" "$WORK/$1/header.mine"
	if ! git merge-file -q "$3" "$WORK/$1/header.base" \
	    "$WORK/$1/header.from" 2>/dev/null; then
		cp "$WORK/$1/header.mine" "$3"
		echo "carry-series: $1: $2's header kept: $FROM's change to" \
		    "it does not merge; edit it by hand, then" \
		    "carry-series.sh -s $1" >&2
	fi
}

# write R P BEFORE MERGED: R's P from the two trees, header kept, and
# R's later patches refreshed.
write() {
	find "$4" \( -name '*.orig' -o -name '*.rej' \) -exec rm -f {} +
	_hdr="$WORK/$1/header"
	if [ -f "$TOP/patches/$1/$2" ]; then
		header "$TOP/patches/$1/$2" >"$_hdr"
		[ -f "$WORK/old/$2" ] && merge_header "$1" "$2" "$_hdr"
	else
		header "$TOP/patches/$FROM/$2" >"$_hdr"
		echo "$2" >>"$TOP/patches/$1/series"
	fi
	sh "$HERE/mkpatch.sh" "$3" "$4" "$_hdr" >"$TOP/patches/$1/$2"
	pristine "$1" "$WORK/$1/pristine"
	sh "$HERE/refresh-series.sh" "$WORK/$1/pristine" \
	    "$TOP/patches/$1" >/dev/null ||
	    die "$1: the series no longer applies after $2"
	echo "carry-series: $1: $2 carried"
}

# stamp R: patches/R/carried as R's series and FROM's are now.
stamp() {
	for _p in `series $FROM`; do
		_f=`sha "$TOP/patches/$FROM/$_p"`
		_r=`sha "$TOP/patches/$1/$_p"`
		echo "$_p $_f $_r"
	done >"$TOP/patches/$1/carried"
}

sha() {
	if [ -f "$1" ]; then
		sha256sum <"$1" | cut -c1-64
	else
		echo -
	fi
}

others() {
	for _r in `sed -e 's/#.*//' "$TOP/patches/releases" | awk 'NF { print $1 }'`; do
		[ "$_r" = "$FROM" ] || [ ! -f "$TOP/patches/$_r/series" ] ||
		    echo "$_r"
	done
}

if [ $MODE != carry ]; then
	[ $# -gt 0 ] || set -- `others`
	rc=0
	for r in "$@"; do
		if [ $MODE = stamp ]; then
			stamp $r
			echo "carry-series: $r stamped as in step with $FROM"
			continue
		fi
		if [ ! -f "$TOP/patches/$r/carried" ]; then
			echo "carry-series: $r: no patches/$r/carried" \
			    "(carry-series.sh -s $r, once in step)"
			rc=1
			continue
		fi
		for p in `series $FROM`; do
			_want=`awk -v p="$p" '$1 == p { print $2, $3 }' \
			    "$TOP/patches/$r/carried"`
			_have="`sha "$TOP/patches/$FROM/$p"` `sha "$TOP/patches/$r/$p"`"
			[ "$_want" = "$_have" ] && continue
			case "$_want" in
			"`sha "$TOP/patches/$FROM/$p"` "*)
				echo "carry-series: $r: $p edited by hand" \
				    "since the last carry (carry-series.sh -s $r" \
				    "if that belongs to $r alone)" ;;
			*)
				echo "carry-series: $r: $FROM's $p changed" \
				    "and was not carried (carry-series.sh)" ;;
			esac
			rc=1
		done
	done
	exit $rc
fi

if [ -n "$RESUME" ]; then
	R=`basename "$RESUME"`
	[ -f "$RESUME/patch" ] || die "$RESUME: no carry to finish there"
	P=`cat "$RESUME/patch"`
	[ -z "`find "$RESUME/merged" -name '*.rej'`" ] ||
	    die "$RESUME/merged still has .rej files"
	WORK=`dirname "$RESUME"`
	write "$R" "$P" "$RESUME/before" "$RESUME/merged"
	echo "$P" >>"$WORK/$R.done"
	rm -f "$RESUME/failed"
	stamp "$R"
	echo "carry-series: $R: go on with carry-series.sh -k"
	exit 0
fi

[ $# -gt 0 ] || set -- `others`

mkdir -p "$WORK"
if [ $KEEP = no ]; then
	for r in "$@"; do
		rm -f "$WORK/$r.done"
	done
fi
# FROM's series at REV, and the patches that changed since.
rm -rf "$WORK/old"
mkdir -p "$WORK/old"
changed=""
for p in `series $FROM`; do
	if git -C "$TOP" cat-file -e "$REV:patches/$FROM/$p" 2>/dev/null; then
		git -C "$TOP" show "$REV:patches/$FROM/$p" >"$WORK/old/$p"
		cmp -s "$WORK/old/$p" "$TOP/patches/$FROM/$p" ||
		    changed="$changed $p"
	else
		changed="$changed $p"
	fi
done
if [ -z "$changed" ]; then
	echo "carry-series: patches/$FROM is as at $REV: nothing to carry"
	exit 0
fi
echo "carry-series: from $FROM:$changed"

pristine $FROM "$WORK/from"
rc=0
for p in `series $FROM`; do
	case " $changed " in
	*" $p "*)	;;
	*)
		apply "$WORK/from" "$TOP/patches/$FROM/$p" ||
		    die "$FROM's $p does not apply exactly"
		continue
		;;
	esac
	# D: what the change to p does.
	rm -rf "$WORK/from-old"
	cp -a "$WORK/from" "$WORK/from-old"
	if [ -f "$WORK/old/$p" ]; then
		apply "$WORK/from-old" "$WORK/old/$p" ||
		    die "$FROM's $p at $REV does not apply after the new ones"
	fi
	apply "$WORK/from" "$TOP/patches/$FROM/$p" ||
	    die "$FROM's $p does not apply exactly"
	(cd "$WORK" && diff -ruN -p from-old from) | sed \
	    -e 's|^--- from-old/\([^	]*\).*|--- a/\1|' \
	    -e 's|^+++ from/\([^	]*\).*|+++ b/\1|' >"$WORK/$p.diff"
	for r in "$@"; do
		[ -f "$TOP/patches/$r/series" ] || die "no series for $r"
		w="$WORK/$r"
		[ ! -f "$w/failed" ] || continue
		! grep -qx "$p" "$WORK/$r.done" 2>/dev/null || continue
		rm -rf "$w"
		mkdir -p "$w"
		pristine $r "$w/before"
		for q in `series $r`; do
			[ "$q" != "$p" ] || break
			apply "$w/before" "$TOP/patches/$r/$q" ||
			    die "$r's $q does not apply exactly"
		done
		cp -a "$w/before" "$w/merged"
		if [ -f "$TOP/patches/$r/$p" ]; then
			apply "$w/merged" "$TOP/patches/$r/$p" ||
			    die "$r's $p does not apply exactly"
		fi
		echo "$p" >"$w/patch"
		if ! patch -d "$w/merged" -p1 -F3 -N --no-backup-if-mismatch \
		    <"$WORK/$p.diff" >"$w/merge.log" 2>&1; then
			echo "carry-series: $r: $p: hunks to place by hand" \
			    "(`grep -c 'FAILED' "$w/merge.log"` failed):" \
			    "see $w/merged/*.rej, then carry-series.sh -t $w" >&2
			: >"$w/failed"
			rc=1
			continue
		fi
		write "$r" "$p" "$w/before" "$w/merged"
		echo "$p" >>"$WORK/$r.done"
	done
done
for r in "$@"; do
	[ -f "$WORK/$r/failed" ] || stamp $r
done
exit $rc
