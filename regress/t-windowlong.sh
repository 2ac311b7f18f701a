#!/bin/sh
#
# t-windowlong.sh: dynamic channel windows (patch 0003) on a long round
# trip: 1 Gbit/s at 600 ms, a bandwidth-delay product of 75 MB (the
# window 10 Gbit/s needs at 60 ms), on an emulated link (bench/lfn.sh,
# needs root).  A 256 MiB upload whose window doubles while the link
# fills and grows past the old 32 MiB limit, within the budget; the same
# from a stock sender, whose window doubles too (within its own rule);
# and sixteen channels on one ControlMaster (one whose command never
# reads its input, fourteen idle, one upload) where only the upload's
# window grows and no growth leaves the windows' sum above the budget
# (the sshd-session's peak RSS is printed).  hpn-window.c's logic: on
# the default release only, and not with HPN_WINDOW_LONG=no.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"
. "$HPN_TOP/regress/lib-window.sh"

if [ "${HPN_WINDOW_LONG:-yes}" = no ] || default_release_only "long-*"; then
	exit 0
fi
if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
LFN_MBIT=1000
LFN_RTT_MS=600
lfn_up $LFN_MBIT $LFN_RTT_MS
DATA=`make_data ${HPN_WINDOW_LONG_BYTES:-268435456}`
OLD_MAX=33554432		# the largest window before the budget

# One upload: the window grows past the old 32 MiB limit, within the
# budget, whose parts add up.
lfn_start_sshd long hpn "LogLevel DEBUG2" "MaxSessions 20"
if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
    2>"$TESTDIR/err"; then
	same long-upload "$TESTDIR/up"
	peer_budget long-upload-budget "$SSHD_LOG" 0 patched $PATCHED_BASE
	grew long-upload-window "$SSHD_LOG" 0 $NEED
	_w=`max_window "$SSHD_LOG"`
	if [ "${_w:-0}" -gt $OLD_MAX ]; then
		pass long-upload-past-32M
	else
		fail long-upload-past-32M "window grew to ${_w:-nothing}, not past $OLD_MAX"
	fi
	# While the link filled, the windows doubled each round trip: some
	# budget's headroom is above both 8 MiB and per_rtt.
	_d=`budget_lines "$SSHD_LOG" 0 patched |
	    awk '$6 > 8388608 && $6 > $5 { n++ } END { print n + 0 }'`
	if [ $_d -gt 0 ]; then
		pass long-upload-doubling
	else
		fail long-upload-doubling "no budget with a doubling headroom"
	fi
else
	fail long-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi

# A stock sender on the same link: its windows double too while the link
# fills (some budget's need is twice the window that turned over, above
# 8064 KiB plus that window or per_rtt), within the budget.
from=`log_mark "$SSHD_LOG"`
lfn_upload long-stock-upload stock $STOCK_PEER_MAX "stock ssh" \
    "$STOCK_BUILD/ssh" -F "$SSH_CONFIG"
_d=`budget_lines "$SSHD_LOG" $from stock |
    awk -v b=$STOCK_PEER_MAX '$2 == 2 * $13 && $2 > ($13 > $5 ? $13 : $5) + b {
	n++ } END { print n + 0 }'`
if [ $_d -gt 0 ]; then
	pass long-stock-upload-doubling
else
	fail long-stock-upload-doubling "no budget with a doubling headroom"
fi

# Sixteen channels on one ControlMaster: one whose command never reads
# its input (fed from /dev/zero), fourteen idle, and one upload.  Only
# the upload's window grows; no growth leaves the sum of the windows
# above the budget.
CTL="$TESTDIR/ctl16"
ip netns exec "$LFN_A" "$SSH" -F "$SSH_CONFIG" -M -S "$CTL" -N hpntest \
    2>"$TESTDIR/m16.err" &
MASTER=$!
hpn_track_pid $MASTER
wait_until 20 test -S "$CTL" || fail mux16-master "no control socket"
# First the upload alone, for sshd-session's peak RSS with one channel.
SMALL=`make_data 67108864`
if lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "cat > $TESTDIR/up" \
    <"$SMALL" 2>"$TESTDIR/err"; then
	hwm1=`sessions_hwm`
else
	fail mux16-alone "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
from=`log_mark "$SSHD_LOG"`
# sessions_open N: sshd opened at least N session channels since the mark.
sessions_open() {
	test "`log_since $from |
	    grep -c 'channel [0-9]*: new session'`" -ge $1
}
lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "sleep 60" </dev/zero \
    >/dev/null 2>&1 &
STALL=$!
hpn_track_pid $STALL
# sshd gives a new channel the lowest free number: the stalled one is 0,
# as the upload alone before it has been freed.
wait_until 20 sessions_open 1 ||
    fail mux16-stalled "its channel did not open"
IDLE=""
i=0
while [ $i -lt 14 ]; do
	lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "sleep 60" \
	    </dev/null >/dev/null 2>&1 &
	IDLE="$IDLE $!"
	hpn_track_pid $!
	i=`expr $i + 1`
done
wait_until 30 sessions_open 15 ||
    fail mux16-idle "not all idle channels opened"
hwm0=`sessions_hwm`
if lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "cat > $TESTDIR/up" \
    <"$DATA" 2>"$TESTDIR/err"; then
	same mux16-upload "$TESTDIR/up"
	if log_since $from | grep -q "Accepted "; then
		fail mux16-one-connection "a session did not go through the master"
	else
		pass mux16-one-connection
	fi
	grows=`log_since $from |
	    sed -n 's/.*channel \([0-9]*\): window [0-9]* grows to.*/\1/p' |
	    sort -u`
	if [ -z "$grows" ]; then
		fail mux16-only-busy-grows "no window grew"
	elif [ "`echo $grows | wc -w`" -ne 1 ] || [ "$grows" = 0 ]; then
		fail mux16-only-busy-grows "windows of channels `echo $grows` grew"
	else
		pass mux16-only-busy-grows
		echo "# mux16: only channel $grows grew, to" \
		    "`max_window "$SSHD_LOG" $from`"
	fi
	if _why=`window_sums "$SSHD_LOG" $from` && [ -z "$_why" ]; then
		pass mux16-sum-in-budget
	else
		fail mux16-sum-in-budget "$_why"
	fi
	echo "# mux16: sshd-session peak RSS `sessions_hwm` KiB with 16" \
	    "channels ($hwm0 KiB before their upload; ${hwm1:-?} KiB" \
	    "after a 64 MiB upload alone)"
else
	fail mux16-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
for p in $STALL $IDLE; do
	kill $p 2>/dev/null
done
lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER 2>/dev/null
stop_sshd
exit 0
