#!/bin/sh
#
# port-series.sh: port our series to a new OpenSSH release, one patch at
# a time, and say what does not apply.  docs/porting.md describes the
# whole procedure.
#
# usage: port-series.sh [-r RELEASE] [-w WORKDIR] NEW [FROM]
#        port-series.sh -t WORKDIR
#
# NEW is the new release's tarball or unpacked tree, named openssh-RELEASE
# (or give -r RELEASE).  FROM is the release whose series is ported
# (default: the newest one in patches/releases that has a series).  The
# new series is patches/RELEASE/; WORKDIR defaults to build/port-RELEASE.
#
# Each patch of FROM's series is taken in order:
#   - if patches/RELEASE/PATCH exists (already ported), it must apply
#     exactly, as the build applies it;
#   - else FROM's patch is tried with no fuzz.  If every hunk applies
#     (offsets allowed) and no earlier patch stopped, it is re-diffed
#     against the tree before it and written to patches/RELEASE/, so it
#     applies exactly from now on.  Otherwise the rejected hunks are kept
#     in WORKDIR/rej/PATCH/FILE.rej, and the report says, per file, which
#     hunks moved (offset), which would apply only with fuzz, which were
#     rejected, and which look already applied upstream (Reversed).
# All patches are tried, so one run reports every reject; but only those
# before the first one that rejects are written, since each later patch
# must be re-diffed against its fixed predecessor.  For that first one,
# WORKDIR/before is the tree before it and WORKDIR/fix the tree with its
# hunks that applied and the .rej files beside the files: resolve them in
# WORKDIR/fix (delete the .rej files), then
#
#   port-series.sh -t WORKDIR
#
# writes patches/RELEASE/PATCH from the two trees (header kept from FROM;
# update its Description and Last-Update), and run the first command
# again for the next patch.  WORKDIR/report holds the last run's report.

set -u
LC_ALL=C
export LC_ALL

HERE=`cd "\`dirname "$0\"\`" && pwd`
TOP=`cd "$HERE/.." && pwd`
RELEASES="$TOP/patches/releases"
PATCH="${PATCH:-patch}"

die() {
	echo "port-series: $*" >&2
	exit 1
}

usage() {
	echo "usage: port-series.sh [-r RELEASE] [-w WORKDIR] NEW-TARBALL|NEW-TREE [FROM]" >&2
	echo "       port-series.sh -t WORKDIR" >&2
	exit 2
}

# header PATCH: its DEP-3 header, everything before the "---" line.
header() {
	sed '/^---$/q' "$1" | sed '$d'
}

RELEASE=""
WORKDIR=""
TAKE=""
while getopts r:w:t: opt; do
	case $opt in
	r)	RELEASE="$OPTARG" ;;
	w)	WORKDIR="$OPTARG" ;;
	t)	TAKE="$OPTARG" ;;
	*)	usage ;;
	esac
done
shift `expr $OPTIND - 1`

# -t WORKDIR: write the patch resolved in WORKDIR/fix.
if [ -n "$TAKE" ]; then
	[ $# -eq 0 ] || usage
	[ -f "$TAKE/state" ] || die "$TAKE/state: no patch waits for a fix there"
	. "$TAKE/state"
	left=`cd "$TAKE/fix" && find . -name '*.rej' | sed 's|^\./||'`
	[ -z "$left" ] ||
	    die "resolve and delete these first, in $TAKE/fix:" $left
	find "$TAKE/fix" -name '*.orig' -delete
	header "$TOP/patches/$FROM/$STOP" >"$TAKE/header"
	mkdir -p "$TOP/patches/$RELEASE" || exit 1
	sh "$HERE/mkpatch.sh" "$TAKE/before" "$TAKE/fix" "$TAKE/header" \
	    >"$TOP/patches/$RELEASE/$STOP.new" ||
	    die "mkpatch.sh failed"
	mv "$TOP/patches/$RELEASE/$STOP.new" "$TOP/patches/$RELEASE/$STOP"
	rm -f "$TAKE/state"
	echo "port-series: wrote patches/$RELEASE/$STOP; update its" \
	    "Description and Last-Update, then run port-series.sh again"
	exit 0
fi

[ $# -ge 1 ] && [ $# -le 2 ] || usage
NEW="$1"
FROM="${2:-}"
[ -e "$NEW" ] || die "no such file or directory: $NEW"

if [ -z "$RELEASE" ]; then
	if [ -d "$NEW" ]; then
		RELEASE=`basename "\`cd "$NEW" && pwd\`" | sed -n 's/^openssh-//p'`
	else
		RELEASE=`tar -tzf "$NEW" 2>/dev/null | head -n 1 |
		    sed -n "s|^openssh-\\([^/]*\\).*|\\1|p"`
	fi
	[ -n "$RELEASE" ] ||
	    die "cannot tell the release of $NEW (name it openssh-RELEASE or give -r)"
fi
if [ -z "$FROM" ]; then
	FROM=`sed -e 's/#.*//' "$RELEASES" | awk 'NF { print $1 }' |
	    while read -r r; do
		[ "$r" != "$RELEASE" ] && [ -f "$TOP/patches/$r/series" ] &&
		    { echo "$r"; break; }
	done`
	[ -n "$FROM" ] || die "no series to port from in $RELEASES"
fi
[ "$FROM" != "$RELEASE" ] || die "FROM and the new release are both $FROM"
[ -f "$TOP/patches/$FROM/series" ] || die "no series: patches/$FROM/series"
TO="$TOP/patches/$RELEASE"
WORKDIR="${WORKDIR:-$TOP/build/port-$RELEASE}"

mkdir -p "$WORKDIR" "$TO" || exit 1
WORKDIR=`cd "$WORKDIR" && pwd`
rm -rf "$WORKDIR/tree" "$WORKDIR/before" "$WORKDIR/fix" "$WORKDIR/rej" \
    "$WORKDIR/state"
if [ ! -d "$WORKDIR/pristine" ]; then
	if [ -d "$NEW" ]; then
		cp -a "$NEW" "$WORKDIR/pristine.tmp" || exit 1
	else
		mkdir "$WORKDIR/pristine.tmp" &&
		tar -xzf "$NEW" -C "$WORKDIR/pristine.tmp" \
		    --strip-components=1 || die "cannot unpack $NEW"
	fi
	mv "$WORKDIR/pristine.tmp" "$WORKDIR/pristine"
fi
cp -a "$WORKDIR/pristine" "$WORKDIR/tree"
mkdir "$WORKDIR/rej"

# counts PATCH: "FILE HUNKS" for each file PATCH changes.
counts() {
	awk '/^\+\+\+ / { f = $2; sub(/^b\//, "", f); order[++n] = f }
		/^@@ / { h[f]++ }
		END { for (i = 1; i <= n; i++) print order[i], h[order[i]] + 0 }' "$1"
}

# outcome LOG: "FILE KIND DETAIL" lines from patch's output; KIND is
# offset, fuzz, failed, reversed or ignored (the hunks of a file patch
# took for reversed, i.e. perhaps already applied upstream).
outcome() {
	awk '/^(patching|checking) file / { f = $3; sub(/^'"'"'/, "", f); sub(/'"'"'$/, "", f) }
		/^Hunk #[0-9]+ succeeded/ && /fuzz/ {
			n = $2; sub(/#/, "", n); print f, "fuzz", n }
		/^Hunk #[0-9]+ succeeded/ && /offset/ && !/fuzz/ {
			n = $2; sub(/#/, "", n)
			o = $0; sub(/.*offset /, "", o); sub(/ line.*/, "", o)
			print f, "offset", n ":" o }
		/^Hunk #[0-9]+ FAILED/ { n = $2; sub(/#/, "", n); print f, "failed", n }
		/Reversed \(or previously applied\)/ { print f, "reversed", "-" }
		/^[0-9]+ out of [0-9]+ hunks? ignored/ { print f, "ignored", $1 }' "$1"
}

# list KIND FILE: the details of KIND for FILE in $WORKDIR/out, joined.
list() {
	awk -v k="$1" -v f="$2" '$1 == f && $2 == k { printf "%s%s", s, $3; s = " " }' \
	    "$WORKDIR/out"
}

STOP=""
: >"$WORKDIR/report"
report() {
	echo "$*" | tee -a "$WORKDIR/report"
}
report "port-series: patches/$FROM/series onto OpenSSH $RELEASE ($NEW)"
report "port-series: work directory $WORKDIR"
ported=""
for p in `sed -e 's/#.*//' "$TOP/patches/$FROM/series"`; do
	if [ -f "$TO/$p" ] && [ -z "$STOP" ]; then
		rm -rf "$WORKDIR/one"
		mkdir "$WORKDIR/one"
		echo "$p" >"$WORKDIR/one/series"
		cp "$TO/$p" "$WORKDIR/one/"
		if ! PATCH="$PATCH" sh "$HERE/apply-series.sh" "$WORKDIR/one" \
		    "$WORKDIR/tree" >"$WORKDIR/log" 2>&1; then
			cat "$WORKDIR/log" >&2
			die "patches/$RELEASE/$p (already ported) does not apply exactly"
		fi
		report "$p: already ported (patches/$RELEASE/$p applies exactly)"
		ported="$ported $p"
		continue
	fi
	f="$TOP/patches/$FROM/$p"
	# What fuzz would rescue, on a scratch copy; then the real, strict run.
	$PATCH -d "$WORKDIR/tree" -p1 -F3 -N --dry-run <"$f" \
	    >"$WORKDIR/fuzz.log" 2>&1
	outcome "$WORKDIR/fuzz.log" | awk '$2 == "fuzz" { print $1, "fuzzok", $3 }' \
	    >"$WORKDIR/fuzz.out"
	[ -n "$STOP" ] || { rm -rf "$WORKDIR/before"; cp -a "$WORKDIR/tree" "$WORKDIR/before"; }
	$PATCH -d "$WORKDIR/tree" -p1 -F0 -N --no-backup-if-mismatch <"$f" \
	    >"$WORKDIR/log" 2>&1
	{ outcome "$WORKDIR/log"; cat "$WORKDIR/fuzz.out"; } >"$WORKDIR/out"
	nfiles=0
	nhunks=0
	nrej=0
	noff=0
	details=""
	exact=""
	for line in `counts "$f" | tr ' ' ':'`; do
		file=${line%:*}
		h=${line##*:}
		nfiles=`expr $nfiles + 1`
		nhunks=`expr $nhunks + $h`
		off=`list offset "$file"`
		rej=`list failed "$file"`
		fz=`list fuzzok "$file"`
		rev=`list reversed "$file"`
		ign=`list ignored "$file"`
		d=""
		if [ -n "$rev" ]; then
			nrej=`expr $nrej + ${ign:-$h}`
			d="$d all $h hunks look ALREADY APPLIED (patch: Reversed);"
			d="$d as of this release, drop them rather than reverse upstream"
			d="$d -> rej/$p/$file.rej;"
			mkdir -p "$WORKDIR/rej/$p/`dirname "$file"`"
			mv "$WORKDIR/tree/$file.rej" "$WORKDIR/rej/$p/$file.rej" 2>/dev/null
		fi
		[ -z "$off" ] || { d="$d offset(hunk:lines) $off;"; noff=`expr $noff + \`echo $off | wc -w\``; }
		if [ -n "$rej" ]; then
			nrej=`expr $nrej + \`echo $rej | wc -w\``
			d="$d REJECTED hunks $rej"
			[ -z "$fz" ] || d="$d (with fuzz, hunks $fz would apply)"
			d="$d -> rej/$p/$file.rej;"
			mkdir -p "$WORKDIR/rej/$p/`dirname "$file"`"
			mv "$WORKDIR/tree/$file.rej" "$WORKDIR/rej/$p/$file.rej" 2>/dev/null
		fi
		if [ -n "$d" ]; then
			details="$details
  $file ($h hunks):$d"
		else
			exact="$exact $file"
		fi
	done
	find "$WORKDIR/tree" \( -name '*.rej' -o -name '*.orig' \) -delete
	if grep -q 'malformed\|garbage\|No file to patch\|can.t find file' \
	    "$WORKDIR/log"; then
		details="$details
  `grep 'malformed\|garbage\|No file to patch\|can.t find file' "$WORKDIR/log" | head -n 3`"
		nrej=`expr $nrej + 1`
	fi
	sum="$nhunks hunks in $nfiles files: $nrej rejected, $noff with an offset"
	[ -z "$exact" ] || details="$details
  exact:$exact"
	if [ $nrej -eq 0 ] && [ -z "$STOP" ]; then
		header "$f" >"$WORKDIR/header"
		sh "$HERE/mkpatch.sh" "$WORKDIR/before" "$WORKDIR/tree" \
		    "$WORKDIR/header" >"$TO/$p"
		report "$p: $sum; written to patches/$RELEASE/$p$details"
		ported="$ported $p"
	elif [ $nrej -eq 0 ]; then
		report "$p: $sum (after $STOP's rejects)$details"
	else
		if [ -z "$STOP" ]; then
			STOP="$p"
			cp -a "$WORKDIR/tree" "$WORKDIR/fix"
			(cd "$WORKDIR/rej/$p" && find . -name '*.rej' | while read -r r; do
				cp "$r" "$WORKDIR/fix/$r"; done)
			{
				echo "RELEASE='$RELEASE'"
				echo "FROM='$FROM'"
				echo "STOP='$p'"
			} >"$WORKDIR/state"
		fi
		report "$p: $sum$details"
	fi
done
rm -rf "$WORKDIR/tree" "$WORKDIR/one" "$WORKDIR/out" \
    "$WORKDIR/fuzz.out" "$WORKDIR/fuzz.log"
[ -n "$STOP" ] || rm -rf "$WORKDIR/before"
printf "%s\n" $ported >"$TO/series"
if [ -n "$STOP" ]; then
	report "port-series: patches/$RELEASE/series has the ported patches:" $ported
	report "port-series: next: resolve $STOP in $WORKDIR/fix (the .rej files are there), then:"
	report "  sh build-aux/port-series.sh -t $WORKDIR"
	exit 1
fi
report "port-series: all of patches/$FROM/series is ported to patches/$RELEASE/"
report "port-series: next: ./configure --with-openssh-version=$RELEASE && make, and the tests"
exit 0
