#!/bin/sh
#
# fixes-gate.sh: let a tree be built only if it carries OpenSSH's
# published security fixes (build-aux/check-fixes.sh, patches/security).
#
# usage: fixes-gate.sh RELEASE BASE UNFIXED TREE
#        fixes-gate.sh --warn TREE
#        fixes-gate.sh --refuse-install TREE
#
# The first form checks TREE (the patched tree, before it is built).  A
# missing fix stops the build with the list and the supported route,
# unless UNFIXED is "yes" (--enable-unfixed-openssh, tests only): then
# the list goes to TREE/.hpn-unfixed and a warning is printed.  --warn
# repeats that warning for a built tree (every make); --refuse-install
# fails if TREE has the list.

set -u
HERE=`cd "\`dirname "$0"\`" && pwd`
DEFAULT=`sed -n 's/^OPENSSH_DEFAULT_VERSION=//p' "$HERE/../configure.ac"`

warn() {
	echo "WARNING: ${1%.tmp} lacks these published security fixes:" >&2
	sed 's/^/WARNING:   /' "$1/.hpn-unfixed" >&2
	echo "WARNING: it was built with --enable-unfixed-openssh: for tests only, never install it" >&2
}

case "${1:-}" in
--warn)
	[ $# -eq 2 ] || { echo "usage: fixes-gate.sh --warn TREE" >&2; exit 2; }
	[ ! -f "$2/.hpn-unfixed" ] || warn "$2"
	exit 0
	;;
--refuse-install)
	[ $# -eq 2 ] || { echo "usage: fixes-gate.sh --refuse-install TREE" >&2; exit 2; }
	if [ -f "$2/.hpn-unfixed" ]; then
		warn "$2"
		echo "make install: refusing to install a build that lacks published security fixes" >&2
		exit 1
	fi
	exit 0
	;;
esac

[ $# -eq 4 ] || { echo "usage: fixes-gate.sh RELEASE BASE UNFIXED TREE" >&2; exit 2; }
R="$1"
BASE="$2"
UNFIXED="$3"
TREE="$4"

out=`sh "$HERE/check-fixes.sh" "$R" "$BASE" "$TREE" 2>&1`
rc=$?
case $rc in
0)
	echo "$out" | tail -n 1
	rm -f "$TREE/.hpn-unfixed"
	exit 0
	;;
1)
	echo "$out" | sed -n 's/^missing //p' >"$TREE/.hpn-unfixed"
	if [ "x$UNFIXED" = xyes ]; then
		warn "$TREE"
		exit 0
	fi
	echo "$out" | grep -v '^carried ' | sed 's/^/security: /' >&2
	case "$BASE" in
	debian:*)
		what="Debian `echo $BASE | sed 's/^debian://'`'s `sed -n '1s/^openssh (\([^)+]*+[^)+]*\).*/\1/p' "$TREE/debian/changelog" 2>/dev/null`"
		again=" Once Debian publishes these fixes, remove build/debian-$R and run make again."
		;;
	*)
		what="upstream's $R"
		again=""
		;;
	esac
	echo "security: OpenSSH $R from $what lacks the published security fixes above: an ssh and sshd built from it would be known-vulnerable." >&2
	echo "security: build OpenSSH $DEFAULT instead (./configure with no --with-openssh-version), which carries them.$again" >&2
	echo "security: (--enable-unfixed-openssh builds it anyway, for tests only.)" >&2
	rm -f "$TREE/.hpn-unfixed"
	exit 1
	;;
*)
	echo "$out" >&2
	echo "security: patches/security disagrees with the tree $TREE" >&2
	exit 1
	;;
esac
