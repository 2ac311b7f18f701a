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

# hwm PID: VmHWM of PID in KiB, or nothing once it is gone.
hwm() {
	sed -n 's/^VmHWM:[ 	]*\([0-9]*\) kB/\1/p' /proc/$1/status 2>/dev/null
}

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
		_h=`hwm $_pid`
		[ -n "$_h" ] && [ "$_h" -gt $_peak ] && _peak=$_h
		sleep 0.2
		_n=`expr $_n + 1`
	done
	# Three minutes: the agent stopped reading and never gave up.
	[ $_n -lt 900 ] || { kill $_py; _peak=0; }
	wait $_py
	_h=`hwm $_pid`
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
