#!/bin/sh
#
# add-deb-src.sh: let apt fetch Debian's openssh source package for make
# deb: add a deb-src entry for a Debian release and run apt-get update.
#
# usage: add-deb-src.sh DEBIAN [MIRROR]
#
# DEBIAN is trixie or bookworm (the releases make deb builds); MIRROR
# defaults to http://deb.debian.org/debian, and SECURITY_MIRROR (for
# DEBIAN-security) to http://deb.debian.org/debian-security.  Writes
# /etc/apt/sources.list.d/DEBIAN-src.sources (deb-src only: no binary
# package changes), unless an entry with that name is there already.
# Needs root.

set -eu
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: add-deb-src.sh DEBIAN [MIRROR]" >&2; exit 2; }
DEBIAN="$1"
MIRROR="${2:-http://deb.debian.org/debian}"
case "$DEBIAN" in
trixie|bookworm)	;;
*)	echo "add-deb-src: unknown Debian release $DEBIAN (trixie or bookworm)" >&2
	exit 1 ;;
esac
[ "`id -u`" = 0 ] || { echo "add-deb-src: run me as root" >&2; exit 1; }
F="/etc/apt/sources.list.d/$DEBIAN-src.sources"
if [ -e "$F" ]; then
	echo "add-deb-src: $F exists; not changed"
else
	cat >"$F" <<SRC
Types: deb-src
URIs: $MIRROR
Suites: $DEBIAN $DEBIAN-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: ${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
Suites: $DEBIAN-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	echo "add-deb-src: wrote $F"
fi
apt-get update -qq
