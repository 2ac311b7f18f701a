#!/bin/sh
#
# build-hpnssh.sh: build HPN-SSH (the HPN community's fork, its hpn-18.8.0
# tag) as a peer for the tests and an anchor for the benchmarks: never a
# source of the product.  make hpnssh-peer runs it.
#
# usage: build-hpnssh.sh [TARBALL] [DIR]
#
# TARBALL defaults to ../shared/hpn-ssh/hpn-ssh-18.8.0.tar.gz (or
# /work/shared/...), checked against its SHA-256; DIR to build/hpnssh.
# It is built in DIR/src and installed in DIR/inst; DIR/links holds the
# programs under OpenSSH's names (ssh, sshd, sshd-session, sshd-auth,
# scp, sftp, sftp-server, ssh-keygen) and a link to its Makefile, so that
# regress/lib.sh's start_sshd runs it as a "peer" build.  Its sshd wants
# the system user hpnsshd: created where we are root.  A build already
# there from the same tarball is kept.  Exit status 2 if the tarball is
# missing (the tests then skip, saying so).

set -u
SHA256=07890954694ec4fdd4b82412a181436dd8b0544351d35bce6e624fd744a044d3
TOP=`cd "\`dirname "$0"\`/.." && pwd`
TARBALL="${1:-}"
DIR="${2:-$TOP/build/hpnssh}"

if [ -z "$TARBALL" ]; then
	for t in "$TOP/../shared/hpn-ssh/hpn-ssh-18.8.0.tar.gz" \
	    /work/shared/hpn-ssh/hpn-ssh-18.8.0.tar.gz; do
		[ -f "$t" ] && TARBALL="$t" && break
	done
fi
if [ -z "$TARBALL" ] || [ ! -f "$TARBALL" ]; then
	echo "build-hpnssh: no HPN-SSH 18.8.0 tarball (give its path)" >&2
	exit 2
fi
sum=`sha256sum <"$TARBALL" | cut -c1-64`
if [ "$sum" != "$SHA256" ]; then
	echo "build-hpnssh: $TARBALL: SHA-256 $sum, not hpn-18.8.0's" >&2
	exit 1
fi
if [ -f "$DIR/.built" ] && [ "`cat "$DIR/.built"`" = "$sum" ] &&
    [ -x "$DIR/links/sshd" ]; then
	echo "build-hpnssh: $DIR is built"
	exit 0
fi

rm -rf "$DIR"
mkdir -p "$DIR/src" "$DIR/links"
DIR=`cd "$DIR" && pwd`
tar -xzf "$TARBALL" -C "$DIR/src" --strip-components=1 || exit 1
cd "$DIR/src" || exit 1
echo "build-hpnssh: building HPN-SSH in $DIR/src (log: $DIR/build.log)"
{ autoreconf -fi &&
  ./configure --prefix="$DIR/inst" --with-privsep-path=/var/empty \
      --with-privsep-user=sshd &&
  make -j`nproc 2>/dev/null || echo 1` &&
  make install-nokeys; } >"$DIR/build.log" 2>&1 || {
	tail -n 20 "$DIR/build.log" >&2
	echo "build-hpnssh: the build failed" >&2
	exit 1
}
for p in ssh:bin/hpnssh scp:bin/hpnscp sftp:bin/hpnsftp \
    ssh-keygen:bin/hpnssh-keygen sshd:sbin/hpnsshd \
    sshd-session:libexec/hpnsshd-session sshd-auth:libexec/hpnsshd-auth \
    sftp-server:libexec/hpnsftp-server; do
	ln -sf "$DIR/inst/${p#*:}" "$DIR/links/${p%%:*}"
done
ln -sf "$DIR/src/Makefile" "$DIR/links/Makefile"
if [ "`id -u`" = 0 ] && ! id hpnsshd >/dev/null 2>&1; then
	useradd --system --no-create-home --home-dir /var/empty \
	    --shell /usr/sbin/nologin hpnsshd ||
	    echo "build-hpnssh: cannot add the user hpnsshd" >&2
fi
echo "$sum" >"$DIR/.built"
echo "build-hpnssh: `"$DIR/links/ssh" -V 2>&1`"
