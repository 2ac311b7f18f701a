#!/bin/sh
#
# check-releases.sh: build every other supported release and run our
# suites on it, and the cross-release check against this build.
#
# usage: check-releases.sh [-b] RELEASE [TARBALL-DIR]
#
# Run by "make check-releases" from the top directory, RELEASE being the
# configured one (build/hpn).  Each other release of patches/releases
# that has a series is built by make, with the same configure arguments,
# in build/releases/OTHER/ (its own tarball cache, hpn and stock trees);
# TARBALL-DIR, if given, holds openssh-OTHER.tar.gz files to use (tests
# and CI point it at local copies; the pins are checked as always).
# Each is built on its base (patches/releases: upstream's tarball or
# Debian's source package); where that base lacks published security
# fixes, make's refusal is checked and the release is then built with
# OPENSSH_UNFIXED=yes (tests only).
# Then regress/run-tests.sh runs SUITES (default: security basic interop
# chachapoly mtaes mtlife mtpeer mtchacha none noneswitch nonemac
# kexguess rekey mptcp stats translog window windowlong busy sftppipe
# sftpbatch streams sftpadv hpnpeer resume resumecut resumessh verdict memory
# cross) with HPN_BUILD and STOCK_BUILD on that
# release, HPN_PEER_BUILD on build/hpn and HPN_OTHER_RELEASE=yes: the suites
# exercise each hunk of the release's series and leave to make check
# what only our own files decide (lib.sh's other_release).
# With -b (make releases) it only builds them.
# OTHER_RELEASES (default: all of them) limits the run to the releases it
# lists.  With SUITES=openssh
# it runs OpenSSH's own regression suite on each (OPENSSH_TREE=stock for
# the unpatched twin).  The releases are built one after the other; our
# suites then run on all of them at once (CHECK_RELEASES_JOBS limits how
# many; 1 streams each release's output as before), each release's output
# printed whole when its batch ends.  Exits 1 if a build or a test failed;
# the last line sums up every release.

set -u
BUILD_ONLY=no
if [ "${1:-}" = -b ]; then
	BUILD_ONLY=yes
	shift
fi
CUR="$1"
DIR="${2:-}"
MAKE="${MAKE:-make}"
SUITES="${SUITES:-security basic interop chachapoly mtaes mtlife mtpeer mtchacha none noneswitch nonemac kexguess rekey mptcp stats translog window windowlong busy sftppipe sftpbatch streams sftpadv hpnpeer resume resumecut resumessh verdict memory cross}"
TOP=`pwd`
RELEASES="$TOP/patches/releases"
[ -f "$RELEASES" ] || { echo "check-releases: run me from the top directory" >&2; exit 2; }
[ -z "$DIR" ] || DIR=`cd "$DIR" && pwd` || exit 2

pin() {
	sed -e 's/#.*//' "$RELEASES" | awk -v v="$1" -v f="$2" '$1 == v { print $f }'
}

TREE="${OPENSSH_TREE:-hpn}"
case "$TREE" in
hpn|stock)	;;
*)		echo "check-releases: OPENSSH_TREE is hpn or stock" >&2; exit 2 ;;
esac

# The suites of each release run at once, CHECK_RELEASES_JOBS of them
# together (default: all; OpenSSH's own suite, itself in three workers: one
# at a time).  They wait on round trips and timeouts more than they use
# the CPU: on 2 cores two releases took 414 and 416 s together, against
# 367 and 365 s one after the other (2026-11-28).
case "$SUITES" in
*openssh*)	JOBS=${CHECK_RELEASES_JOBS:-1} ;;
*)		JOBS=${CHECK_RELEASES_JOBS:-99} ;;
esac
case "$JOBS" in
''|*[!0-9]*)	echo "check-releases: CHECK_RELEASES_JOBS is a number" >&2; exit 2 ;;
esac
WORK=`mktemp -d "${TMPDIR:-/tmp}/check-releases.XXXXXX"` || exit 1
trap 'rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

# run_suites RELEASE: our suites on RELEASE's build; the output also in
# $WORK/RELEASE.log.
run_suites() {
	_B="build/releases/$1"
	OPENSSH_TREE="$TOP/$_B/$TREE" \
	    OPENSSH_REGRESS_LOGS="$TOP/build/regress-logs/$1-$TREE" \
	    HPN_OTHER_RELEASE=yes \
	    HPN_BUILD="$TOP/$_B/hpn" STOCK_BUILD="$TOP/$_B/stock" \
	    HPN_TARBALL="$TOP/$_B/openssh-$1.tar.gz" HPN_OPENSSH="$1" \
	    HPN_PEER_BUILD="$TOP/build/hpn" \
	    sh "$TOP/regress/run-tests.sh" $SUITES | tee "$WORK/$1.log"
}

rc=0
summary=""
TESTED=""
for R in `sed -e 's/#.*//' "$RELEASES" | awk 'NF { print $1 }'`; do
	[ "$R" != "$CUR" ] && [ -f "$TOP/patches/$R/series" ] || continue
	case " ${OTHER_RELEASES:-$R} " in
	*" $R "*)	;;
	*)		continue ;;
	esac
	B="build/releases/$R"
	tb=""
	[ -n "$DIR" ] && [ -f "$DIR/openssh-$R.tar.gz" ] && tb="$DIR/openssh-$R.tar.gz"
	base=`pin $R 4`
	echo "check-releases: OpenSSH $R on $base in $B"
	set -- BUILD="$B" OPENSSH_VERSION="$R" \
	    OPENSSH_CONTENT_SHA256="`pin $R 2`" OPENSSH_SHA256="`pin $R 3`" \
	    OPENSSH_TARBALL="$tb" OPENSSH_BASE="$base" \
	    DEBIAN_SUITE="`echo "$base" | sed -n 's/^debian://p'`"
	# A release whose base lacks published security fixes is refused
	# by make; the suites then run on it built with OPENSSH_UNFIXED=yes,
	# which warns.  The refusal itself is checked here, once per tree.
	mkdir -p "$B"
	if [ ! -f "$B/hpn/.hpn-patched" ] &&
	    ! $MAKE "$@" OPENSSH_UNFIXED=no "$B/hpn/.hpn-patched" \
	    >"$B/gate.log" 2>&1; then
		if grep -q '^security: build OpenSSH' "$B/gate.log"; then
			echo "check-releases: $R on $base refused for users: `grep -c '^security: missing ' "$B/gate.log"` published fixes missing"
		else
			cat "$B/gate.log"
			summary="$summary
check-releases: $R: the build failed"
			rc=1
			continue
		fi
	fi
	if ! $MAKE "$@" OPENSSH_UNFIXED=yes all; then
		summary="$summary
check-releases: $R: the build failed"
		rc=1
		continue
	fi
	if [ $BUILD_ONLY = yes ]; then
		summary="$summary
check-releases: $R: built in $B"
		continue
	fi
	TESTED="$TESTED $R"
	[ $JOBS -gt 1 ] || run_suites $R
done

# The releases' suites, JOBS at a time (JOBS 1: run above), each
# release's output whole, in order, as its batch ends.
if [ $JOBS -gt 1 ]; then
	set -- $TESTED
else
	set --
fi
while [ $# -gt 0 ]; do
	batch=""
	while [ $# -gt 0 ] && [ `echo $batch | wc -w` -lt $JOBS ]; do
		run_suites $1 >"$WORK/$1.out" 2>&1 &
		batch="$batch $1"
		shift
	done
	wait
	for R in $batch; do
		cat "$WORK/$R.out"
	done
done
for R in $TESTED; do
	grep -q '^[0-9]* passed, 0 failed' "$WORK/$R.log" || rc=1
	summary="$summary
check-releases: $R: `tail -n 1 "$WORK/$R.log"`"
done
echo "$summary" | sed 1d
exit $rc
