#!/bin/sh
#
# t-deb.sh: the Debian packages (make check-deb; not part of make check).
#
# HPN_DEBIAN (default trixie) is the Debian release whose openssh is
# packaged: trixie (10.0p1) or bookworm (9.2p1).  Builds them with
# build-aux/mkdeb.sh into HPN_DEB_DIR (default build/deb-HPN_DEBIAN)
# unless that directory already holds them (make deb rebuilds them when an
# input changed), unpacks openssh-client, openssh-server and
# openssh-sftp-server with dpkg -x into the test directory -- the system's
# own OpenSSH, the interop peer of the other suites, is never touched --
# and runs the packaged sshd on 127.0.0.1 on a free port, with its own
# config and host key, against the packaged ssh, scp and sftp.
#
# HPN_DEBSRC names a directory with Debian's source package (else mkdeb.sh
# runs apt-get source).

HPN_NO_BUILD=1
. "`dirname "$0"`/lib.sh"

DEBIAN="${HPN_DEBIAN:-trixie}"
export DEBIAN
DEB_REL=`sh "$HPN_TOP/build-aux/mkdeb.sh" --release "$DEBIAN"` || exit 1
DEB_DIR="${HPN_DEB_DIR:-$HPN_TOP/build/deb-$DEBIAN}"
echo "# Debian $DEBIAN: openssh $DEB_REL with patches/$DEB_REL/"
# Our tag, as the patches define it: SSH_HPN "-hpn1" -> hpn1.
TAG=`sed -n 's/^+#define SSH_HPN[ 	]*"-\(.*\)"$/\1/p' \
    "$HPN_TOP"/patches/$DEB_REL/*.patch | head -n 1`
[ -n "$TAG" ] || die "no SSH_HPN tag in $HPN_TOP/patches/$DEB_REL"
PKGS="openssh-client openssh-server openssh-sftp-server"

# The system's own ssh and sshd (lib.sh's SYS_SSHD is pointed at the
# packaged sshd below), to check they are untouched at the end.
SYSTEM_SSH="$SYS_SSH"
SYSTEM_SSHD="$SYS_SSHD"
sys_before=`sha256sum "$SYSTEM_SSH" "$SYSTEM_SSHD" 2>/dev/null`
sys_pkgs_before=`dpkg-query -W openssh-client openssh-server 2>/dev/null`

# The packages: reuse, or build.
if [ -s "$DEB_DIR/version" ] && ls "$DEB_DIR"/openssh-server_*.deb \
    >/dev/null 2>&1; then
	echo "# reusing the packages in $DEB_DIR, `cat "$DEB_DIR/version"` (make deb rebuilds them when an input changed)"
else
	echo "# building the packages: build-aux/mkdeb.sh (a few minutes)"
	if sh "$HPN_TOP/build-aux/mkdeb.sh" "$HPN_TOP" "$DEB_DIR" "$TAG" \
	    ${HPN_DEBSRC:-} >"$TESTDIR/mkdeb.log" 2>&1; then
		pass build
	else
		tail -n 30 "$TESTDIR/mkdeb.log"
		fail build "mkdeb.sh failed: `tail -n 1 "$TESTDIR/mkdeb.log"`"
		exit 1
	fi
fi
V=`cat "$DEB_DIR/version" 2>/dev/null`

# Each package exists, is for this version, and the version is ours.
ROOT="$TESTDIR/root"
mkdir "$ROOT"
debs_ok=yes
for p in $PKGS; do
	deb=`ls "$DEB_DIR/${p}_${V}"_*.deb 2>/dev/null | head -n 1`
	if [ -z "$deb" ]; then
		fail "deb-$p" "no ${p}_${V}_*.deb in $DEB_DIR"
		debs_ok=""
		continue
	fi
	dv=`dpkg-deb -f "$deb" Version`
	case "$dv" in
	*"+$TAG")
		;;
	*)
		fail "deb-$p" "`basename "$deb"`: version $dv does not end in +$TAG"
		debs_ok=""
		continue
		;;
	esac
	if ! _out=`dpkg -x "$deb" "$ROOT" 2>&1`; then
		fail "deb-$p" "dpkg -x `basename "$deb"`: $_out"
		debs_ok=""
		continue
	fi
	pass "deb-$p"
done
[ -n "$debs_ok" ] || die "packages missing or wrong; nothing to run"

B="$ROOT/usr/bin"
SSHD="$ROOT/usr/sbin/sshd"
LIBEXEC="$ROOT/usr/lib/openssh"
# What 9.2p1 does differently: no sshd-session and sshd-auth (since 9.8p1
# and 10.0p1); sshd -V prints SSH_VERSION, without the portable release,
# Debian's version or our tag, as stock 9.2p1 does; Debian 12's sshd -T
# does not print DebianBanner.
case "$DEB_REL" in
9.*)	helpers=""
	sshd_v="OpenSSH_${DEB_REL%%p*}, "
	dbanner="" ;;
*)	helpers="$LIBEXEC/sshd-session $LIBEXEC/sshd-auth"
	sshd_v=""
	dbanner="debianbanner yes" ;;
esac
for f in "$B/ssh" "$B/scp" "$B/sftp" "$B/ssh-keygen" "$SSHD" \
    $helpers "$LIBEXEC/sftp-server"; do
	[ -x "$f" ] || die "the packages hold no ${f#$ROOT}"
done
# lib.sh makes keys with $HPN_BUILD/ssh-keygen: the packaged one.
HPN_BUILD="$B"

# ssh -V and sshd -V carry the tag (and Debian's version); 9.2p1's sshd
# -V prints what its stock twin does.
for prog in "$B/ssh" "$SSHD"; do
	n=`basename "$prog"`
	v=`"$prog" -V 2>&1`
	want="OpenSSH_*-$TAG Debian-*+$TAG, *"
	[ $n = ssh ] || [ -z "$sshd_v" ] || want="$sshd_v*"
	case "$v" in
	$want)	pass "version-$n" ;;
	*)	fail "version-$n" "$n -V says: $v" ;;
	esac
done

# The packaged sshd, started by us on loopback; Debian's build uses
# /run/sshd for privilege separation (the system flavour of lib.sh), and
# its sshd-session/sshd-auth (10.0p1)/sftp-server are the ones from the
# packages.
# TcpRcvBufPoll no: the window grows to its maximum at once, so the log
# shows deterministically whether the client counted as patched.
SYS_SSHD="$SSHD"
SYS_SFTP_SERVER="$LIBEXEC/sftp-server"
# The helper paths as KEYWORD=VALUE words (sshd_config accepts "=").
# shellcheck disable=SC2046
start_sshd deb system \
    $(sshd_helper_paths "$LIBEXEC" | sed 's/ /=/') \
    "LogLevel DEBUG2" \
    "NoneEnabled yes" \
    "AESCTRThreads 2" \
    "TcpRcvBufPoll no"
pass sshd-starts

# sshd -T of the packaged sshd prints our options (with the values set
# above and the defaults) and Debian's.
if "$SSHD" -T -f "$TESTDIR/sshd_config.deb" >"$TESTDIR/sshd-T" 2>&1; then
	missing=""
	for kv in "noneenabled yes" "nonemacenabled no" "disablemtaes no" \
	    "aesctrthreads 2" "hpndisabled no" "hpnbuffersize 262144" \
	    "tcprcvbufpoll no" "tcprcvbuf 0" ${dbanner:+"$dbanner"}; do
		grep -qx "$kv" "$TESTDIR/sshd-T" || missing="$missing, $kv"
	done
	if [ -z "$missing" ]; then
		pass sshd-T-options
	else
		fail sshd-T-options "sshd -T lacks: ${missing#, }"
	fi
else
	fail sshd-T-options "sshd -T failed: `tail -n 1 "$TESTDIR/sshd-T"`"
fi
# A bad value is refused with its line number.
printf 'AESCTRThreads 99\n' >"$TESTDIR/sshd_config.bad"
check_rejected sshd-bad-option 1 "sshd -t accepted AESCTRThreads 99" \
    "$SSHD" -t -f "$TESTDIR/sshd_config.bad" -h "$TESTDIR/host_ed25519"

SSH="$B/ssh"

# A command runs and its exit status comes back.
out=`"$SSH" -F "$SSH_CONFIG" hpntest 'echo hello-from-deb' 2>"$TESTDIR/err"`
if [ "x$out" = "xhello-from-deb" ]; then
	pass command
else
	fail command "got '$out': `tail -n 1 "$TESTDIR/err"`"
fi
"$SSH" -F "$SSH_CONFIG" hpntest 'exit 7' 2>"$TESTDIR/err"
rc=$?
if [ $rc -eq 7 ]; then
	pass exit-status
else
	fail exit-status "exit 7 came back as $rc: `tail -n 1 "$TESTDIR/err"`"
fi

# Both banners carry the tag: the server's as ssh sees it, the client's
# as sshd logs it.
n0=`log_mark`
"$SSH" -v -F "$SSH_CONFIG" hpntest true 2>"$TESTDIR/err.v"
if grep -q "remote software version OpenSSH_[^ ]*-$TAG\$" "$TESTDIR/err.v" ||
    grep -q "remote software version OpenSSH_[^ ]*-$TAG " "$TESTDIR/err.v"; then
	pass banner-server
else
	fail banner-server "`grep 'remote software version' "$TESTDIR/err.v"`"
fi
sleep 0.5
if log_since $n0 | grep -q "remote software version OpenSSH_[^ ]*-$TAG"; then
	pass banner-client
else
	fail banner-client "`log_since $n0 | grep 'remote software version'`"
fi

# 16 MiB up and down, byte-exact, with MT-AES-CTR on both sides (2
# threads forced), the packaged sshd growing the window for a patched
# client, and its transfer statistics line.
DATA=`make_data 16777216`
n0=`log_mark`
xfer_ssh 16M-aes256-ctr "$SSH" aes256-ctr "$DATA"
sleep 0.5
log_since $n0 >"$TESTDIR/log.16M"
check_has mtaes-server "$TESTDIR/log.16M" \
    'MT-AES-CTR: aes256-ctr in with 2 threads'
# A patched peer's window budget is the receive rate times the minimum
# round trip (on loopback, a few KiB at most) plus 8 MiB of headroom; with
# TcpRcvBufPoll no the window goes straight to the first budget's need,
# 8 MiB, and every budget's parts must add up, none past HPNBufferSize
# (256 MiB).
_why=`budget_lines "$TESTDIR/log.16M" 0 patched | {
	_n=0
	while read _b _nd _i _k _p _h _r _t _m _l _s _x _w _z; do
		_n=$((_n + 1))
		budget_problem $_b $_nd $_i $_k $_p $_h $_r $_t $_m $_l $_s \
		    $_x $_w $_z 8388608 268435456
	done
	[ $_n -gt 0 ] || echo "no patched-peer budget logged"
} | head -n 1`
if ! grep -q "peer SSH-2.0-OpenSSH_[^ ]*-$TAG is patched" "$TESTDIR/log.16M" ||
    ! grep -q 'window 2097152 grows to 8388608 (' "$TESTDIR/log.16M"; then
	fail window-patched-peer "`grep -E 'peer .* is|grows to' "$TESTDIR/log.16M" | head -n 2`"
elif [ -n "$_why" ]; then
	fail window-patched-peer "$_why"
else
	pass window-patched-peer
fi
check_has transfer-stats "$TESTDIR/log.16M" \
    'Transfer stats: .* bytes_in=16777216 '

# Debian's stock client (the system's) counts as stock: capped window.
# 4 MiB, so that the upload turns the 2 MiB window over and it grows.
if [ -x "$SYS_SSH" ]; then
	n0=`log_mark`
	xfer_ssh stock-client "$SYS_SSH" aes128-ctr "`make_data 4194304`"
	sleep 0.5
	if log_since $n0 | grep -q 'is stock' &&
	    log_since $n0 | grep -q 'window 2097152 grows to 8257536'; then
		pass window-stock-peer
	else
		fail window-stock-peer "`log_since $n0 | grep -E 'peer .* is|grows to' | head -n 2`"
	fi
else
	skip window-stock-peer "no system ssh at $SYS_SSH"
fi

# The none cipher after authentication, both sides opting in.
n0=`log_mark`
small=`make_data 1048576`
up="$TESTDIR/none.up"
if "$SSH" -F "$SSH_CONFIG" -o NoneEnabled=yes -o NoneSwitch=yes hpntest \
    "cat > $up" <"$small" 2>"$TESTDIR/err.none" &&
    _why=`same_file "$small" "$up"`; then
	sleep 0.5
	if grep -q 'WARNING: ENABLED NONE CIPHER' "$TESTDIR/err.none" &&
	    log_since $n0 | grep -q 'None cipher enabled for 127.0.0.1'; then
		pass none-cipher
	else
		fail none-cipher "no none-cipher warning / log line"
	fi
else
	fail none-cipher "${_why:-ssh failed: `tail -n 1 "$TESTDIR/err.none"`}"
fi

# scp and sftp from the packages, with the packaged sftp-server.
xfer_scp scp "$B/scp" "$SSH" "$small"
xfer_sftp sftp "$B/sftp" "$SSH" "$small"

stop_sshd

# The system's own OpenSSH is untouched.
if [ "x`sha256sum "$SYSTEM_SSH" "$SYSTEM_SSHD" 2>/dev/null`" = "x$sys_before" ] &&
    [ "x`dpkg-query -W openssh-client openssh-server 2>/dev/null`" = \
    "x$sys_pkgs_before" ]; then
	pass system-untouched
else
	fail system-untouched "the system's ssh/sshd changed during the test"
fi
