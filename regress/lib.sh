#!/bin/sh
#
# lib.sh: the hpn-patches test harness, sourced by every regress/t-*.sh.
#
# It starts sshd processes on 127.0.0.1 with keys and configs made in a
# temporary directory, as whoever runs it (root or not), and cleans up on
# every exit path, killing only the processes it started.
#
# Results: each check calls pass, fail or skip with a name.  They print
# "ok - NAME", "not ok - NAME: WHY" or "skip - NAME: WHY" and, when
# HPN_RESULTS names a file, append "PASS NAME" etc. to it for the runner.

HPN_TOP="${HPN_TOP:-`cd "\`dirname "$0"\`/.." && pwd`}"
HPN_BUILD="${HPN_BUILD:-$HPN_TOP/build/hpn}"
STOCK_BUILD="${STOCK_BUILD:-$HPN_TOP/build/stock}"
# The OpenSSH release under test (make passes it): else the one the
# patched tree's stamp names, else the one configure chose.
HPN_OPENSSH="${HPN_OPENSSH:-`cat "$HPN_BUILD/.hpn-patched" 2>/dev/null`}"
[ -n "$HPN_OPENSSH" ] || HPN_OPENSSH=`sed -n 's/^OPENSSH_VERSION=[ 	]*//p' \
    "$HPN_TOP/Makefile" 2>/dev/null`
HPN_PATCHDIR="$HPN_TOP/patches/$HPN_OPENSSH"
# What the patched programs of that release call themselves, from the
# unpatched twin's version.h: "ssh -V" says OpenSSH_10.0p2-hpn1 (10.0p1's
# version.h says p2), the banner SSH-2.0-OpenSSH_10.0-hpn1.
_hpn_v=`sed -n 's/^#define SSH_VERSION[ 	]*"\(.*\)"$/\1/p' \
    "$STOCK_BUILD/version.h" 2>/dev/null`
_hpn_p=`sed -n 's/^#define SSH_PORTABLE[ 	]*"\(.*\)"$/\1/p' \
    "$STOCK_BUILD/version.h" 2>/dev/null`
HPN_SSH_V="$_hpn_v$_hpn_p-hpn1"
HPN_BANNER_V="$_hpn_v-hpn1"
# Debian's package-versioning.patch (a Debian base) puts SSH_RELEASE or
# SSH_RELEASE_MINIMUM, portable suffix included, in the banner too.
if grep -q 'debian_banner ? SSH_RELEASE' "$STOCK_BUILD/kex.c" 2>/dev/null; then
	HPN_BANNER_V="$HPN_SSH_V"
fi
HPN_RESULTS="${HPN_RESULTS:-/dev/null}"
SUITE="${SUITE:-`basename "$0" .sh | sed 's/^t-//'`}"

# Debian's own OpenSSH: the independent peer for interop tests.
SYS_SSH="${SYS_SSH:-/usr/bin/ssh}"
SYS_SCP="${SYS_SCP:-/usr/bin/scp}"
SYS_SFTP="${SYS_SFTP:-/usr/bin/sftp}"
SYS_SSHD="${SYS_SSHD:-/usr/sbin/sshd}"
SYS_SFTP_SERVER="${SYS_SFTP_SERVER:-/usr/lib/openssh/sftp-server}"

USER="${USER:-`id -un`}"
export USER

_hpn_pids=""
_hpn_cleanups=""

pass() {
	echo "ok - $SUITE/$1"
	echo "PASS $SUITE/$1" >>"$HPN_RESULTS"
}

fail() {
	echo "not ok - $SUITE/$1: $2"
	echo "FAIL $SUITE/$1: $2" >>"$HPN_RESULTS"
}

skip() {
	echo "skip - $SUITE/$1: $2"
	echo "SKIP $SUITE/$1: $2" >>"$HPN_RESULTS"
}

# check_has NAME FILE PATTERN: pass if a line of FILE matches PATTERN
# (grep).  check_has_not NAME FILE PATTERN: pass if none does.
check_has() {
	if grep -q -- "$3" "$2"; then
		pass "$1"
	else
		fail "$1" "no '$3' in `basename "$2"`"
	fi
}
check_has_not() {
	if grep -q -- "$3" "$2"; then
		fail "$1" "'`grep -- "$3" "$2" | head -n1`' in `basename "$2"`"
	else
		pass "$1"
	fi
}

# check NAME COMMAND...: pass if COMMAND succeeds, else fail with the last
# line of its output.
check() {
	_name="$1"
	shift
	if _out=`"$@" 2>&1`; then
		pass "$_name"
	else
		fail "$_name" "`printf '%s\n' "$_out" | tail -n 1`"
	fi
}

# The PIDs we started, and extra cleanup commands; run on every exit.
hpn_track_pid() {
	_hpn_pids="$_hpn_pids $1"
}

# hpn_untrack_pid PID: PID was reaped; do not kill it (or its successor) on
# exit.
hpn_untrack_pid() {
	_hpn_pids=`echo " $_hpn_pids " | sed "s/ $1 / /g"`
}

hpn_on_exit() {
	_hpn_cleanups="$_hpn_cleanups
$1"
}

_hpn_cleanup() {
	_rc=$?
	trap '' 1 2 13 15
	for _p in $_hpn_pids; do
		kill "$_p" 2>/dev/null
	done
	for _p in $_hpn_pids; do
		# Give each a moment, then insist.
		wait_until 2 not kill -0 "$_p" 2>/dev/null
		kill -9 "$_p" 2>/dev/null
	done
	eval "$_hpn_cleanups"
	if [ -n "${TESTDIR:-}" ] && [ -z "${HPN_KEEP:-}" ]; then
		rm -rf "$TESTDIR"
	elif [ -n "${TESTDIR:-}" ]; then
		echo "kept $TESTDIR" >&2
	fi
	exit $_rc
}

trap _hpn_cleanup 0
trap 'exit 129' 1
trap 'exit 130' 2
trap 'exit 143' 15

TESTDIR=`mktemp -d "${TMPDIR:-/tmp}/hpn-test.XXXXXXXX"` || exit 1
chmod 700 "$TESTDIR"

die() {
	echo "$SUITE: $*" >&2
	fail "harness" "$*"
	exit 1
}

# need_file NAME FILE...: skip NAME unless every FILE is executable.
have_progs() {
	for _f in "$@"; do
		[ -x "$_f" ] || return 1
	done
	return 0
}

# HPN_NO_BUILD=1: the suite brings its own binaries (t-deb.sh).
[ -n "${HPN_NO_BUILD:-}" ] || [ -x "$HPN_BUILD/ssh" ] ||
    die "no patched build at $HPN_BUILD: run make first"

# Keys: one host key and one user key per run, made by our ssh-keygen.
hpn_keys() {
	[ -f "$TESTDIR/host_ed25519" ] && return 0
	"$HPN_BUILD/ssh-keygen" -q -t ed25519 -N '' -f "$TESTDIR/host_ed25519" \
	    -C hpn-test-host || die "ssh-keygen (host key) failed"
	"$HPN_BUILD/ssh-keygen" -q -t ed25519 -N '' -f "$TESTDIR/id_ed25519" \
	    -C hpn-test-user || die "ssh-keygen (user key) failed"
	cp "$TESTDIR/id_ed25519.pub" "$TESTDIR/authorized_keys"
	chmod 600 "$TESTDIR/authorized_keys"
	echo "hpntest `cut -d' ' -f1,2 "$TESTDIR/host_ed25519.pub"`" \
	    >"$TESTDIR/known_hosts"
}

# A port nobody listens on now.  sshd start is retried if we lose a race.
hpn_free_port() {
	while :; do
		_r=`od -An -N2 -tu2 /dev/urandom | tr -d ' '`
		_port=`expr 20000 + $_r % 40000`
		if command -v ss >/dev/null 2>&1; then
			ss -Htln "sport = :$_port" 2>/dev/null | grep -q . &&
			    continue
		fi
		echo $_port
		return 0
	done
}

# privsep_check SSHD: when root, sshd needs its privsep user and an
# existing, root-owned chroot directory; say exactly what is missing.
privsep_check() {
	[ "`id -u`" = 0 ] || return 0
	if ! id sshd >/dev/null 2>&1; then
		die "running as root, but there is no 'sshd' privsep user (install openssh-server, or run as a normal user)"
	fi
	_dir="$1"
	if [ ! -d "$_dir" ]; then
		die "running as root, but sshd's privsep directory $_dir is missing (mkdir -m 755 $_dir)"
	fi
}

# sshd_helper_paths BUILD: the sshd_config lines that point an uninstalled
# sshd at BUILD's sshd-session and sshd-auth, for the ones it has.
sshd_helper_paths() {
	[ ! -x "$1/sshd-session" ] || echo "SshdSessionPath $1/sshd-session"
	[ ! -x "$1/sshd-auth" ] || echo "SshdAuthPath $1/sshd-auth"
}

# _sshd_config NAME PORT ADDRESS BUILD [CONFIG-LINE...]: writes
# $TESTDIR/sshd_config.NAME for an sshd listening on ADDRESS:PORT: the
# extra lines first (so they win), then the lines every sshd flavour
# understands, then BUILD's sshd-session, sshd-auth (where the release has
# them: 9.2p1 has neither) and sftp-server (BUILD empty: Debian's sshd,
# which needs only its sftp-server).  Sets _conf, _pidf and SSHD_LOG.
_sshd_config() {
	_conf="$TESTDIR/sshd_config.$1"
	SSHD_LOG="$TESTDIR/sshd.$1.log"
	_pidf="$TESTDIR/sshd.$1.pid"
	_cport="$2"
	_caddr="$3"
	_cbuild="$4"
	shift 4
	: >"$_conf"
	_csftp=$SYS_SFTP_SERVER
	for _l in "$@"; do
		echo "$_l" >>"$_conf"
		# 9.2p1's sshd refuses a second Subsystem sftp line.
		case "$_l" in
		"Subsystem sftp "*)	_csftp="" ;;
		esac
	done
	cat >>"$_conf" <<EOF
Port $_cport
ListenAddress $_caddr
AddressFamily inet
HostKey $TESTDIR/host_ed25519
PidFile $_pidf
AuthorizedKeysFile $TESTDIR/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv HPN_*
LogLevel DEBUG1
EOF
	if [ -n "$_cbuild" ]; then
		sshd_helper_paths "$_cbuild" >>"$_conf"
		[ -z "$_csftp" ] || _csftp=$_cbuild/sftp-server
	fi
	[ -z "$_csftp" ] || echo "Subsystem sftp $_csftp" >>"$_conf"
	rm -f "$_pidf"
}

# start_sshd NAME FLAVOUR [CONFIG-LINE...]
#
# Starts an sshd in the foreground mode (-D) on a free port.  FLAVOUR is
# "hpn" (our build), "stock" (the unpatched twin), "peer" (the patched
# build of another release, HPN_PEER_BUILD) or "system" (Debian's
# /usr/sbin/sshd).  Extra config lines come first, so they win.  Sets
# SSHD_PORT, SSHD_PID, SSHD_LOG and writes $TESTDIR/ssh_config.NAME with
# Host "hpntest" pointing at it.
start_sshd() {
	_name="$1"
	_flavour="$2"
	shift 2
	hpn_keys
	case "$_flavour" in
	hpn|stock|peer)
		case "$_flavour" in
		hpn)	_b="$HPN_BUILD" ;;
		stock)	_b="$STOCK_BUILD" ;;
		peer)	_b="$HPN_PEER_BUILD" ;;
		esac
		_sshd="$_b/sshd"
		_privsep=`sed -n 's/^PRIVSEP_PATH=[ 	]*//p' "$_b/Makefile"`
		;;
	system)
		_sshd="$SYS_SSHD"
		_privsep=/run/sshd
		;;
	*)
		die "start_sshd: unknown flavour $_flavour"
		;;
	esac
	[ -x "$_sshd" ] || die "no sshd at $_sshd"
	privsep_check "$_privsep"

	_tries=0
	while [ $_tries -lt 5 ]; do
		_tries=`expr $_tries + 1`
		SSHD_PORT=`hpn_free_port`
		case "$_flavour" in
		system)	_sshd_config "$_name" $SSHD_PORT 127.0.0.1 "" "$@" ;;
		*)	_sshd_config "$_name" $SSHD_PORT 127.0.0.1 "$_b" "$@" ;;
		esac
		: >"$SSHD_LOG"
		if [ -n "${SSHD_DAEMON:-}" ]; then
			# A real daemon: it forks; its PID is in the pid file.
			"$_sshd" -f "$_conf" -E "$SSHD_LOG"
			SSHD_PID=""
		else
			"$_sshd" -D -f "$_conf" -E "$SSHD_LOG" &
			SSHD_PID=$!
			hpn_track_pid $SSHD_PID
		fi
		_i=0
		while [ $_i -lt 100 ]; do
			if [ -z "$SSHD_PID" ] && [ -s "$_pidf" ]; then
				SSHD_PID=`cat "$_pidf"`
				hpn_track_pid $SSHD_PID
			fi
			if grep -q "Server listening on 127.0.0.1 port $SSHD_PORT" \
			    "$SSHD_LOG" 2>/dev/null && [ -n "$SSHD_PID" ]; then
				_write_ssh_config "$_name"
				return 0
			fi
			[ -n "$SSHD_PID" ] && ! kill -0 $SSHD_PID 2>/dev/null && break
			sleep 0.1
			_i=`expr $_i + 1`
		done
		[ -n "$SSHD_PID" ] && kill $SSHD_PID 2>/dev/null
		wait $SSHD_PID 2>/dev/null
		grep -q "Address already in use" "$SSHD_LOG" && continue
		echo "--- $SSHD_LOG" >&2
		tail -n 20 "$SSHD_LOG" >&2
		die "sshd ($_flavour) did not start"
	done
	die "sshd ($_flavour): no free port after $_tries tries"
}

_write_ssh_config() {
	cat >"$TESTDIR/ssh_config.$1" <<EOF
Host hpntest
	HostName 127.0.0.1
	Port $SSHD_PORT
	User $USER
	HostKeyAlias hpntest
	IdentityFile $TESTDIR/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $TESTDIR/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	ConnectTimeout 20
	ServerAliveInterval 10
	ServerAliveCountMax 6
EOF
	SSH_CONFIG="$TESTDIR/ssh_config.$1"
}

# stop_sshd: stop the sshd started last (and wait for it, if it is ours).
stop_sshd() {
	kill $SSHD_PID 2>/dev/null
	wait $SSHD_PID 2>/dev/null
	wait_until 5 not kill -0 $SSHD_PID 2>/dev/null
	return 0
}

# log_mark [LOG]: a mark in LOG (default $SSHD_LOG): how many lines it has
# now.  log_since MARK [LOG]: the lines written to LOG after MARK (mark 0:
# all of LOG).
log_mark() {
	wc -l <"${1:-$SSHD_LOG}" | tr -d ' '
}
log_since() {
	tail -n +`expr $1 + 1` "${2:-$SSHD_LOG}"
}
# log_has MARK PATTERN [LOG]: true if a line written to LOG (default
# $SSHD_LOG) after MARK matches PATTERN (grep).
log_has() {
	log_since "$1" "${3:-$SSHD_LOG}" | grep -q -- "$2"
}
# log_count MARK PATTERN [LOG]: how many lines written to LOG (default
# $SSHD_LOG) after MARK match PATTERN.
log_count() {
	log_since "$1" "${3:-$SSHD_LOG}" | grep -c -- "$2"
}

# rekey_starts MARK: how sshd's key exchanges after MARK began (sshd's
# log at LogLevel DEBUG2; those before authentication are logged with
# [preauth]), one line each: "sent" where sshd sent its KEXINIT first
# (sshd started the exchange), "received" where the client did.
rekey_starts() {
	log_since $1 | grep -v '\[preauth\]' |
	    grep -o 'SSH2_MSG_KEXINIT [a-z]*' | awk 'NR % 2 == 1 { print $2 }'
}
# rekeys_not_started MARK HOW: what is wrong if not every key exchange
# after MARK began with HOW (see rekey_starts) or if there were fewer than
# three; nothing if all is well.
rekeys_not_started() {
	rekey_starts $1 | awk -v how=$2 '
		$1 != how && !bad { bad = NR }
		END {
			if (bad)
				print "rekey " bad " started by " \
				    (how == "sent" ? "the client" : "sshd")
			else if (NR < 3)
				print NR " rekeys, not 3 or more"
		}'
}

# guessed_rekeys NAME CLIENT-LOG MARK MIN [MIN-CLIENT]: a download's
# rekeys where our ssh (at -v, its stderr in CLIENT-LOG) guesses the key
# exchange (0008, kex-guess.c): at least MIN KEXINITs that guessed, none
# that the server dropped, at least MIN-CLIENT (default MIN) of the
# sshd's rekeys (log since MARK) started by the client, no packet
# skipped.  The first rekey does not guess (the server's first methods
# have been seen once), and where sshd reaches its limit while the
# client's guess is on its way, sshd's KEXINIT starts the exchange (both
# KEXINITs cross: correct, one round trip lost): those are counted, not
# failed.
guessed_rekeys() {
	_n=`grep -c "SSH2_MSG_KEXINIT guesses the key exchange" "$2"`
	_starts=`rekey_starts $3`
	_c=`echo "$_starts" | grep -c '^received$'`
	_s=`echo "$_starts" | grep -c '^sent$'`
	_why=""
	if [ "$_n" -lt "$4" ]; then
		_why="$_n guessed KEXINITs, not $4 or more"
	elif [ "$_c" -lt "${5:-$4}" ]; then
		_why="$_c rekeys started by the client, not ${5:-$4} or more ($_s by sshd)"
	elif grep -q "the server drops our guess" "$2"; then
		_why="the server dropped a guess"
	elif log_has $3 "skipped packet"; then
		_why="sshd skipped a packet: `log_since $3 |
		    grep 'skipped packet' | head -n 1`"
	fi
	if [ -n "$_why" ]; then
		fail "$1" "$_why"
	else
		pass "$1"
		echo "# $1: $_n rekeys guessed; $_c started by our ssh, $_s by sshd"
	fi
}

# budget_lines LOG MARK KIND: the rate-based window budgets logged at
# debug2 for a KIND (stock or patched) peer in LOG after MARK (log_mark),
#   "KIND peer: window budget B = need N + I for K idle channels;
#    need = per_rtt P + headroom H; per_rtt = rate R B/s * min_rtt T us
#    (max M); last rate L B/s, srtt S us, largest X us, turned W,
#    shrunk Z",
# one "B N I K P H R T M L S X W Z" line each.
budget_lines() {
	log_since $2 "$1" | sed -n "s/.*$3 peer: window budget \([0-9]* = need \
.*; need = per_rtt .*; per_rtt = rate .*(max [0-9]*); last rate [0-9]* B\/s, \
srtt [0-9]* us, largest [0-9]* us, turned [0-9]*, shrunk [01]\).*/\1/p" |
	    tr -cs '0-9\n' ' ' | awk 'NF == 14 { $1 = $1; print }'
}

# budget_problem B N I K P H R T M L S X W Z BASE MAX [SIDE]: prints what
# is wrong with one line of budget_lines, logged by SIDE (client, the
# default, or server), if anything.  M must be MAX; per_rtt
# P is R * T / 10^6; the headroom H is BASE, or for a patched peer (BASE
# 8 MiB) the most of that and P, and for a stock server (BASE 8064
# KiB) BASE + W - P where W, the window that last turned over within a
# round trip, is above P (once a queue formed, anything from BASE up to
# that: the growth stops at the calmest need so far, not logged).  While
# the smoothed round trip S is under 9/8 of the minimum T and the largest
# so far X under 5/4 of it (no queue: the windows double each round
# trip), H grows to make the need twice W (for a stock peer only while
# the last span's rate L is at least 5/4 of R, the lower of the last two
# spans', and its windows have not shrunk, Z 0), and for a patched peer
# while L is so, 2 * min(L, 2 * R) * T / 10^6.  The need
# N = min(P + H, M); I is K stock windows (2 MiB); the budget B is at
# least N + I (more only to give each channel a stock window).
budget_problem() {
	_rt=$(( $7 * $8 / 1000000 ))
	_l=${10}
	[ $_l -le $(( 2 * $7 )) ] || _l=$(( 2 * $7 ))
	_ramp=$(( _l * $8 / 1000000 ))
	_head=${15}
	[ ${15} -ne 8388608 ] || [ $_rt -le $_head ] || _head=$_rt
	_fill=0
	[ ${11} -ge $(( $8 + $8 / 8 )) ] || [ ${12} -ge $(( $8 + $8 / 4 )) ] ||
	    _fill=1
	_headlo=
	if [ ${15} -ne 8388608 ] && [ "${17:-client}" != server ] &&
	    [ ${13} -gt $_rt ]; then
		_head=$(( ${15} + ${13} - _rt ))
		# Capped at the calmest need so far, which is not logged.
		[ $_fill = 1 ] || _headlo=${15}
	fi
	_grows=0
	[ $7 -eq 0 ] || [ $(( 4 * ${10} )) -lt $(( 5 * $7 )) ] || _grows=1
	if [ $_fill = 1 ]; then
		[ $_grows = 0 ] || [ ${15} -ne 8388608 ] ||
		    [ $(( 2 * _ramp )) -le $(( _rt + _head )) ] ||
		    _head=$(( 2 * _ramp - _rt ))
		{ [ $_grows = 0 ] || [ ${14} -ne 0 ]; } &&
		    [ ${15} -ne 8388608 ] ||
		    [ $(( 2 * ${13} )) -le $(( _rt + _head )) ] ||
		    _head=$(( 2 * ${13} - _rt ))
	fi
	if [ -n "$_headlo" ] && [ $6 -ge $_headlo ] && [ $6 -le $_head ]; then
		_head=$6
	fi
	_need=$(( _rt + _head ))
	[ $_need -le $9 ] || _need=$9
	if [ $9 -ne ${16} ]; then
		echo "max $9, not ${16}"
	elif [ $5 -ne $_rt ]; then
		echo "per_rtt $5, not $7 B/s * $8 us = $_rt"
	elif [ $6 -ne $_head ]; then
		echo "headroom $6, not ${_headlo:+$_headlo to }$_head"
	elif [ $2 -ne $_need ]; then
		echo "need $2, but $5 + $6 = $_need"
	elif [ $3 -ne $(( $4 * 2097152 )) ]; then
		echo "$3 for $4 idle channels, not $(( $4 * 2097152 ))"
	elif [ $1 -lt $(( $2 + $3 )) ]; then
		echo "budget $1 below need $2 + $3"
	fi
}

# window_sums LOG MARK: prints the first window growth logged in LOG after
# MARK (log_mark) that left the connection's windows above its budget,
#   "channel C: window W grows to W2 (windows T of budget B)".
window_sums() {
	log_since $2 "$1" | sed -n 's/.*channel [0-9]*: window [0-9]* grows to [0-9]* (windows \([0-9]*\) of budget \([0-9]*\)).*/\1 \2/p' |
	    awk '$1 > $2 { print "windows " $1 " above budget " $2; exit }'
}

# descendants PID: every process below PID, from /proc.
descendants() {
	_kids=`grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null |
	    sed 's|/proc/\([0-9]*\)/status|\1|'`
	for _k in $_kids; do
		echo $_k
		descendants $_k
	done
}

# HPN_PROXY: a ProxyCommand (needs bash, for /dev/tcp) that connects to
# %h:%p: the connection is then on pipes, with no TCP_INFO.  The reader in
# the background is killed when the proxy ends: left alone it would hold
# the TCP connection, and with it the sshd session, open.
HPN_PROXY="bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & r=\$!; trap \"kill \$r\" EXIT; cat >&3'"

# proc_kib PID FIELD: FIELD of /proc/PID/status (VmHWM: peak RSS, VmRSS)
# in KiB, or nothing once PID is gone.
proc_kib() {
	sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$1/status \
	    2>/dev/null
}

# sessions_hwms: the peak RSS (VmHWM, KiB) of each process below the sshd
# started last (its sessions), one per line.  sessions_hwm: the largest,
# or nothing.
sessions_hwms() {
	for _p in `descendants $SSHD_PID`; do
		proc_kib $_p VmHWM
	done
}
sessions_hwm() {
	sessions_hwms | sort -n | tail -n 1
}

# max_window LOGFILE [MARK]: the largest window a channel grew to, as
# logged at debug2 ("channel C: window W grows to W2"), after MARK
# (log_mark; default 0: all of LOGFILE).
max_window() {
	log_since ${2:-0} "$1" | sed -n 's/.*channel [0-9]*: window [0-9]* grows to \([0-9]*\).*/\1/p' |
	    sort -n | tail -n 1
}

# in_pty OUT CMD: run CMD under a pseudo-terminal COLS wide (100 unless
# set), its output to OUT: the progress meter shows only on a terminal.
in_pty() {
	script -qec "stty cols ${COLS:-100} rows 24; $2" /dev/null </dev/null \
	    >"$1" 2>&1
}

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (true)
# or SECONDS have passed (false).
wait_until() {
	_wu_left=`expr $1 \* 10`
	shift
	while ! "$@"; do
		[ $_wu_left -gt 0 ] || return 1
		sleep 0.1
		_wu_left=`expr $_wu_left - 1`
	done
	return 0
}

# not CMD...: true if CMD fails.
not() {
	! "$@"
}

# proc_gone PID: true once process PID has ended (a zombie has ended too).
proc_gone() {
	! kill -0 "$1" 2>/dev/null ||
	    grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# nthreads PID: the number of threads of process PID (0 if gone).
nthreads() {
	sed -n 's/^Threads:[[:space:]]*//p' /proc/$1/status 2>/dev/null || echo 0
}

# Test data: a file of random bytes, made once per run.
make_data() {
	_f="$TESTDIR/data.$1"
	[ -f "$_f" ] || head -c "$1" /dev/urandom >"$_f" ||
	    die "cannot make test data"
	echo "$_f"
}

sha256() {
	sha256sum <"$1" | cut -d' ' -f1
}

# same_file A B: true if the two files have the same SHA-256; else prints
# why on stdout and returns 1.
same_file() {
	if [ ! -f "$2" ]; then
		echo "missing $2"
		return 1
	fi
	_a=`sha256 "$1"`
	_b=`sha256 "$2"`
	if [ "x$_a" != "x$_b" ]; then
		echo "SHA-256 differs: sent $_a, got $_b (`wc -c <"$2"` bytes)"
		return 1
	fi
	return 0
}

# check_rejected NAME LINE ACCEPTED CMD...: CMD checks a config with a bad
# line LINE: pass if it fails and its output names that line; else fail
# NAME with ACCEPTED if it succeeded, or with its output.
check_rejected() {
	_n="$1"
	_l="$2"
	_acc="$3"
	shift 3
	if _out=`"$@" 2>&1`; then
		fail "$_n" "$_acc"
	elif printf '%s\n' "$_out" | grep -q "line $_l"; then
		pass "$_n"
	else
		fail "$_n" "no line number: $_out"
	fi
}

# unit_build FILE [CFLAGS]: build the unit test program (or benchmark)
# named by FILE's name without its suffix against $HPN_BUILD, with
# regress/unit/Makefile's one rule.
unit_build() {
	env MAKEFLAGS= MAKELEVEL= ${MAKE:-make} -r -s \
	    -f "$HPN_TOP/regress/unit/Makefile" CC="${CC:-cc}" \
	    CFLAGS="${2:--O2 -g}" TOP="$HPN_TOP" BUILD="$HPN_BUILD" \
	    OUT="`dirname "$1"`" "$1"
}

# unit_libssh PROG PREFIX N: build regress/unit/PROG.c against the
# patched libssh of $HPN_BUILD, run it and report each of its "ok" and
# "not ok" lines as a check named PREFIX and the case; PREFIXsummary
# passes if it ends with "N passed, 0 failed", PREFIXbuild fails if it
# does not build.
unit_libssh() {
	if ! unit_build "$TESTDIR/$1" >"$TESTDIR/cc.$1" 2>&1; then
		fail "${2}build" "`grep -m1 error "$TESTDIR/cc.$1"`"
		return
	fi
	"$TESTDIR/$1" >"$TESTDIR/out.$1" 2>"$TESTDIR/err.$1"
	sed -n 's/^ok - \(.*\)/\1/p' "$TESTDIR/out.$1" | while read -r _t; do
		pass "$2$_t"
	done
	sed -n 's/^not ok - \([^:]*\): \(.*\)/\1 \2/p' "$TESTDIR/out.$1" |
	    while read -r _t _why; do
		fail "$2$_t" "$_why"
	done
	check "${2}summary" grep -q "^$3 passed, 0 failed" "$TESTDIR/out.$1"
}

# check_exit_status NAME SSH: SSH runs 'echo hello; exit 42' on hpntest;
# pass if the output and the exit status come back.
check_exit_status() {
	_out=`"$2" -F "$SSH_CONFIG" hpntest 'echo hello; exit 42' 2>&1`
	_rc=$?
	if [ $_rc -eq 42 ] && [ "x$_out" = "xhello" ]; then
		pass "$1"
	else
		fail "$1" "want 'hello' and 42, got '$_out' and $_rc"
	fi
}

# client_messages: scp's or sftp's stderr on stdin, its messages on
# stdout, sorted: the chatter of -v (debug lines, banners, transfer
# totals, progress lines) left out and scp's path stripped, so that a
# patched client's can be compared with an unpatched one's.
client_messages() {
	sed 's|^[^ ]*/scp: |scp: |' |
	    grep -v 'debug[0-9]:\|^OpenSSH_\|^Executing\|^\*\*\|^Authenticated\|^Transferred\|^Transfer verdict\|^Bytes per\|^Connecting\|^Entering\|^Retrieving\|^Fetching\|^Uploading\|^sftp>' |
	    LC_ALL=C sort
}

# check_same NAME WANT GOT: pass if file GOT has WANT's bytes, else fail
# with same_file's why.
check_same() {
	if _why=`same_file "$2" "$3"`; then
		pass "$1"
	else
		fail "$1" "$_why"
	fi
}

# check_copy NAME PROG STATUS ERR WANT GOT: a copy by PROG that exited
# with STATUS (its stderr in ERR): fail NAME with ERR's last line if
# STATUS is not 0, else check_same NAME WANT GOT.
check_copy() {
	if [ "$3" -ne 0 ]; then
		fail "$1" "$2 failed: `tail -n1 "$4"`"
	else
		check_same "$1" "$5" "$6"
	fi
}

# The standard transfer checks between a client and a server.
#
# xfer_up NAME SSH DATA [SSH-ARG...]: upload DATA with 'cat > file' and
# check it byte for byte; ssh's stderr is left in $TESTDIR/err.NAME.
xfer_up() {
	_n="$1"
	_ssh="$2"
	_d="$3"
	shift 3
	_up="$TESTDIR/up.$$.$_n"
	rm -f "$_up"
	"$_ssh" -F "$SSH_CONFIG" "$@" hpntest "cat > $_up" <"$_d" \
	    2>"$TESTDIR/err.$_n"
	check_copy "$_n-upload" ssh $? "$TESTDIR/err.$_n" "$_d" "$_up"
	rm -f "$_up"
}

# xfer_down NAME SSH DATA [SSH-ARG...]: download DATA with 'cat DATA' and
# check it byte for byte; ssh's stderr is left in $TESTDIR/err.NAME.down.
xfer_down() {
	_n="$1"
	_ssh="$2"
	_d="$3"
	shift 3
	_down="$TESTDIR/down.$$.$_n"
	rm -f "$_down"
	"$_ssh" -F "$SSH_CONFIG" "$@" hpntest "cat $_d" >"$_down" \
	    2>"$TESTDIR/err.$_n.down"
	check_copy "$_n-download" ssh $? "$TESTDIR/err.$_n.down" "$_d" \
	    "$_down"
	rm -f "$_down"
}

# xfer_ssh NAME SSH CIPHER DATA: xfer_up and xfer_down with CIPHER; the
# download's stderr is left in $TESTDIR/err.NAME.
xfer_ssh() {
	xfer_up "$1" "$2" "$4" -c "$3"
	xfer_down "$1" "$2" "$4" -c "$3"
	mv -f "$TESTDIR/err.$1.down" "$TESTDIR/err.$1"
}

# xfer_scp NAME SCP SSH DATA [SCP-FLAG] / xfer_sftp NAME SFTP SSH DATA:
# both ways.
xfer_scp() {
	_n="$1"
	_dst="$TESTDIR/scp.$$.$_n"
	rm -f "$_dst" "$_dst.down"
	"$2" ${5:-} -q -S "$3" -F "$SSH_CONFIG" "$4" "hpntest:$_dst" \
	    2>"$TESTDIR/err.$_n"
	check_copy "$_n-upload" scp $? "$TESTDIR/err.$_n" "$4" "$_dst"
	"$2" ${5:-} -q -S "$3" -F "$SSH_CONFIG" "hpntest:$4" "$_dst.down" \
	    2>"$TESTDIR/err.$_n"
	check_copy "$_n-download" scp $? "$TESTDIR/err.$_n" "$4" "$_dst.down"
	rm -f "$_dst" "$_dst.down"
}

xfer_sftp() {
	_n="$1"
	_dst="$TESTDIR/sftp.$$.$_n"
	rm -f "$_dst" "$_dst.down"
	printf 'put %s %s\nget %s %s\n' "$4" "$_dst" "$4" "$_dst.down" \
	    >"$TESTDIR/batch.$_n"
	if ! "$2" -q -S "$3" -F "$SSH_CONFIG" -b "$TESTDIR/batch.$_n" hpntest \
	    >"$TESTDIR/out.$_n" 2>&1; then
		fail "$_n" "sftp failed: `tail -n1 "$TESTDIR/out.$_n"`"
		return
	fi
	check_same "$_n-upload" "$4" "$_dst"
	check_same "$_n-download" "$4" "$_dst.down"
	rm -f "$_dst" "$_dst.down"
}

# other_release: the suite runs on a supported release other than the
# default one (make check-releases sets HPN_OTHER_RELEASE=yes).  There a
# suite exercises every hunk of that release's series, but does not
# repeat what only our own files decide, which is the same code on every
# release: more ciphers through the same hunk, more data through the
# same path, more variants of the same logic.  make check runs all of it
# on the default release.  A check left out says so on a comment line.
other_release() {
	[ "${HPN_OTHER_RELEASE:-no}" = yes ]
}

# default_release_only WHAT: true (and a comment line saying so) when
# WHAT is left to the default release.
default_release_only() {
	other_release || return 1
	echo "# $SUITE: $1: on the default release only"
	return 0
}

# XFER: the bytes of a suite's bulk copies (HPN_XFER_BYTES overrides it):
# 64 MiB, and 16 MiB on other releases, where the same hunks see less
# data (make check-releases runs three releases at once, CPU-bound).
# CIPHERS: each cipher family once on other releases: AES-CTR
# (MT-AES-CTR's hooks), AES-GCM, chacha20-poly1305 (patch 0006's hooks).
if other_release; then
	XFER=16777216
	CIPHERS="aes128-ctr aes256-gcm@openssh.com
chacha20-poly1305@openssh.com"
else
	XFER=67108864
	CIPHERS="aes128-ctr aes192-ctr aes256-ctr aes128-gcm@openssh.com
aes256-gcm@openssh.com chacha20-poly1305@openssh.com"
fi
