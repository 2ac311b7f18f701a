#!/bin/sh
#
# mkdeb.sh: build Debian's openssh packages with our patches on top.
#
# usage: mkdeb.sh TOPDIR OUTDIR VERSION [DEBSRC]
#        mkdeb.sh --release DEBIAN
#
# DEBIAN (in the environment; default trixie) is the Debian release the
# packages are for: trixie (Debian 13, OpenSSH 10.0p1) or bookworm
# (Debian 12, OpenSSH 9.2p1).  "--release DEBIAN" prints its own OpenSSH
# release.
#
# OPENSSH_RELEASE (in the environment) is the OpenSSH release packaged,
# with our series patches/RELEASE/; by default DEBIAN's own, built from
# Debian's source package for it.  Another release is the upstream route:
# build-aux/deb-port/RELEASE/fates names the Debian source package whose
# packaging is taken ("# packaging: SUITE DEBRELEASE DEBVERSION") and the
# fate of each of its patches on RELEASE: "applies" (pushed as it is),
# "ported" (pushed, its rejected hunks re-placed by
# build-aux/deb-port/RELEASE/PATCH.fix, as for ours below) or "dropped"
# (RELEASE contains it; taken out of the series).  A patch of Debian's
# that fates does not list, or whose SHA-256 differs, stops the build.
# The upstream tarball is OPENSSH_TARBALL (default
# TOPDIR/build/openssh-RELEASE.tar.gz), its content checked against its
# pin in patches/releases (build-aux/tree-sha256.sh); our patches' conflicts are resolved by
# build-aux/deb-fixes/RELEASE/; the version is
# EPOCH:RELEASE-0+VERSION~debNu1 (N: 12 for bookworm, 13 for trixie),
# above Debian's own package of the stable release and below any Debian
# package of RELEASE or later.
#
# TOPDIR is this repository, OUTDIR gets the .deb files (and the
# .buildinfo, .changes, build.log and our patches as Debian carries them,
# in OUTDIR/debian-patches/), VERSION is the patch set's tag (hpn1).
# DEBSRC is a directory holding Debian's openssh source package (of
# DEBIAN's release, or the upstream route's packaging: trixie's 10.0p1)
# (openssh_R-*.dsc, .debian.tar.xz, openssh_R.orig.tar.gz);
# without it, "apt-get source --download-only openssh=V" fetches the
# newest version V of R that apt knows, which needs a deb-src entry
# for its suite (as root, build-aux/add-deb-src.sh SUITE writes one).
#
# Steps:
#   1. the orig tarball must have our pinned SHA-256 (OPENSSH_SHA256,
#      default: RELEASE's in patches/releases) -- else nothing is unpacked;
#   2. dpkg-source -x; Debian's own patches are pushed with quilt, no fuzz;
#   3. mkdist.sh writes our a la carte patches (of patches/RELEASE/),
#      which go to the end of debian/patches/series and are pushed one
#      by one with --fuzz=0.  A
#      patch with rejected hunks is a conflict with Debian's patches: the
#      rejected hunks are printed (file and hunk number), and the build
#      stops unless build-aux/deb-fixes/DEBIAN/PATCH.fix resolves exactly those
#      hunks (its "Conflict:" lines must list the same set); the .fix is
#      applied with no fuzz, the rejected hunks' added lines must be in
#      the result (except in files listed as "Adapted:", where the .fix
#      says why the change differs), and the patch is refreshed.  Every patch of ours is
#      refreshed (offsets), then "quilt pop -a; quilt push -a --fuzz=0"
#      must succeed;
#   4. debian/changelog gets a local version, DEBIAN-VERSION+VERSION;
#   5. build dependencies are installed (as root: apt-get build-dep);
#   6. DEB_BUILD_OPTIONS="nocheck parallel=N" dpkg-buildpackage -b -us -uc
#      with DEB_BUILD_PROFILES (default "noudeb pkg.openssh.nognome").
#
# Between steps 3 and 4, build-aux/check-fixes.sh looks for OpenSSH's
# published security fixes in the tree: a fix it lacks stops the build,
# unless OPENSSH_UNFIXED=yes (tests only; make deb DEB_UNFIXED=yes), which
# warns and marks the packages: their version ends in ~unfixed (so that a
# package with the fixes upgrades them), each package's description says
# it lacks security fixes, the changelog names them, and OUTDIR/unfixed
# lists them.  With MKDEB_TREE the caller's gate decides; the tree's
# changelog still gets the ~unfixed version where fixes are missing and
# OPENSSH_UNFIXED=yes.
#
# Environment: DEBFULLNAME and DEBEMAIL (the changelog entry's author;
# default hpn-patches <hpn-patches@example.invalid>), OPENSSH_SHA256, DEB_BUILD_PROFILES, MKDEB_KEEP=1 (keep the
# work directory), MKDEB_PREPARE_ONLY=1 (stop after step 4 and print the
# source tree's path; implies MKDEB_KEEP), MKDEB_TREE=DIR (stop after
# step 4 and move the source tree to DIR, which must not exist; the
# security check is then the caller's), OPENSSH_UNFIXED.

set -eu
if [ "x${1:-}" = "x--release" ]; then
	[ $# -eq 2 ] || { echo "usage: mkdeb.sh --release DEBIAN" >&2; exit 2; }
	DEBIAN="$2"
fi
DEBIAN="${DEBIAN:-trixie}"
case "$DEBIAN" in
trixie)		UPVERSION=10.0p1 ;;
bookworm)	UPVERSION=9.2p1 ;;
*)		echo "mkdeb: unknown DEBIAN=$DEBIAN (trixie or bookworm)" >&2
		exit 1 ;;
esac
if [ "x${1:-}" = "x--release" ]; then
	echo $UPVERSION
	exit 0
fi
[ $# -ge 3 ] && [ $# -le 4 ] ||
    { echo "usage: mkdeb.sh TOPDIR OUTDIR VERSION [DEBSRC]" >&2; exit 2; }
TOP=`cd "$1" && pwd`
OUT="$2"
VERSION="$3"
DEBSRC="${4:-}"
HERE=`cd "\`dirname "$0"\`" && pwd`
PROFILES="${DEB_BUILD_PROFILES-noudeb pkg.openssh.nognome}"

die() {
	echo "mkdeb: $*" >&2
	exit 1
}
say() {
	echo "mkdeb: $*"
}

# The release packaged: DEBIAN's own, or the upstream route's.
REL="${OPENSSH_RELEASE:-$UPVERSION}"
PORT=""
PKGSUITE="$DEBIAN"
if [ "x$REL" != "x$UPVERSION" ]; then
	PORT="$HERE/deb-port/$REL"
	[ -f "$PORT/fates" ] ||
	    die "no Debian packaging for OpenSSH $REL ($PORT/fates is missing; DEBIAN=$DEBIAN packages $UPVERSION from Debian's own source)"
	set -- `sed -n 's/^# packaging: //p' "$PORT/fates"`
	[ $# -eq 3 ] || die "$PORT/fates: no \"# packaging: SUITE RELEASE VERSION\" line"
	PKGSUITE="$1"
	UPVERSION="$2"
	PORTED_FROM="$3"
	[ -n "${MKDEB_TREE:-}" ] && die "MKDEB_TREE builds DEBIAN's own release only"
	case "$DEBIAN" in
	bookworm)	DEBN=12 ;;
	trixie)		DEBN=13 ;;
	esac
	TARBALL="${OPENSSH_TARBALL:-$TOP/build/openssh-$REL.tar.gz}"
	[ -f "$TARBALL" ] ||
	    die "no $TARBALL (make fetches it; or OPENSSH_TARBALL=FILE)"
	# Its content pin (build-aux/tree-sha256.sh), checked once unpacked.
	pin=`sed -e 's/#.*//' "$TOP/patches/releases" |
	    awk -v v=$REL '$1 == v { print $2 }'`
	[ -n "$pin" ] || die "no content pin for $REL in $TOP/patches/releases"
fi
SHA256="${OPENSSH_SHA256:-`sed -e 's/#.*//' "$TOP/patches/releases" |
    awk -v v=$UPVERSION '$1 == v { print $3 }'`}"

[ -n "$SHA256" ] && [ "x$SHA256" != "x-" ] ||
    die "no OPENSSH_SHA256 (and no tarball SHA-256 for $UPVERSION in $TOP/patches/releases)"
for prog in dpkg-source dpkg-buildpackage quilt patch sha256sum; do
	command -v $prog >/dev/null 2>&1 ||
	    die "$prog not found (apt-get install dpkg-dev quilt patch)"
done

mkdir -p "$OUT"
OUT=`cd "$OUT" && pwd`
# OUT/version names the packages there; it is written last, on success.
rm -f "$OUT/version"
# Packages that lack security fixes (OUT/unfixed) go now, whatever this
# run builds.
if [ -f "$OUT/unfixed" ] && [ -z "${MKDEB_TREE:-}" ]; then
	rm -f "$OUT"/*.deb "$OUT"/*.buildinfo "$OUT"/*.changes "$OUT/unfixed"
fi
WORK=`mktemp -d "${TMPDIR:-/tmp}/mkdeb.XXXXXX"`
if [ -n "${MKDEB_KEEP:-}${MKDEB_PREPARE_ONLY:-}" ]; then
	trap 'echo "mkdeb: work directory kept: $WORK" >&2' 0
else
	trap 'rm -rf "$WORK"' 0
fi
trap 'exit 1' 1 2 15

# 1. Debian's source package, verified.
if [ -n "$DEBSRC" ]; then
	[ -d "$DEBSRC" ] || die "no such directory: $DEBSRC"
	DEBSRC=`cd "$DEBSRC" && pwd`
else
	# The newest version of openssh RELEASE that apt knows; its orig
	# tarball is checked against our pin below.
	sh "$HERE/get-debian.sh" "$PKGSUITE" $UPVERSION - "$WORK/fetch" ||
	    die "cannot fetch Debian's openssh $UPVERSION source package"
	DEBSRC="$WORK/fetch"
fi
DSC=`ls "$DEBSRC"/openssh_$UPVERSION-*.dsc 2>/dev/null | LC_ALL=C sort | tail -n 1`
[ -n "$DSC" ] || die "no openssh_$UPVERSION-*.dsc in $DEBSRC"
ORIG="$DEBSRC/openssh_$UPVERSION.orig.tar.gz"
[ -f "$ORIG" ] || die "no `basename "$ORIG"` in $DEBSRC"
actual=`sha256sum "$ORIG" | cut -d' ' -f1`
if [ "x$actual" != "x$SHA256" ]; then
	echo "mkdeb: SHA-256 mismatch for $ORIG" >&2
	echo "mkdeb:   expected SHA-256 $SHA256" >&2
	echo "mkdeb:   actual   SHA-256 $actual" >&2
	die "refusing to unpack it"
fi
say "using `basename "$DSC"` ($ORIG: SHA-256 $SHA256 verified)"

# 2. Unpack; dpkg-source applies Debian's patches.  The upstream route
# takes only the debian/ directory, onto RELEASE's tarball.
SRC="$WORK/openssh-$UPVERSION"
dpkg-source -x "$DSC" "$SRC" >"$WORK/dpkg-source.log" 2>&1 || {
	cat "$WORK/dpkg-source.log" >&2
	die "dpkg-source -x `basename "$DSC"` failed"
}
# Debian's version with its epoch (1:10.0p1-7+deb13u4); file names omit it.
DEBVERSION=`cd "$SRC" && dpkg-parsechangelog -S Version`
NEWVERSION="$DEBVERSION+$VERSION"
if [ -n "$PORT" ]; then
	[ "x$DEBVERSION" = "x$PORTED_FROM" ] ||
	    say "note: Debian's packaging is $DEBVERSION; $PORT/fates was written for $PORTED_FROM (each patch is checked below)"
	mkdir "$WORK/up"
	tar -xzf "$TARBALL" -C "$WORK/up" || die "cannot unpack $TARBALL"
	[ -d "$WORK/up/openssh-$REL" ] || die "$TARBALL holds no openssh-$REL/"
	actual=`sh "$HERE/tree-sha256.sh" "$WORK/up/openssh-$REL"`
	[ "x$actual" = "x$pin" ] ||
	    die "$TARBALL: content SHA-256 $actual, not the pin $pin of $REL (patches/releases)"
	say "OpenSSH $REL from $TARBALL (content pin verified)"
	mv "$SRC/debian" "$WORK/up/openssh-$REL/debian"
	rm -rf "$SRC"
	SRC="$WORK/openssh-$REL"
	mv "$WORK/up/openssh-$REL" "$SRC"
	NEWVERSION="${DEBVERSION%%:*}:$REL-0+$VERSION~deb${DEBN}u1"
fi
FILEVERSION="${NEWVERSION#*:}"
cd "$SRC"
QUILT_PATCHES=debian/patches
QUILT_PC=.pc
export QUILT_PATCHES QUILT_PC

# The rejected hunks of a "quilt push -f" log, as "FILE #N" lines.
rejected() {
	awk '/^patching file / { f = $3; sub(/^\.\//, "", f) }
		/^Hunk #[0-9]+ FAILED/ { print f, $2 }' "$1" | LC_ALL=C sort
}

# The added lines of the rejected hunks in FILE.rej, one per line.
added_lines() {
	sed -n 's/^+\([^+]\)/\1/p' "$1.rej"
}

# push P FIX [WHAT]: quilt push P with no fuzz; where hunks are rejected, FIX
# must resolve exactly those (its "Conflict:" lines), with no fuzz, and
# the rejected hunks' added lines must then be in their files (except
# those listed as "Adapted:").  P is refreshed.  Sets $resolved.
push() {
	resolved=""
	if quilt push --fuzz=0 "$1" >"$WORK/push.log" 2>&1; then
		quilt refresh -p ab --no-timestamps --no-index >/dev/null ||
		    die "quilt refresh $1 failed"
		say "$1: applies with no fuzz"
		return 0
	fi
	# It does not apply: see which hunks are rejected.
	quilt push -f --fuzz=0 "$1" >"$WORK/push-f.log" 2>&1 || :
	quilt top 2>/dev/null | grep -q "$1\$" ||
	    { cat "$WORK/push-f.log" >&2; die "$1: quilt push -f failed"; }
	rejected "$WORK/push-f.log" >"$WORK/rejected"
	[ -s "$WORK/rejected" ] ||
	    { cat "$WORK/push.log" >&2; die "$1 does not apply, and no hunk is rejected"; }
	echo "mkdeb: $1 ${3:-conflicts with the patches before it}; rejected hunks (--fuzz=0):" >&2
	sed 's/^/mkdeb:   /' "$WORK/rejected" >&2
	for r in `sed 's/ .*//' "$WORK/rejected" | uniq`; do
		echo "mkdeb:   patches before it that change $r:" \
		    `quilt patches "$r" 2>/dev/null | sed 's|.*/||' | grep -vxF "$1"` >&2
	done
	fix="$2"
	if [ ! -f "$fix" ]; then
		for r in `sed 's/ .*//' "$WORK/rejected" | uniq`; do
			echo "--- $r.rej" >&2
			cat "$r.rej" >&2
		done
		die "$1: no resolution for these hunks ($fix is missing)"
	fi
	sed -n 's/^Conflict: \([^ ]*\) \(#[0-9]*\):.*/\1 \2/p' "$fix" |
	    LC_ALL=C sort >"$WORK/listed"
	if ! cmp -s "$WORK/rejected" "$WORK/listed"; then
		echo "mkdeb: $fix resolves:" >&2
		sed 's/^/mkdeb:   /' "$WORK/listed" >&2
		die "$1: the rejected hunks are not the ones $fix resolves; update it"
	fi
	# A .fix may change files the patch does not touch yet (where the
	# code moved); the refreshed patch takes them in.
	for f in `sed -n 's|^+++ b/\([^ 	]*\).*|\1|p' "$fix"`; do
		quilt files | grep -qxF "$f" || quilt add "$f" >/dev/null ||
		    die "quilt add $f failed"
	done
	if grep -q '^+++ ' "$fix"; then
		out=`patch -p1 -F0 -N --no-backup-if-mismatch <"$fix" 2>&1` ||
		    die "$fix does not apply: $out"
		if printf "%s\n" "$out" | grep -q fuzz; then
			die "$fix needs fuzz: $out"
		fi
	fi
	# Each file whose rejected hunks were re-placed must now hold their
	# added lines; a file listed as "Adapted:" (its hunk written
	# differently, with the reason) is exempt.
	for r in `sed 's/ .*//' "$WORK/rejected" | uniq`; do
		if grep -q "^Adapted: $r " "$fix"; then
			say "$1: $r: adapted, not copied: `sed -n "s/^Adapted: $r [^:]*: //p" "$fix" | head -n 1`"
			rm -f "$r.rej"
			continue
		fi
		added_lines "$r" | while IFS= read -r line; do
			grep -qxF -- "$line" "$r" ||
			    die "$1: after $fix, $r lacks the rejected line: $line"
		done || exit 1
		rm -f "$r.rej"
	done
	quilt refresh -p ab --no-timestamps --no-index >/dev/null ||
	    die "quilt refresh $1 failed"
	say "$1: conflicts resolved by `basename "$fix"` and refreshed"
	resolved="$1"
}

if [ -z "$PORT" ]; then
	# Debian's own patches: dpkg-source applied them; the pop/push at
	# the end of step 3 checks them with --fuzz=0 too.
	quilt push -a --fuzz=0 >"$WORK/quilt-debian.log" 2>&1 ||
	    grep -q 'already applied\|No patches in series\|File series fully applied' \
	    "$WORK/quilt-debian.log" || {
		cat "$WORK/quilt-debian.log" >&2
		die "Debian's own patches do not apply with quilt --fuzz=0"
	}
	FIXDIR="$HERE/deb-fixes/$DEBIAN"
else
	# Debian's patches on RELEASE, as fates says.
	say "Debian's packaging of $DEBVERSION on OpenSSH $REL ($PORT/fates)"
	n_applies=0 n_ported=0 n_dropped=0
	: >"$WORK/seen"
	for p in `sed -e 's/#.*//' debian/patches/series`; do
		echo "$p" >>"$WORK/seen"
		line=`awk -F '\t' -v p="$p" '$1 == p' "$PORT/fates"`
		[ -n "$line" ] ||
		    die "Debian's $p is not in $PORT/fates: port it to $REL (docs/debian.md)"
		fate=`printf '%s\n' "$line" | cut -f2`
		want=`printf '%s\n' "$line" | cut -f3`
		have=`sha256sum "debian/patches/$p" | cut -d' ' -f1`
		[ "x$have" = "x$want" ] ||
		    die "Debian's $p is not the one $PORT/fates was written for (SHA-256 $have, not $want): port it again"
		case "$fate" in
		applies)
			push "$p" "$PORT/$p.fix" "does not apply to $REL as it is"
			[ -z "$resolved" ] ||
			    die "$p: fates says it applies, but $PORT/$p.fix was needed"
			n_applies=`expr $n_applies + 1` ;;
		ported)
			[ -f "$PORT/$p.fix" ] || die "$p: fates says ported, and $PORT/$p.fix is missing"
			push "$p" "$PORT/$p.fix" "does not apply to $REL as it is"
			[ -n "$resolved" ] ||
			    die "$p applies as it is now: its fate in $PORT/fates is \"applies\""
			n_ported=`expr $n_ported + 1` ;;
		dropped)
			say "$p: dropped: `printf '%s\n' "$line" | cut -f4`"
			sed -i "/^$p\$/d" debian/patches/series
			rm -f "debian/patches/$p"
			n_dropped=`expr $n_dropped + 1` ;;
		*)	die "$PORT/fates: $p: unknown fate \"$fate\"" ;;
		esac
	done
	for p in `awk -F '\t' '!/^#/ && NF >= 3 { print $1 }' "$PORT/fates"`; do
		grep -qxF "$p" "$WORK/seen" ||
		    die "$PORT/fates lists $p, which Debian's series does not have: update it"
	done
	say "Debian's patches on $REL: $n_applies apply, $n_ported ported, $n_dropped dropped (in $REL)"
	FIXDIR="$HERE/deb-fixes/$REL"
fi

# 3. Our patches, at the end of the series.
say "mkdist.sh: our a la carte patches"
if [ -n "$PORT" ]; then
	cp "$TARBALL" "$WORK/openssh-$REL.tar.gz"
else
	# mkdist wants the upstream tarball: Debian's orig is that tarball.
	cp "$ORIG" "$WORK/openssh-$REL.tar.gz"
fi
sh "$HERE/mkdist.sh" "$WORK/openssh-$REL.tar.gz" "$TOP" \
    "$WORK/dist" "$VERSION" $REL >"$WORK/mkdist.log" 2>&1 </dev/null || {
	cat "$WORK/mkdist.log" >&2
	die "mkdist.sh failed"
}
OURS=`cat "$WORK/dist/series"`
[ -n "$OURS" ] || die "mkdist.sh wrote an empty series"
for p in $OURS; do
	[ ! -e "debian/patches/$p" ] ||
	    die "debian/patches/$p exists already in Debian's package"
done

conflicts=""
for p in $OURS; do
	cp "$WORK/dist/$p" "debian/patches/$p"
	echo "$p" >>debian/patches/series
	push "$p" "$FIXDIR/$p.fix"
	[ -z "$resolved" ] || conflicts="$conflicts $p"
done
left=`find . -name '*.rej' | head -n 5`
[ -z "$left" ] || die "rejects left: $left"
quilt pop -a >"$WORK/pop.log" 2>&1 || { cat "$WORK/pop.log" >&2; die "quilt pop -a failed"; }
quilt push -a --fuzz=0 >"$WORK/push-all.log" 2>&1 || {
	cat "$WORK/push-all.log" >&2
	die "quilt push -a --fuzz=0 fails after refreshing"
}
if grep -q 'fuzz' "$WORK/push-all.log"; then
	die "quilt push -a --fuzz=0 reports fuzz"
fi
say "quilt push -a --fuzz=0: `grep -vc '^#\|^$' debian/patches/series` patches in debian/patches/series, ours last, no fuzz"
rm -rf "$OUT/debian-patches"
mkdir -p "$OUT/debian-patches"
for p in $OURS; do
	cp "debian/patches/$p" "$OUT/debian-patches/$p"
done
cp debian/patches/series "$OUT/debian-patches/series"

# Build dependencies this machine's release cannot satisfy.  Debian 13's
# packaging wants libwtmpdb-dev and dh-sequence-movetousr; Debian 12 has
# neither.  Then --with-wtmpdb goes (OpenSSH keeps utmp/wtmp logging, as
# Debian 12's own package does) and dh_movetousr too (files stay in /lib,
# as on Debian 12); both are said here and in the changelog.  Debian 12's
# packaging (DEBIAN=bookworm) needs neither.
adapt=""
if grep -q 'libwtmpdb-dev' debian/control &&
    ! apt-cache show libwtmpdb-dev >/dev/null 2>&1 &&
    ! dpkg-query -W libwtmpdb-dev >/dev/null 2>&1; then
	sed -i '/^ *libwtmpdb-dev,$/d' debian/control
	sed -i '/^confflags += --with-wtmpdb$/d' debian/rules
	! grep -q 'wtmpdb' debian/control debian/rules ||
	    die "could not drop wtmpdb from debian/control, debian/rules"
	adapt="$adapt
  * Built without wtmpdb (libwtmpdb-dev is not available on this release)."
fi
if grep -q 'dh-sequence-movetousr' debian/control &&
    ! { apt-cache show debhelper 2>/dev/null; dpkg-query -s debhelper 2>/dev/null; } |
    grep -q 'dh-sequence-movetousr'; then
	sed -i '/^ *dh-sequence-movetousr,$/d' debian/control
	! grep -q 'movetousr' debian/control ||
	    die "could not drop dh-sequence-movetousr from debian/control"
	adapt="$adapt
  * Built without dh-sequence-movetousr (not in this release's debhelper)."
fi
# The upstream route: documents Debian's packaging installs that the
# release no longer has.
if [ -n "$PORT" ]; then
	for f in debian/*.docs; do
		for e in `sed -e 's/#.*//' "$f"`; do
			[ ! -e "$e" ] || continue
			grep -vxF "$e" "$f" >"$f.new" || :
			mv "$f.new" "$f"
			adapt="$adapt
  * $e, gone in OpenSSH $REL: dropped from
    debian/`basename "$f"`."
		done
	done
fi
# A versioned dependency this release cannot satisfy: trixie's
# openssh-client wants init-system-helpers 1.66 for "deb-systemd-invoke
# --user daemon-reload" in its postinst, which Debian 12's 1.65 lacks
# (the call is "|| true": user units are not reloaded on upgrade there).
isv=`apt-cache policy init-system-helpers 2>/dev/null |
    sed -n 's/^ *Candidate: //p'`
want=`sed -n 's/^ *init-system-helpers (>= \([^)]*\)),$/\1/p' debian/control |
    head -n 1`
if [ -n "$want" ] && [ -n "$isv" ] && [ "x$isv" != "x(none)" ] &&
    dpkg --compare-versions "$isv" lt "$want"; then
	sed -i "s/^\( *init-system-helpers\) (>= $want),\$/\1,/" debian/control
	adapt="$adapt
  * openssh-client: init-system-helpers unversioned (not >= $want):
    this release has $isv, whose deb-systemd-invoke lacks --user;
    the postinst's \"|| true\" user daemon-reload does nothing here."
fi
[ -z "$adapt" ] || say "adapted the packaging to this release:$adapt"

# OpenSSH's published security fixes (patches/security).
unfixed=""
rm -f "$OUT/unfixed"
fixbase="debian:$DEBIAN"
[ -z "$PORT" ] || fixbase=upstream
if sh "$HERE/check-fixes.sh" $REL $fixbase . \
    >"$WORK/fixes.log" 2>&1; then
	[ -n "${MKDEB_TREE:-}" ] || say "`tail -n 1 "$WORK/fixes.log"`"
elif [ $? -eq 1 ] && [ "x${OPENSSH_UNFIXED:-}" = xyes ]; then
	unfixed=`sed -n 's/^missing \([^:]*\):.*/\1/p' "$WORK/fixes.log" |
	    tr '\n' ' ' | sed 's/ $//'`
	if [ -z "${MKDEB_TREE:-}" ]; then
		grep '^missing ' "$WORK/fixes.log" |
		    sed 's/^/mkdeb: WARNING: /' >&2
		echo "mkdeb: WARNING: OPENSSH_UNFIXED=yes: these packages lack published security fixes; for tests only, never install them" >&2
		sed -n 's/^missing //p' "$WORK/fixes.log" >"$OUT/unfixed"
	fi
elif [ -z "${MKDEB_TREE:-}" ]; then
	grep -v '^carried ' "$WORK/fixes.log" | sed 's/^/mkdeb: /' >&2
	die "Debian's `dpkg-parsechangelog -S Version` lacks the security fixes above; packages from it are not built (make deb DEB_UNFIXED=yes builds them for tests only)"
fi
if [ -n "$unfixed" ]; then
	# Below any package with the fixes, and said in every description.
	NEWVERSION="$NEWVERSION~unfixed"
	FILEVERSION="${NEWVERSION#*:}"
	sed -i 's/^Description: .*/& (lacks security fixes: tests only)/' \
	    debian/control
	grep -q '^Description: .*(lacks security fixes: tests only)$' \
	    debian/control || die "could not mark debian/control's descriptions"
fi

# The upstream route says what the packages are in each description.
if [ -n "$PORT" ]; then
	awk -v rel="$REL" -v v="$VERSION" -v deb="$DEBVERSION" '
	function para() {
		print " ."
		print " This build is OpenSSH " rel " with the hpn-patches " v
		print " patch set, on Debian'"'"'s packaging of " deb "."
	}
	/^Description:/ { indesc = 1; print; next }
	indesc && !/^ / { para(); indesc = 0 }
	{ print }
	END { if (indesc) para() }' debian/control >debian/control.new
	mv debian/control.new debian/control
	[ "`grep -c '^ This build is OpenSSH' debian/control`" = \
	    "`grep -c '^Description:' debian/control`" ] ||
	    die "could not extend debian/control's descriptions"
fi

# 4. The changelog entry.
# wrap: a changelog item's list, folded at 70 columns, continued four
# spaces in.
wrap() {
	fold -s -w 70 | sed "s/ *$//; s/^\([^ ]\)/    \1/"
}
{
	echo "openssh ($NEWVERSION) UNRELEASED; urgency=medium"
	echo
	if [ -n "$PORT" ]; then
		echo "  * OpenSSH $REL (upstream) on Debian's packaging of $DEBVERSION"
		echo "    (build-aux/deb-port/$REL/).  Debian's patches: $n_applies apply as"
		echo "    they are, $n_ported are ported to $REL, $n_dropped are dropped ($REL"
		echo "    contains them)."
	fi
	echo "  * hpn-patches $VERSION at the end of debian/patches/series:"
	for p in $OURS; do
		echo "    $p"
	done
	if [ -n "$conflicts" ]; then
		echo "  * Conflicts with Debian's patches resolved (build-aux/deb-fixes/`basename "$FIXDIR"`/):"
		echo "   $conflicts" | wrap
	fi
	[ -z "$adapt" ] || printf '%s\n' "$adapt" | sed 1d
	if [ -n "$unfixed" ]; then
		echo "  * UNFIXED, for tests only, never install: built without"
		echo "    these published security fixes (OPENSSH_UNFIXED=yes):"
		echo "    $unfixed" | wrap
	fi
	echo
	echo " -- ${DEBFULLNAME:-hpn-patches} <${DEBEMAIL:-hpn-patches@example.invalid}>  `date -R`"
	echo
	cat debian/changelog
} >debian/changelog.new
mv debian/changelog.new debian/changelog
[ "x`dpkg-parsechangelog -S Version`" = "x$NEWVERSION" ] ||
    die "debian/changelog: version is not $NEWVERSION"
say "debian/changelog: $NEWVERSION"

if [ -n "${MKDEB_TREE:-}" ]; then
	cd "$WORK"
	[ ! -e "$MKDEB_TREE" ] || die "$MKDEB_TREE exists already"
	mv "$SRC" "$MKDEB_TREE" || die "cannot move the tree to $MKDEB_TREE"
	say "prepared source tree: $MKDEB_TREE"
	exit 0
fi
if [ -n "${MKDEB_PREPARE_ONLY:-}" ]; then
	say "prepared source tree: $SRC"
	exit 0
fi

# 5. Build dependencies.
profopt=""
[ -z "$PROFILES" ] || profopt="-P`echo $PROFILES | tr ' ' ,`"
if ! DEB_BUILD_PROFILES="$PROFILES" dpkg-checkbuilddeps >/dev/null 2>&1; then
	if [ "`id -u`" = 0 ]; then
		say "apt-get build-dep $profopt ./"
		DEBIAN_FRONTEND=noninteractive apt-get build-dep -y $profopt ./ \
		    >"$WORK/build-dep.log" 2>&1 || {
			tail -n 30 "$WORK/build-dep.log" >&2
			die "apt-get build-dep failed"
		}
	fi
	DEB_BUILD_PROFILES="$PROFILES" dpkg-checkbuilddeps ||
	    die "unmet build dependencies (as root this script installs them)"
fi

# 6. Build.
NPROC=`nproc 2>/dev/null || echo 1`
say "DEB_BUILD_OPTIONS=\"nocheck parallel=$NPROC\" DEB_BUILD_PROFILES=\"$PROFILES\" dpkg-buildpackage -b -us -uc (log: $OUT/build.log)"
start=`date +%s`
if ! DEB_BUILD_OPTIONS="nocheck parallel=$NPROC" \
    DEB_BUILD_PROFILES="$PROFILES" \
    dpkg-buildpackage -b -us -uc >"$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (full log: $OUT/build.log)"
fi
say "dpkg-buildpackage took `expr \`date +%s\` - $start` s"
# A ported patch that calls what its file no longer declares builds with
# a warning and truncates pointers: refused.
if grep -n 'warning: implicit declaration of function\|makes pointer from integer without a cast' \
    "$OUT/build.log" >"$WORK/implicit" 2>/dev/null; then
	sed 's/^/mkdeb:   /' "$WORK/implicit" >&2
	die "the build declares functions implicitly (above; $OUT/build.log): a patch needs a header"
fi
rm -f "$OUT"/*.deb "$OUT"/*.buildinfo "$OUT"/*.changes
for f in "$WORK"/*_"$FILEVERSION"_*.deb "$WORK"/*_"$FILEVERSION"_*.buildinfo \
    "$WORK"/*_"$FILEVERSION"_*.changes; do
	[ -f "$f" ] || die "dpkg-buildpackage wrote no `basename "$f"`"
	cp "$f" "$OUT/"
done
echo "$FILEVERSION" >"$OUT/version"
say "wrote $OUT:"
(cd "$OUT" && ls -l *.deb | sed 's/^/  /')
