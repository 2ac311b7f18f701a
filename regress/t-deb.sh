#!/bin/sh
#
# t-deb.sh: the Debian packages (make check-deb; not part of make check).
#
# HPN_DEBIAN (default trixie) is the Debian release the packages are for,
# HPN_DEB_RELEASE the OpenSSH release packaged (default: DEBIAN's own,
# trixie's 10.0p1 or bookworm's 9.2p1; make check-deb passes the release
# make deb builds, 10.5p1 on Debian's packaging).  Builds them with
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
#
# Then, as root (HPN_DEB_INSTALL=no skips it): lintian, and the packages
# installed over Debian's own (dpkg -i, apt-get install -f), the installed
# sshd against the installed ssh and Debian's own client, Debian's
# regression tests from openssh-tests (HPN_DEB_REGRESS: the tests, "all"
# for the whole suite), then purged, and Debian's own packages (apt-get
# download of the installed version) and /etc/ssh put back.

HPN_NO_BUILD=1
. "`dirname "$0"`/lib.sh"

DEBIAN="${HPN_DEBIAN:-trixie}"
export DEBIAN
DEB_REL="${HPN_DEB_RELEASE:-`sh "$HPN_TOP/build-aux/mkdeb.sh" --release "$DEBIAN"`}" ||
    exit 1
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
	if OPENSSH_RELEASE=$DEB_REL \
	    sh "$HPN_TOP/build-aux/mkdeb.sh" "$HPN_TOP" "$DEB_DIR" "$TAG" \
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
	*"+$TAG"|*":$DEB_REL-0+$TAG~deb"[0-9]*u[0-9]*)
		;;
	*)
		fail "deb-$p" "`basename "$deb"`: version $dv does not end in +$TAG (or is not $DEB_REL-0+$TAG~debNuM)"
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

# The version sorts above Debian's own: the openssh-client installed here
# and, for the upstream route, the package whose packaging it took (apt
# upgrades to ours); and below Debian's own upload of the same upstream
# release, 1:RELEASE-1 (a Debian package of it replaces ours), Debian 12's
# below Debian 13's (a dist-upgrade moves on).
fullv=`dpkg-deb -f "\`ls "$DEB_DIR/openssh-client_${V}"_*.deb\`" Version`
above="`dpkg-query -W -f '${Version}' openssh-client 2>/dev/null`"
below=""
case "$fullv" in
*":$DEB_REL-0+$TAG~deb"[0-9]*u[0-9]*)
	epoch=`echo "$fullv" | sed 's/:.*//'`
	above="$above `sed -n 's/^# packaging: [a-z]* [^ ]* //p' \
	    "$HPN_TOP/build-aux/deb-port/$DEB_REL/fates"`"
	below="$epoch:$DEB_REL-1"
	case "$fullv" in
	*~deb12u*)	below="$below `echo "$fullv" | sed 's/~deb12u/~deb13u/'`" ;;
	esac
	;;
esac
bad=""
for a in $above; do
	case "$a" in
	*"+$TAG"*)	continue ;;	# ours, installed before
	esac
	dpkg --compare-versions "$fullv" gt "$a" || bad="$bad, not above $a"
done
for b in $below; do
	dpkg --compare-versions "$fullv" lt "$b" || bad="$bad, not below $b"
done
if [ -z "$above" ]; then
	skip version-order "no Debian openssh-client here to compare with"
elif [ -z "$bad" ]; then
	echo "# version-order: $fullv above" $above${below:+"; below"} $below
	pass version-order
else
	fail version-order "$fullv$bad"
fi

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
	want="OpenSSH_*-$TAG Debian-*+$TAG*, *"
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
		grep -qix "$kv" "$TESTDIR/sshd-T" || missing="$missing, $kv"
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

# The packages installed, as a packager's user would: over Debian's own,
# then purged and Debian's put back.  Root only; the system's OpenSSH is
# restored on any exit.
if [ "x${HPN_DEB_INSTALL:-yes}" = xno ]; then
	skip installed "HPN_DEB_INSTALL=no"
	exit 0
fi
if [ "`id -u`" != 0 ]; then
	skip installed "not root: the packages are not installed"
	exit 0
fi
DEBIAN_FRONTEND=noninteractive
export DEBIAN_FRONTEND
ALL="openssh-client openssh-server openssh-sftp-server openssh-tests"

# lintian: no errors (warnings are printed).
if ! command -v lintian >/dev/null 2>&1; then
	apt-get install -y -qq --no-install-recommends lintian \
	    >"$TESTDIR/apt-lintian.log" 2>&1 ||
	    fail lintian "cannot install lintian: `tail -n 1 "$TESTDIR/apt-lintian.log"`"
fi
if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error --tag-display-limit 0 \
	    "$DEB_DIR"/*_"$V"_*.deb >"$TESTDIR/lintian.log" 2>&1
	rc=$?
	sed -n 's/^\(E\|W\): /# lintian: &/p' "$TESTDIR/lintian.log" |
	    sort | uniq -c | sort -rn | head -n 20
	if [ $rc -eq 0 ] && ! grep -q '^E: ' "$TESTDIR/lintian.log"; then
		pass lintian
	else
		fail lintian "`grep '^E: ' "$TESTDIR/lintian.log" | head -n 3`"
	fi
fi

# Debian's own packages of the installed version, to go back to, and its
# client, to test against.
SYSV=`dpkg-query -W -f '${Version}' openssh-client 2>/dev/null`
[ -n "$SYSV" ] || die "openssh-client is not installed: nothing to install over"
DEBS="$TESTDIR/debian-debs"
mkdir "$DEBS"
if ! (cd "$DEBS" && apt-get download openssh-client="$SYSV" \
    openssh-server="$SYSV" openssh-sftp-server="$SYSV") \
    >"$TESTDIR/download.log" 2>&1; then
	tail -n 3 "$TESTDIR/download.log"
	die "cannot download Debian's openssh $SYSV to go back to: nothing installed"
fi
DROOT="$TESTDIR/debian-root"
dpkg -x "$DEBS"/openssh-client_*.deb "$DROOT" ||
    die "dpkg -x Debian's openssh-client failed"
tar -C / -cpf "$TESTDIR/etc-ssh.tar" etc/ssh 2>/dev/null ||
    die "cannot save /etc/ssh"
# dpkg_state: "package version status" of the four packages.
dpkg_state() {
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' $ALL \
	    2>/dev/null | sed 's/ *$//'
}
# purge_ours: dpkg --purge of the four packages, dependents first.
purge_ours() {
	dpkg --purge openssh-tests openssh-server openssh-sftp-server \
	    openssh-client
}
restored=""
restore_debian() {
	[ -z "$restored" ] || return 0
	restored=yes
	purge_ours >/dev/null 2>&1
	dpkg -i "$DEBS"/*.deb >"$TESTDIR/restore.log" 2>&1
	tar -C / -xpf "$TESTDIR/etc-ssh.tar" 2>/dev/null
}
hpn_on_exit restore_debian

# dpkg -i over Debian's packages; apt finds nothing missing.  What the
# packages depend on that this machine lacks (a container has no systemd:
# systemd-standalone-sysusers) comes from the archive first, as on a
# machine that has it; the test removes it again at the end.
pkgs=""
for p in $PKGS; do
	pkgs="$pkgs `ls "$DEB_DIR/${p}_${V}"_*.deb`"
done
dpkg-query -W -f '${Package}\n' | sort >"$TESTDIR/packages.before"
# shellcheck disable=SC2086
deps=`for d in $pkgs; do dpkg-deb -f "$d" Pre-Depends Depends; done |
    sed 's/^[A-Za-z-]*: //' | tr ',' '\n' | sed 's/^ *//; /^$/d' |
    grep -v '^openssh-' | sort -u | paste -sd, -`
if apt-get satisfy -y -qq --no-install-recommends "$deps" \
    >"$TESTDIR/satisfy.log" 2>&1; then
	pass dependencies
else
	fail dependencies "`grep -E 'Depends|^E:' "$TESTDIR/satisfy.log" | head -n 2`"
fi
# shellcheck disable=SC2086
if dpkg -i $pkgs >"$TESTDIR/dpkg-i.log" 2>&1; then
	pass dpkg-install
else
	fail dpkg-install "`grep -i 'error\|depends on' "$TESTDIR/dpkg-i.log" | head -n 3`"
fi
apt-get -s install -f >"$TESTDIR/apt-f.log" 2>&1
if grep -q '^0 upgraded, 0 newly installed, 0 to remove' "$TESTDIR/apt-f.log"; then
	pass apt-install-f
else
	fail apt-install-f "`grep -E '^(Inst|Remv|[0-9]+ upgraded)' "$TESTDIR/apt-f.log" | head -n 5`"
fi
# openssh-tests, with what the regression tests run (python3-twisted,
# putty-tools), from the archive.
apt-get install -y -qq --no-install-recommends \
    "`ls "$DEB_DIR/openssh-tests_${V}"_*.deb`" >"$TESTDIR/apt-tests.log" 2>&1 ||
    fail install-openssh-tests "`tail -n 2 "$TESTDIR/apt-tests.log"`"
state=`dpkg_state`
if [ "`printf '%s\n' "$state" | grep -c "$V ii\$"`" = 4 ]; then
	pass installed-version
else
	fail installed-version "dpkg says: `echo $state`"
fi
for prog in /usr/bin/ssh /usr/sbin/sshd; do
	v=`$prog -V 2>&1`
	case "$v" in
	"OpenSSH_$DEB_REL-$TAG Debian-"*"+$TAG"*", "*)
		pass "installed-version-`basename $prog`" ;;
	*)	fail "installed-version-`basename $prog`" "$prog -V says: $v" ;;
	esac
done

# The installed sshd, started here on a free port with its own config
# (services do not start here), against the installed ssh and Debian's
# own client.
SYS_SSHD=/usr/sbin/sshd
SYS_SFTP_SERVER=/usr/lib/openssh/sftp-server
HPN_BUILD=/usr/bin
# shellcheck disable=SC2046
start_sshd installed system \
    $(sshd_helper_paths /usr/lib/openssh | sed 's/ /=/') \
    "LogLevel DEBUG2"
pass installed-sshd-starts
for client in /usr/bin/ssh "$DROOT/usr/bin/ssh"; do
	case "$client" in
	/usr/*)	name=installed-ssh ;;
	*)	name=debian-ssh ;;
	esac
	out=`"$client" -F "$SSH_CONFIG" hpntest 'echo ok; exit 3' 2>"$TESTDIR/err.$name"`
	rc=$?
	if [ $rc -eq 3 ] && [ "x$out" = "xok" ]; then
		pass "$name-to-installed-sshd"
	else
		fail "$name-to-installed-sshd" "rc $rc, '$out': `tail -n 1 "$TESTDIR/err.$name"`"
	fi
done
xfer_ssh installed-debian-client "$DROOT/usr/bin/ssh" aes128-ctr "`make_data 4194304`"
stop_sshd

# Debian's regression tests (openssh-tests), as its autopkgtest runs them,
# on the installed programs: a set that needs no network by default.
REGRESS="${HPN_DEB_REGRESS:-connect proxy-connect exit-status envpass transfer banner rekey stderr-data stderr-after-eof broken-pipe try-ciphers yes-head login-timeout agent keyscan sftp sftp-chroot sftp-cmds scp scp3 keygen-change key-options sshcfgparse cfgparse cfgmatch dropbear-ciphers putty-transfer}"
if [ ! -x /usr/lib/openssh/regress/run-tests ]; then
	fail openssh-tests "no /usr/lib/openssh/regress/run-tests"
else
	mkdir "$TESTDIR/regress-run"
	if [ "x$REGRESS" = xall ]; then
		set -- tests
	else
		set -- t-exec LTESTS="$REGRESS"
	fi
	start=`date +%s`
	if PATH="/usr/sbin:$PATH" /usr/lib/openssh/regress/run-tests \
	    "$TESTDIR/regress-run" "$@" SUDO= \
	    >"$TESTDIR/regress.log" 2>&1; then
		echo "# openssh-tests: `grep -c '^ok ' "$TESTDIR/regress.log"` tests ok in `expr \`date +%s\` - $start` s"
		pass openssh-tests
	else
		grep -E '^(ok|FAIL|failed)' "$TESTDIR/regress.log" | tail -n 5
		fail openssh-tests "`grep -iE 'fail' "$TESTDIR/regress.log" | head -n 2`"
	fi
fi

# GSSAPI, as Debian's ssh-gssapi autopkgtest checks it but without
# systemd: a Kerberos realm of our own (KDC on a free loopback port, its
# database, keytab, krb5.conf and credential cache in the test
# directory; krb5-kdc, krb5-admin-server and krb5-user from the archive),
# the installed sshd with GSSAPIKeyExchange, and the installed ssh
# authenticating with gssapi-keyex after a GSS key exchange, and with
# gssapi-with-mic after an ordinary one: gssapi.patch as ported to 10.5p1.
# krb5_install: install the Kerberos packages without starting their
# services (a policy-rc.d of our own, where the system has none, for the
# installation only: the test's KDC is started by hand).
krb5_install() {
	_k_rc=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d &&
		    chmod 755 /usr/sbin/policy-rc.d && _k_rc=yes
	fi
	apt-get install -y -qq --no-install-recommends krb5-kdc \
	    krb5-admin-server krb5-user >"$TESTDIR/apt-krb5.log" 2>&1
	_k_st=$?
	[ -z "$_k_rc" ] || rm -f /usr/sbin/policy-rc.d
	return $_k_st
}
if [ "x${HPN_DEB_GSSAPI:-yes}" = xno ]; then
	skip gssapi "HPN_DEB_GSSAPI=no"
elif ! krb5_install; then
	fail gssapi "cannot install krb5-kdc: `tail -n 1 "$TESTDIR/apt-krb5.log"`"
else
	K="$TESTDIR/krb5"
	mkdir "$K"
	REALM=EXAMPLE.FAKE
	GSSHOST=sshd-gss.example.fake
	KPORT=`hpn_free_port`
	cat >"$K/krb5.conf" <<EOT
[libdefaults]
	default_realm = $REALM
	rdns = false
	dns_canonicalize_hostname = false
	dns_lookup_kdc = false
	dns_lookup_realm = false
[realms]
	$REALM = {
		kdc = 127.0.0.1:$KPORT
	}
[domain_realm]
	.example.fake = $REALM
EOT
	cat >"$K/kdc.conf" <<EOT
[kdcdefaults]
	kdc_ports = $KPORT
	kdc_tcp_ports = $KPORT
[realms]
	$REALM = {
		database_name = $K/principal
		key_stash_file = $K/stash
		acl_file = $K/kadm5.acl
	}
EOT
	: >"$K/kadm5.acl"
	KRB5_CONFIG="$K/krb5.conf"
	KRB5_KDC_PROFILE="$K/kdc.conf"
	KRB5_KTNAME="FILE:$K/keytab"
	KRB5CCNAME="FILE:$K/ccache"
	export KRB5_CONFIG KRB5_KDC_PROFILE KRB5_KTNAME KRB5CCNAME
	if kdb5_util create -s -r $REALM -P kdc-master-pw >"$K/setup.log" 2>&1 &&
	    kadmin.local -r $REALM -q "addprinc -pw user-pw $USER@$REALM" \
	    >>"$K/setup.log" 2>&1 &&
	    kadmin.local -r $REALM -q "addprinc -randkey host/$GSSHOST@$REALM" \
	    >>"$K/setup.log" 2>&1 &&
	    kadmin.local -r $REALM -q "ktadd -k $K/keytab host/$GSSHOST@$REALM" \
	    >>"$K/setup.log" 2>&1; then
		krb5kdc -n -r $REALM >"$K/kdc.log" 2>&1 &
		KDC_PID=$!
		hpn_track_pid $KDC_PID
		wait_until 5 sh -c "echo user-pw | kinit $USER@$REALM" \
		    >"$K/kinit.log" 2>&1
		if ! klist >"$K/klist" 2>&1; then
			fail gssapi-kinit "`tail -n 2 "$K/kinit.log" "$K/kdc.log"`"
		else
			pass gssapi-kinit
			# shellcheck disable=SC2046
			start_sshd gss system \
			    $(sshd_helper_paths /usr/lib/openssh | sed 's/ /=/') \
			    "GSSAPIAuthentication yes" "GSSAPIKeyExchange yes" \
			    "GSSAPIStrictAcceptorCheck no" "LogLevel DEBUG2"
			for m in gssapi-keyex gssapi-with-mic; do
				kx=yes
				[ $m = gssapi-keyex ] || kx=no
				n0=`log_mark`
				out=`/usr/bin/ssh -v -F "$SSH_CONFIG" \
				    -o GSSAPIAuthentication=yes \
				    -o GSSAPIKeyExchange=$kx \
				    -o GSSAPIServerIdentity=$GSSHOST \
				    -o PreferredAuthentications=$m \
				    hpntest 'echo gss-ok' 2>"$TESTDIR/err.$m"`
				sleep 0.3
				if [ "x$out" != xgss-ok ]; then
					fail "$m" "`grep -i 'gss\|denied\|kex' "$TESTDIR/err.$m" | tail -n 3`"
				elif ! grep -q "Authenticated .* using \"$m\"\|Authentication succeeded ($m)" \
				    "$TESTDIR/err.$m"; then
					fail "$m" "not authenticated by $m: `grep -i authenticat "$TESTDIR/err.$m" | tail -n 2`"
				elif [ $m = gssapi-keyex ] &&
				    ! grep -q 'kex: algorithm: gss-' "$TESTDIR/err.$m"; then
					fail "$m" "no GSS key exchange: `grep 'kex: algorithm' "$TESTDIR/err.$m"`"
				elif [ $m = gssapi-with-mic ] &&
				    grep -q 'kex: algorithm: gss-' "$TESTDIR/err.$m"; then
					fail "$m" "a GSS key exchange with GSSAPIKeyExchange=no"
				elif ! log_since $n0 | grep -q "Accepted $m for $USER"; then
					fail "$m" "sshd: `log_since $n0 | grep -i 'accepted\|gss' | tail -n 2`"
				else
					echo "# $m: `grep 'kex: algorithm' "$TESTDIR/err.$m" | sed 's/.*kex: //'`"
					pass "$m"
				fi
			done
			stop_sshd
		fi
		kill $KDC_PID 2>/dev/null
		wait $KDC_PID 2>/dev/null
		hpn_untrack_pid $KDC_PID
	else
		fail gssapi-realm "`tail -n 3 "$K/setup.log"`"
	fi
	unset KRB5_CONFIG KRB5_KDC_PROFILE KRB5_KTNAME KRB5CCNAME
fi

# Purged: nothing of ours left; Debian's back, as it was.
purge_ours >"$TESTDIR/purge.log" 2>&1 ||
    fail purge "`tail -n 2 "$TESTDIR/purge.log"`"
left=""
for f in /usr/bin/ssh /usr/sbin/sshd /usr/lib/openssh /etc/ssh/sshd_config \
    /etc/ssh/ssh_config /etc/ssh/moduli; do
	[ ! -e "$f" ] || left="$left $f"
done
if [ -z "$left" ] && [ -z "`dpkg_state | grep -v ' [pu]n$'`" ]; then
	pass purge
else
	fail purge "left:$left `dpkg_state | grep -v ' [pu]n$'`"
fi
restore_debian
# What openssh-tests pulled in goes too.
dpkg-query -W -f '${Package}\n' | sort >"$TESTDIR/packages.after"
extra=`comm -13 "$TESTDIR/packages.before" "$TESTDIR/packages.after"`
# shellcheck disable=SC2086
[ -z "$extra" ] || apt-get purge -y -qq $extra >"$TESTDIR/purge-extra.log" 2>&1 ||
    fail purge-test-dependencies "`tail -n 2 "$TESTDIR/purge-extra.log"`"
if [ "`dpkg_state | grep -c " $SYSV ii\$"`" = 3 ] &&
    [ "x`/usr/bin/ssh -V 2>&1 | sed 's/,.*//'`" = \
    "x`"$DROOT/usr/bin/ssh" -V 2>&1 | sed 's/,.*//'`" ]; then
	pass debian-reinstalled
else
	fail debian-reinstalled "`dpkg_state | tr '\n' ' '`; `tail -n 2 "$TESTDIR/restore.log"`"
fi
