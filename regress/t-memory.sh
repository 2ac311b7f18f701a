#!/bin/sh
#
# t-memory.sh: memory bounded by what is buffered (issue 32).
#
#   An ssh-agent client that sends requests and never reads the replies:
#   the agent's reply queue stops at stock's sshbuf limit (128 MiB), as
#   stock's agent does; only a channel's buffers may grow to a window.
#   (It also gets there quickly: near its limit a buffer grows to the
#   limit, not by a copy per append.)

. "`dirname "$0"`/lib.sh"

AGENT="$HPN_BUILD/ssh-agent"
[ -x "$AGENT" ] || die "no ssh-agent in $HPN_BUILD"
[ -x /usr/bin/python3 ] || { skip agent-flood "no python3"; exit 0; }
hpn_keys


# flood BUILD: the peak RSS (KiB) of BUILD's ssh-agent while a client
# sends it 2 million identity requests (10 MB) and reads nothing; the
# agent holds a key, so each reply is about 100 bytes (200 MB in all).
flood() {
	_sock="$TESTDIR/agent.$$.sock"
	rm -f "$_sock"
	"$1/ssh-agent" -D -a "$_sock" >/dev/null 2>"$TESTDIR/agent.log" &
	_pid=$!
	hpn_track_pid $_pid
	wait_until 10 test -S "$_sock"
	SSH_AUTH_SOCK="$_sock" "$1/ssh-add" "$TESTDIR/id_ed25519" \
	    >/dev/null 2>&1
	SOCK="$_sock" /usr/bin/python3 - <<'PY' &
import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["SOCK"])
req = b"\0\0\0\1\x0b" * 100000		# SSH_AGENTC_REQUEST_IDENTITIES
try:
	for i in range(20):
		s.sendall(req)
except OSError:
	pass
PY
	_py=$!
	_peak=0
	_n=0
	while kill -0 $_py 2>/dev/null && [ $_n -lt 900 ]; do
		_h=`proc_kib $_pid VmHWM`
		[ -n "$_h" ] && [ "$_h" -gt $_peak ] && _peak=$_h
		sleep 0.2
		_n=`expr $_n + 1`
	done
	# Three minutes: the agent stopped reading and never gave up.
	[ $_n -lt 900 ] || { kill $_py; _peak=0; }
	wait $_py
	_h=`proc_kib $_pid VmHWM`
	[ -n "$_h" ] && [ "$_h" -gt $_peak ] && _peak=$_h
	kill $_pid 2>/dev/null
	wait $_pid 2>/dev/null
	hpn_untrack_pid $_pid
	echo $_peak
}

ours=`flood "$HPN_BUILD"`
echo "# agent-flood: peak RSS `expr $ours / 1024` MiB"
# The reply queue stops at 128 MiB and the agent gives up ("insufficient
# buffer space"), as stock's does; its last growth copies the buffer, so
# the peak is at most about twice that.  With every sshbuf allowed 1 GiB
# the agent reached 1.25 GB.
check agent-flood-bounded test "$ours" -gt 0 -a "$ours" -lt 327680
check_has agent-flood-gives-up "$TESTDIR/agent.log" \
    'insufficient buffer space'

# The rest is hpn-window.c's logic, the same on every release.
default_release_only "stalled-*, drained-*" && exit 0

# session_rss: the VmRSS (KiB) of the sshd-session that runs the channels
# of the sshd started last's connection: the last one below it (on 9.2p1
# a root login's session runs in the first).
session_rss() {
	for _p in `descendants $SSHD_PID`; do
		grep -q '^Name:[[:space:]]*sshd' /proc/$_p/status 2>/dev/null &&
		    _last=$_p
	done
	proc_kib $_last VmRSS
}

# A consumer that takes 8 MiB, stalls until $TESTDIR/go exists (after
# saying so with $TESTDIR/stalled), then takes the rest of 64 MiB and
# says so with $TESTDIR/drained.
CONSUME="dd bs=1M count=8 iflag=fullblock of=/dev/null 2>/dev/null;
    touch $TESTDIR/stalled; while [ ! -f $TESTDIR/go ]; do sleep 0.1; done;
    dd bs=1M count=56 iflag=fullblock of=/dev/null 2>/dev/null;
    touch $TESTDIR/drained"

# stall_run HOW CMD...: runs CMD (an ssh, in the background; HOW is
# "down" when the consumer takes its output, "up" when it runs on the
# server) and measures the RSS (KiB) of the process that receives (ssh,
# or the sshd-session): once the consumer stalled and the windows had a
# second to fill (STALLED), and two seconds after it took everything, the
# channel still open both ways (DRAINED; buffers give their memory back
# after a second empty).
stall_run() {
	_how=$1
	shift
	rm -f "$TESTDIR/stalled" "$TESTDIR/go" "$TESTDIR/drained" \
	    "$TESTDIR/fifo"
	mkfifo "$TESTDIR/fifo"
	STALLED=0
	DRAINED=0
	if [ $_how = down ]; then
		"$@" 'head -c 67108864 /dev/zero; sleep 3' >"$TESTDIR/fifo" \
		    2>"$TESTDIR/err" &
		_ssh=$!
		sh -c "$CONSUME" <"$TESTDIR/fifo" &
	else
		"$@" "$CONSUME; sleep 3" <"$TESTDIR/fifo" 2>"$TESTDIR/err" &
		_ssh=$!
		# Its input stays open: at its end sshd frees the buffer
		# anyway.
		{ head -c 67108864 /dev/zero; sleep 3; } >"$TESTDIR/fifo" &
	fi
	_other=$!
	hpn_track_pid $_ssh
	hpn_track_pid $_other
	if wait_until 30 test -f "$TESTDIR/stalled"; then
		sleep 1
		STALLED=`stall_rss $_how $_ssh`
		touch "$TESTDIR/go"
		wait_until 30 test -f "$TESTDIR/drained" && sleep 2 &&
		    DRAINED=`stall_rss $_how $_ssh`
	fi
	wait $_ssh
	wait $_other
	hpn_untrack_pid $_ssh
	hpn_untrack_pid $_other
	: ${STALLED:=0} ${DRAINED:=0}
}

# stall_rss HOW PID: the RSS (KiB) of ssh (PID) for "down", of the
# sshd-session for "up".
stall_rss() {
	if [ $1 = down ]; then
		proc_kib $2 VmRSS
	else
		session_rss
	fi
}

# rss_check NAME OURS STOCK SLACK: pass if OURS (KiB) is at most SLACK
# KiB above STOCK, and both were measured.
rss_check() {
	echo "# $1: RSS ours `expr $2 / 1024` MiB, stock's `expr $3 / 1024` MiB"
	if [ "$2" -le 0 ] || [ "$3" -le 0 ]; then
		fail "$1" "not measured: `tail -n 1 "$TESTDIR/err"`"
	elif [ "$2" -gt `expr $3 + $4` ]; then
		fail "$1" "ours $2 KiB, more than $4 KiB above stock's $3 KiB"
	else
		pass "$1"
	fi
}

# Downloads through a ProxyCommand (no TCP_INFO) and over TCP, stock's ssh
# and ours from our sshd: through the ProxyCommand our ssh's windows stay
# at a stock peer's cap (8064 KiB, 6 MiB above stock's window, and its
# allocation up to a quarter more), whatever the banner says; once
# drained, each ssh's buffers are back near stock's size.  (With the budget at HPNBufferSize the stalled ssh held 320 MiB
# more than stock's, and kept it after the drain.)
start_sshd mem hpn
for _via in proxy tcp; do
	set -- -F "$SSH_CONFIG"
	[ $_via = tcp ] || set -- "$@" -o "ProxyCommand $HPN_PROXY"
	stall_run down "$STOCK_BUILD/ssh" "$@" hpntest
	_sst=$STALLED
	_sdr=$DRAINED
	stall_run down "$HPN_BUILD/ssh" "$@" hpntest
	[ $_via = tcp ] || rss_check stalled-proxy $STALLED $_sst 12288
	rss_check drained-$_via-download $DRAINED $_sdr 4096
done
stop_sshd

# An upload whose command stalls, then takes everything: the sshd-session
# that received it is back near stock's size.
start_sshd memstock stock
stall_run up "$STOCK_BUILD/ssh" -F "$SSH_CONFIG" hpntest
_sdr=$DRAINED
stop_sshd
start_sshd mem hpn
stall_run up "$HPN_BUILD/ssh" -F "$SSH_CONFIG" hpntest
rss_check drained-upload $DRAINED $_sdr 4096
stop_sshd

# --- malloc_trim() at most once a second per process, however many
# channels give their buffers back (issue 46: once per second per
# channel, at 0.3-5.5 ms a call on a large heap).  Eight uploads through
# one connection (a ControlMaster), each into a command that stalls until
# $TESTDIR/go exists, then takes its 8 MiB and stays open: our sshd's
# session holds each channel's window in its buffers, then all eight give
# their memory back within a second or two of each other.  Every channel
# gives its buffers back, malloc_trim() runs at least once and fewer
# times than that, and never twice within a second (hpn-window.c's
# hpn_trim() logs each call with its monotonic time at debug2).
start_sshd trim hpn "LogLevel DEBUG2"
from=`log_mark`
CTL="$TESTDIR/trim.ctl"
"$HPN_BUILD/ssh" -F "$SSH_CONFIG" -M -S "$CTL" -N hpntest \
    2>"$TESTDIR/err.trim-master" &
MASTER=$!
hpn_track_pid $MASTER
wait_until 20 test -S "$CTL" ||
    die "the ControlMaster did not start: `tail -n 1 "$TESTDIR/err.trim-master"`"
rm -f "$TESTDIR/go"
i=0
CLIENTS=""
while [ $i -lt 8 ]; do
	{ head -c 8388608 /dev/zero; sleep 6; } |
	    "$HPN_BUILD/ssh" -F "$SSH_CONFIG" -S "$CTL" hpntest \
	    "while [ ! -f $TESTDIR/go ]; do sleep 0.1; done;
	    dd bs=1M count=8 iflag=fullblock of=/dev/null 2>/dev/null; sleep 3" \
	    2>>"$TESTDIR/err.trim" &
	CLIENTS="$CLIENTS $!"
	hpn_track_pid $!
	i=`expr $i + 1`
done
# Time for each channel's buffers to fill to its window (2 MiB).
sleep 2
touch "$TESTDIR/go"
for p in $CLIENTS; do
	wait $p
	hpn_untrack_pid $p
done
"$HPN_BUILD/ssh" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER
hpn_untrack_pid $MASTER
stop_sshd
gave=`log_count $from "give their memory back"`
log_since $from | sed -n 's/.*malloc_trim \([0-9]*\) at \([0-9.]*\) s.*/\2/p' \
    >"$TESTDIR/trims"
trims=`wc -l <"$TESTDIR/trims" | tr -d ' '`
close=`awk 'NR > 1 && $1 - last < 0.999 { printf "%.3f s after the last", \
    $1 - last; exit } { last = $1 }' "$TESTDIR/trims"`
echo "# trim-rate: $gave channels gave their buffers back, $trims malloc_trim calls"
if [ "$gave" -lt 8 ]; then
	fail trim-rate "$gave channels gave their buffers back, not 8"
elif [ "$trims" -lt 1 ] || [ "$trims" -ge "$gave" ]; then
	fail trim-rate "$trims malloc_trim calls for $gave channels"
elif [ -n "$close" ]; then
	fail trim-rate "malloc_trim ran again $close"
else
	pass trim-rate
fi
