#!/bin/sh
#
# t-translog.sh: sshd (patch 0005) logs one "Transfer stats:" line per
# connection, at INFO, with the right algorithms, user, banner and
# channel payload, on normal close, client killed, timeout and for
# multiplexed sessions; it ends within 2 s of SIGTERM, as stock's does.
# The progress meter (patch 0004) is t-stats'.

. "`dirname "$0"`/lib.sh"

SSH="$HPN_BUILD/ssh"
SFTP="$HPN_BUILD/sftp"

# LogLevel INFO: the statistics line must show at sshd's default level.
start_sshd translog hpn "LogLevel INFO" "ClientAliveInterval 1" \
    "ClientAliveCountMax 3"

# stats_line MARK: put the first "Transfer stats:" line logged after MARK
# (log_mark) in STATS; false if there is none yet.
stats_line() {
	STATS=`log_since $1 | grep 'Transfer stats: ' | head -n 1 | tr -d '\r'`
	[ -n "$STATS" ]
}

# wait_stats NAME MARK: wait (up to 30 s) for the first line after MARK
# and put it in STATS; fail NAME if none comes.
wait_stats() {
	wait_until 30 stats_line $2 && return 0
	fail "$1" "no Transfer stats line after 30 s"
	return 1
}

# field KEY: KEY's value in STATS (quotes removed).
field() {
	case "$1" in
	client)	echo "$STATS" | sed -n 's/.* client="\([^"]*\)".*/\1/p' ;;
	*)	echo "$STATS" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" ;;
	esac
}

# check_stats NAME KEY VALUE...: each KEY has VALUE in STATS.
check_stats() {
	_n="$1"
	shift
	_why=""
	while [ $# -ge 2 ]; do
		_v=`field "$1"`
		[ "x$_v" = "x$2" ] || _why="$_why $1='$_v' (want '$2')"
		shift 2
	done
	if [ -z "$_why" ]; then
		pass "$_n"
	else
		fail "$_n" "$_why in: $STATS"
	fi
}

# Upload 64 MiB and download 32 MiB in one session, rekeying every 16 MiB.
UP=`make_data 67108864`
DOWN=`make_data 33554432`
m=`log_mark`
"$SSH" -v -E "$TESTDIR/log.v" -F "$SSH_CONFIG" -c aes256-ctr \
    -o RekeyLimit=16M hpntest "cat >/dev/null; cat $DOWN" <"$UP" \
    >"$TESTDIR/log.out" 2>"$TESTDIR/log.err"
rc=$?
if [ $rc -ne 0 ]; then
	fail log-transfer "ssh exit $rc: `tail -n 1 "$TESTDIR/log.err"`"
elif wait_stats log-transfer $m; then
	echo "# $STATS"
	# ssh's log lines end in CR LF.
	tr -d '\r' <"$TESTDIR/log.v" >"$TESTDIR/log.v2"
	kex=`sed -n 's/^debug1: kex: algorithm: //p' "$TESTDIR/log.v2" |
	    head -n 1`
	banner=`sed -n 's/^debug1: Local version string //p' \
	    "$TESTDIR/log.v2"`
	mac=`sed -n 's/^debug1: kex: client->server cipher: .* MAC: \([^ ]*\) .*/\1/p' \
	    "$TESTDIR/log.v2" | head -n 1`
	nrekey=`grep -c 'debug1: rekey ' "$TESTDIR/log.v2"`
	# Whatever the remote shell printed on stderr moved too.
	errb=`wc -c <"$TESTDIR/log.err"`
	check_stats log-bytes bytes_in 67108864 \
	    bytes_out `expr \`wc -c <"$TESTDIR/log.out"\` + $errb`
	check log-download-size test "`wc -c <"$TESTDIR/log.out"`" -eq 33554432
	check_stats log-algorithms cipher_in aes256-ctr cipher_out aes256-ctr \
	    mac_in "$mac" mac_out "$mac" comp_in none comp_out none kex "$kex"
	check_stats log-who addr 127.0.0.1 user "$USER" client "$banner"
	check log-rekeyed test "$nrekey" -ge 2
	case "`field duration`/`field rate_in_Bps`/`field port`" in
	[0-9]*.[0-9][0-9][0-9]/[0-9]*/[0-9]*)
		pass log-numbers ;;
	*)	fail log-numbers "duration/rate/port malformed: $STATS" ;;
	esac
	# rate_in is bytes_in / duration (to the rounding of duration).
	if echo "$STATS" | awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		want = f["bytes_in"] / f["duration"]
		d = f["rate_in_Bps"] - want; if (d < 0) d = -d
		exit !(d <= want * 0.01 + 1)
	}'; then
		pass log-rate
	else
		fail log-rate "rate_in_Bps is not bytes_in/duration: $STATS"
	fi
fi

# An AEAD cipher has no separate MAC; compression is reported.
m=`log_mark`
"$SSH" -F "$SSH_CONFIG" -c chacha20-poly1305@openssh.com -o Compression=yes \
    hpntest true
if wait_stats log-aead $m; then
	check_stats log-aead cipher_in chacha20-poly1305@openssh.com \
	    mac_out '<implicit>' comp_in zlib@openssh.com \
	    comp_out zlib@openssh.com bytes_in 0 bytes_out 0
fi

# Debian's own client: a banner with a space, quoted whole.
if [ -x "$SYS_SSH" ]; then
	m=`log_mark`
	sysbanner=`"$SYS_SSH" -v -F "$SSH_CONFIG" hpntest true 2>&1 |
	    sed -n 's/^debug1: Local version string //p' | tr -d '\r'`
	if wait_stats log-banner $m; then
		check_stats log-banner client "$sysbanner" user "$USER"
	fi
else
	skip log-banner "no $SYS_SSH"
fi

# A client killed with SIGKILL mid-upload: the line still comes, once.
m=`log_mark`
"$SSH" -F "$SSH_CONFIG" hpntest 'cat >/dev/null' </dev/zero 2>/dev/null &
pid=$!
hpn_track_pid $pid
sleep 2
kill -9 $pid
wait $pid 2>/dev/null
if wait_stats log-sigkill $m; then
	b=`field bytes_in`
	if [ -n "$b" ] && [ "$b" -gt 0 ]; then
		pass log-sigkill
	else
		fail log-sigkill "bytes_in '$b': $STATS"
	fi
fi

# A client that stops answering: ClientAliveInterval times it out.
m=`log_mark`
"$SSH" -F "$SSH_CONFIG" -o ServerAliveInterval=0 hpntest 'sleep 60' \
    </dev/null >/dev/null 2>&1 &
pid=$!
hpn_track_pid $pid
sleep 2
kill -STOP $pid
if wait_stats log-timeout $m; then
	if grep -q 'Timeout, client not responding' "$SSHD_LOG"; then
		pass log-timeout
	else
		fail log-timeout "the connection did not time out"
	fi
fi
kill -9 $pid
kill -CONT $pid 2>/dev/null
wait $pid 2>/dev/null

# Two multiplexed sessions at once on one connection: both counted.
CTL="$TESTDIR/ctl"
M8=`make_data 8388608`
M4=`make_data 4194304`
m=`log_mark`
"$SSH" -F "$SSH_CONFIG" -o ControlMaster=yes -o ControlPath="$CTL" -N \
    hpntest </dev/null >/dev/null 2>&1 &
mpid=$!
hpn_track_pid $mpid
wait_until 10 test -S "$CTL"
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest 'cat >/dev/null' \
    <"$M8" &
p1=$!
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest "cat $M4" \
    </dev/null >"$TESTDIR/mux.out" 2>"$TESTDIR/mux.err" &
p2=$!
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest "cat >/dev/null" \
    <"$M4" &
p3=$!
wait $p1 $p2 $p3
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" -O exit hpntest 2>/dev/null
wait $mpid
if wait_stats log-mux $m; then
	# Three sessions: 8 MiB and 4 MiB up, 4 MiB down.
	check_stats log-mux bytes_in 12582912 bytes_out 4194304
	check log-mux-data test "`wc -c <"$TESTDIR/mux.out"`" -eq 4194304
fi

# A client banner of 950 characters (the protocol allows up to 8192) comes
# last in the line, cut to 256 characters: the counters before it stay
# whole and exact.  paramiko sends the banner and echoes 100000 bytes.
# How the line bounds a value is transfer-log.c's, the same on every
# release.
if default_release_only "log-long-banner*, log-disconnect*"; then
	:
elif /usr/bin/python3 -c 'import paramiko' 2>/dev/null; then
	m=`log_mark`
	LONGBANNER="SSH-2.0-`head -c 942 /dev/zero | tr '\\0' b`"
	HPN_PORT=$SSHD_PORT HPN_KEY="$TESTDIR/id_ed25519" HPN_BANNER="$LONGBANNER" \
	    /usr/bin/python3 - >"$TESTDIR/banner.out" 2>&1 <<'PY'
import os, socket, sys, paramiko
sock = socket.create_connection(("127.0.0.1", int(os.environ["HPN_PORT"])))
t = paramiko.Transport(sock)
t.local_version = os.environ["HPN_BANNER"]
t.start_client(timeout=20)
key = paramiko.Ed25519Key.from_private_key_file(os.environ["HPN_KEY"])
t.auth_publickey(os.environ["USER"], key)
ch = t.open_session()
ch.exec_command("cat")
data = os.urandom(100000)
ch.sendall(data)
ch.shutdown_write()
got = b""
while True:
	b = ch.recv(65536)
	if not b:
		break
	got += b
rc = ch.recv_exit_status()
t.close()
print("echoed" if got == data and rc == 0 else "mismatch %d %d" % (len(got), rc))
PY
	if ! grep -q '^echoed$' "$TESTDIR/banner.out"; then
		fail log-long-banner "paramiko: `tail -n 1 "$TESTDIR/banner.out"`"
	elif wait_stats log-long-banner $m; then
		want=`printf '%s' "$LONGBANNER" | cut -c1-256`
		check_stats log-long-banner bytes_in 100000 bytes_out 100000 \
		    user "$USER" client "$want"
		case "$STATS" in
		*" client=\"$want\"")
			case "`field duration`/`field rate_out_Bps`/`field kex`" in
			[0-9]*.[0-9][0-9][0-9]/[0-9]*/?*)
				pass log-long-banner-whole ;;
			*)	fail log-long-banner-whole "fields missing: $STATS" ;;
			esac
			;;
		*)	fail log-long-banner-whole "the line does not end in the cut banner: $STATS" ;;
		esac
	fi

	# sshd disconnects a client that opens a session after
	# no-more-sessions@openssh.com; ssh_packet_disconnect() closes the
	# packet layer before cleanup_exit(), which still writes the line.
	m=`log_mark`
	HPN_PORT=$SSHD_PORT HPN_KEY="$TESTDIR/id_ed25519" \
	    /usr/bin/python3 - >"$TESTDIR/nomore.out" 2>&1 <<'PY'
import os, socket, paramiko
sock = socket.create_connection(("127.0.0.1", int(os.environ["HPN_PORT"])))
t = paramiko.Transport(sock)
t.get_security_options().ciphers = ("aes128-ctr",)
t.start_client(timeout=20)
key = paramiko.Ed25519Key.from_private_key_file(os.environ["HPN_KEY"])
t.auth_publickey(os.environ["USER"], key)
ch = t.open_session()
ch.exec_command("head -c 4096 /dev/zero")
while ch.recv(65536):
	pass
ch.recv_exit_status()
t.global_request("no-more-sessions@openssh.com", wait=False)
try:
	t.open_session(timeout=10)
	print("second session opened")
except Exception as e:
	print("refused")
t.close()
PY
	if ! grep -q '^refused$' "$TESTDIR/nomore.out"; then
		fail log-disconnect "paramiko: `tail -n 1 "$TESTDIR/nomore.out"`"
	elif wait_stats log-disconnect $m; then
		check_stats log-disconnect bytes_out 4096 cipher_in aes128-ctr \
		    cipher_out aes128-ctr addr 127.0.0.1 user "$USER"
		check log-disconnect-no-crash sh -c "! grep -n \
		    'terminated by signal\|killed by signal' '$SSHD_LOG'"
	fi
else
	skip log-long-banner "no paramiko for /usr/bin/python3 (python3-paramiko)"
	skip log-disconnect "no paramiko for /usr/bin/python3 (python3-paramiko)"
fi

# Exactly one line per authenticated connection, each for its own port
# (a client port may be reused by a later connection: count per port).
nacc=`grep -c 'Accepted publickey for ' "$SSHD_LOG"`
nst=`grep -c 'Transfer stats: ' "$SSHD_LOG"`
bad=`awk '
	/Accepted publickey for .* port [0-9]+ ssh2/ {
		for (i = 1; i < NF; i++) if ($i == "port") acc[$(i + 1)]++
	}
	/Transfer stats: / {
		for (i = 1; i <= NF; i++) if ($i ~ /^port=/) st[substr($i, 6)]++
	}
	END {
		for (p in acc) if (st[p] != acc[p]) print p "(" acc[p] "/" st[p] + 0 ")"
		for (p in st) if (!(p in acc)) print p "(0/" st[p] ")"
	}' "$SSHD_LOG" | tr '\n' ' '`
if [ "$nacc" -eq "$nst" ] && [ -z "$bad" ]; then
	pass log-once
else
	fail log-once "$nacc connections, $nst lines; ports (connections/lines): $bad"
fi

# SIGTERM, on an sshd with no ClientAliveInterval (whose timer would wake
# the loop every second) and internal-sftp, the usual chroot/SFTP-only
# set-up.
start_sshd stats-term hpn "LogLevel INFO" "Subsystem sftp internal-sftp"

# The session's sshd-session (the remote shell's parent) terminated with
# SIGTERM, as an administrator would, while idle and in the middle of an
# upload and a download: it ends within 2 s, through cleanup_exit, so the
# line is written.
for how in idle upload download; do
	pidf="$TESTDIR/term.$how.pid"
	case $how in
	idle)	cmd='exec sleep 60' in=/dev/null ;;
	upload)	cmd='exec cat >/dev/null' in=/dev/zero ;;
	download) cmd='exec cat /dev/zero' in=/dev/null ;;
	esac
	m=`log_mark`
	"$SSH" -F "$SSH_CONFIG" hpntest "echo \$PPID >$pidf; $cmd" <$in \
	    >/dev/null 2>&1 &
	pid=$!
	hpn_track_pid $pid
	wait_until 10 test -s "$pidf"
	spid=`cat "$pidf" 2>/dev/null`
	case "$spid" in
	[0-9]*)	;;
	*)	fail log-sigterm-$how "no pid from the remote shell: '$spid'"
		kill $pid 2>/dev/null
		continue
		;;
	esac
	[ $how = idle ] || sleep 1
	kill -TERM "$spid"
	if ! wait_until 2 proc_gone "$spid"; then
		fail log-sigterm-$how "sshd-session $spid still runs 2 s after SIGTERM"
		kill -9 "$spid" 2>/dev/null
	elif wait_stats log-sigterm-$how $m; then
		if log_has $m 'Exiting on signal 15'; then
			pass log-sigterm-$how
		else
			fail log-sigterm-$how "no 'Exiting on signal 15' in the log"
		fi
	fi
	wait $pid 2>/dev/null
	hpn_untrack_pid $pid
done

# internal-sftp serves each session from a forked child of sshd-session:
# SIGTERM ends it within 2 s, as it does stock's.
mkfifo "$TESTDIR/isftp.in"
"$SFTP" -S "$SSH" -F "$SSH_CONFIG" -b - hpntest <"$TESTDIR/isftp.in" \
    >"$TESTDIR/isftp.out" 2>&1 &
pid=$!
hpn_track_pid $pid
exec 7>"$TESTDIR/isftp.in"
echo pwd >&7
# internal_sftp_pid: the child titled "sshd-session: USER@internal-sftp".
internal_sftp_pid() {
	for _p in `descendants $SSHD_PID`; do
		tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null |
		    grep -q '@internal-sftp' && echo $_p && return 0
	done
	return 1
}
if ! wait_until 10 internal_sftp_pid >/dev/null; then
	fail sigterm-internal-sftp "no internal-sftp child of sshd $SSHD_PID"
else
	ipid=`internal_sftp_pid`
	kill -TERM $ipid
	if wait_until 2 proc_gone $ipid; then
		pass sigterm-internal-sftp
	else
		fail sigterm-internal-sftp "internal-sftp $ipid still runs 2 s after SIGTERM"
		kill -9 $ipid 2>/dev/null
	fi
fi
exec 7>&-
wait $pid 2>/dev/null
hpn_untrack_pid $pid
exit 0
