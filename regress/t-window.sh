#!/bin/sh
#
# t-window.sh: dynamic channel windows.  The options in sshd -T / ssh -G and
# their bad values; then, on an emulated 100 Mbit/s, 50 ms RTT link
# (regress/lfn.sh, needs root), 64 MiB byte-exact transfers whose receiver's
# window must grow past stock's 2 MiB (from the debug2 log) and stay within
# the cap logged at debug2, base plus receive rate times minimum round
# trip, whose parts must add up and fit the link (a rate above zero, at
# most the link's; a round trip near the link's) and which must not pass
# HPNBufferSize: between patched peers (base 8 MiB) a session upload and
# download, a -L forwarding, a ControlMaster session, and an upload with
# HPNBufferSize just above 8 MiB, where the cap must stop at HPNBufferSize;
# a stock sender into our sshd and our ssh downloading from a stock sshd
# (base 8064 KiB).  Through a ProxyCommand (no TCP_INFO) the cap is fixed:
# 8064 KiB for a stock sshd, HPNBufferSize (32 MiB) for ours.  With
# HPNDisabled the window must stay at 2 MiB.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lfn.sh"

SSH="$HPN_BUILD/ssh"
SIZE=${HPN_WINDOW_BYTES:-67108864}
STOCK_WINDOW=2097152
STOCK_PEER_MAX=8257536		# HPN_WINDOW_STOCK_MAX
PATCHED_BASE=8388608		# HPN_WINDOW_HEADROOM
WINDOW_MAX=33554432		# HPN_WINDOW_MAX
LFN_MBIT=100
LFN_RTT_MS=50

hpn_keys

# --- Configuration: printed by sshd -T and ssh -G, bad values rejected
# with their line number.

sshd_conf() {
	_f="$TESTDIR/sshd_config.t"
	{
		echo "HostKey $TESTDIR/host_ed25519"
		echo "PidFile none"
		for _l in "$@"; do
			echo "$_l"
		done
	} >"$_f"
	echo "$_f"
}

ssh_conf() {
	_f="$TESTDIR/ssh_config.t"
	{
		echo "Host *"
		echo "	User nobody"
		for _l in "$@"; do
			echo "	$_l"
		done
	} >"$_f"
	echo "$_f"
}

# want_lines NAME OUTPUT LINE...: every LINE appears in OUTPUT, in any
# case (sshd -T prints mixed-case keywords since 10.5p1).
want_lines() {
	_n="$1"
	_o="$2"
	shift 2
	for _l in "$@"; do
		if ! printf '%s\n' "$_o" | grep -qix "$_l"; then
			fail "$_n" "no line '$_l' in output: `printf '%s\n' \
			    "$_o" | grep -iE 'hpn|tcprcv' | tr '\n' ' '`"
			return
		fi
	done
	pass "$_n"
}

out=`"$HPN_BUILD/sshd" -T -f "\`sshd_conf\`" 2>&1`
want_lines sshd-T-defaults "$out" "hpndisabled no" "hpnbuffersize 32768" \
    "tcprcvbufpoll yes" "tcprcvbuf 0"
out=`"$HPN_BUILD/sshd" -T -f "\`sshd_conf 'HPNDisabled yes' \
    'HPNBufferSize 8192' 'TcpRcvBufPoll no' 'TcpRcvBuf 4096'\`" 2>&1`
want_lines sshd-T-set "$out" "hpndisabled yes" "hpnbuffersize 8192" \
    "tcprcvbufpoll no" "tcprcvbuf 4096"
out=`"$SSH" -G -F "\`ssh_conf\`" somehost 2>&1`
want_lines ssh-G-defaults "$out" "hpndisabled no" "hpnbuffersize 32768" \
    "tcprcvbufpoll yes" "tcprcvbuf 0"
out=`"$SSH" -G -F "\`ssh_conf 'HPNDisabled yes' 'HPNBufferSize 8192' \
    'TcpRcvBufPoll no' 'TcpRcvBuf 4096'\`" somehost 2>&1`
want_lines ssh-G-set "$out" "hpndisabled yes" "hpnbuffersize 8192" \
    "tcprcvbufpoll no" "tcprcvbuf 4096"

# Each bad line is line 3 of the sshd file and line 3 of the ssh file.
for bad in "TcpRcvBuf -1" "TcpRcvBuf 65537" "TcpRcvBuf many" \
    "HPNDisabled maybe" "HPNBufferSize 0" "HPNBufferSize 70000" \
    "TcpRcvBufPoll sometimes"; do
	n=`echo "$bad" | tr ' ' '-'`
	if out=`"$HPN_BUILD/sshd" -t -f "\`sshd_conf "$bad"\`" 2>&1`; then
		fail "sshd-rejects-$n" "sshd -t accepted '$bad'"
	elif printf '%s\n' "$out" | grep -q "line 3"; then
		pass "sshd-rejects-$n"
	else
		fail "sshd-rejects-$n" "no line number: $out"
	fi
	if out=`"$SSH" -G -F "\`ssh_conf "$bad"\`" somehost 2>&1`; then
		fail "ssh-rejects-$n" "ssh -G accepted '$bad'"
	elif printf '%s\n' "$out" | grep -q "line 3"; then
		pass "ssh-rejects-$n"
	else
		fail "ssh-rejects-$n" "no line number: $out"
	fi
done

# --- On the emulated long fat network.

if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
lfn_up $LFN_MBIT $LFN_RTT_MS
DATA=`make_data $SIZE`

# max_window LOGFILE [FROM-LINE]: the largest window a channel grew to.
max_window() {
	tail -n +${2:-1} "$1" | sed -n 's/.*channel [0-9]*: window [0-9]* grows to \([0-9]*\).*/\1/p' |
	    sort -n | tail -n 1
}

# grew NAME LOG FROM-LINE [MAX]: pass if the window grew past stock's
# and no further than MAX.
grew() {
	_w=`max_window "$2" "$3"`
	if [ -z "$_w" ] || [ "$_w" -le $STOCK_WINDOW ]; then
		fail "$1" "window did not grow past $STOCK_WINDOW (${_w:-no growth logged})"
	elif [ -n "${4:-}" ] && [ "$_w" -gt "$4" ]; then
		fail "$1" "window grew to $_w, past $4"
	else
		pass "$1"
		echo "# $1: window grew to $_w"
	fi
}

did_not_grow() {
	_w=`max_window "$2" "$3"`
	if [ -n "$_w" ]; then
		fail "$1" "window grew to $_w with HPNDisabled"
	else
		pass "$1"
	fi
}

lines() {
	expr `wc -l <"$1"` + 1
}

# peer_cap NAME LOG FROM-LINE KIND BASE [MAX]: the caps logged at debug2
# for a KIND (stock or patched) peer,
#   "KIND peer: window cap C = B + rate R B/s * min_rtt T us (max M)",
# each of which must add up (C = min(B + R * T / 10^6, M)), with B = BASE,
# M = MAX (default WINDOW_MAX, our HPNBufferSize) and C <= M, R within the
# link's rate (10% slack for sampling) and T within the round trips lfn_up
# accepts; at least one R must be above zero (the cap grew as the link
# proved its rate).  Sets CAP to the largest cap.
peer_cap() {
	_max=${6:-$WINDOW_MAX}
	_caps=`cap_lines "$2" $3 $4`
	CAP=0
	if [ -z "$_caps" ]; then
		fail "$1" "no $4-peer cap with rate and round trip logged"
		return
	fi
	_ratemax=`expr $LFN_MBIT \* 125000 \* 11 / 10`
	_rttlo=`expr \( $LFN_RTT_MS - 2 \) \* 1000`
	_rtthi=`expr \( $LFN_RTT_MS + $LFN_RTT_MS / 5 + 5 \) \* 1000`
	_why=`printf '%s\n' "$_caps" | {
		_moved=0
		while read _c _b _r _t _m; do
			_p=$(cap_problem $_c $_b $_r $_t $_m $5 $_max)
			if [ -n "$_p" ]; then
				echo "$_p"
			elif [ $_r -gt $_ratemax ]; then
				echo "rate $_r B/s above the link's $LFN_MBIT Mbit/s"
			elif [ $_t -lt $_rttlo ] || [ $_t -gt $_rtthi ]; then
				echo "min_rtt $_t us, link $LFN_RTT_MS ms"
			fi
			[ $_r -eq 0 ] || _moved=1
		done
		[ $_moved = 1 ] || echo "no cap with a rate above 0"
	} | head -n 1`
	CAP=`printf '%s\n' "$_caps" | cut -d' ' -f1 | sort -n | tail -n 1`
	if [ -n "$_why" ]; then
		fail "$1" "$_why"
	else
		pass "$1"
		echo "# $1: `printf '%s\n' "$_caps" | wc -l` caps logged," \
		    "largest $CAP: `printf '%s\n' "$_caps" |
		    sort -n | tail -n 1 | awk '{ print $2 " + " $3 " B/s * " \
		    $4 " us" }'`"
	fi
}

# fixed_cap NAME LOG KIND CAP: LOG has KIND's fixed cap CAP (no TCP_INFO)
# and no rate-based one, and the window grew to exactly CAP.
fixed_cap() {
	_w=`max_window "$2" 1`
	if ! grep -q "$3 peer: window cap $4, fixed (no TCP_INFO)" "$2"; then
		fail "$1" "no fixed cap $4 logged: `grep "peer: window cap" \
		    "$2" | head -n 1`"
	elif grep -q "peer: window cap [0-9]* = " "$2"; then
		fail "$1" "a rate-based cap without a socket"
	elif [ "${_w:-0}" -ne $4 ]; then
		fail "$1" "window grew to ${_w:-nothing}, not to $4"
	else
		pass "$1"
	fi
}

# same NAME FILE: byte-exact check against DATA.
same() {
	if _why=`same_file "$DATA" "$2"`; then
		pass "$1"
	else
		fail "$1" "$_why"
	fi
	rm -f "$2"
}

# Session upload and download, our ssh and our sshd.
lfn_start_sshd hpn hpn "LogLevel DEBUG2"
from=`lines "$SSHD_LOG"`
if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
    2>"$TESTDIR/err"; then
	same session-upload "$TESTDIR/up"
	peer_cap session-upload-cap "$SSHD_LOG" $from patched $PATCHED_BASE
	grew session-upload-window "$SSHD_LOG" $from $CAP
else
	fail session-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
if lfn_a "$SSH" -vv -E "$TESTDIR/down.log" -F "$SSH_CONFIG" hpntest \
    "cat $DATA" >"$TESTDIR/down"; then
	same session-download "$TESTDIR/down"
	peer_cap session-download-cap "$TESTDIR/down.log" 1 patched \
	    $PATCHED_BASE
	grew session-download-window "$TESTDIR/down.log" 1 $CAP
else
	fail session-download "ssh failed: `tail -n 1 "$TESTDIR/down.log"`"
fi

# A -L forwarding into a sink in B; sshd receives the channel's data.
from=`lines "$SSHD_LOG"`
ip netns exec "$LFN_B" "$TESTDIR/lfnperf" -s $LFN_ADDR_B 5301 \
    "$TESTDIR/fwd" &
SINK=$!
hpn_track_pid $SINK
ip netns exec "$LFN_A" "$SSH" -F "$SSH_CONFIG" -N \
    -o ExitOnForwardFailure=yes -L 127.0.0.1:5302:$LFN_ADDR_B:5301 \
    hpntest 2>"$TESTDIR/fwd.err" &
FWD=$!
hpn_track_pid $FWD
i=0
until lfn_a ss -Htln "sport = :5302" | grep -q .; do
	i=`expr $i + 1`
	if [ $i -gt 100 ] || ! kill -0 $FWD 2>/dev/null; then
		break
	fi
	sleep 0.1
done
if lfn_a "$TESTDIR/lfnperf" -c 127.0.0.1 5302 "@$DATA" >/dev/null; then
	wait $SINK
	same forward-L "$TESTDIR/fwd"
	peer_cap forward-L-cap "$SSHD_LOG" $from patched $PATCHED_BASE
	grew forward-L-window "$SSHD_LOG" $from $CAP
else
	fail forward-L "transfer through -L failed: `tail -n 1 \
	    "$TESTDIR/fwd.err"`"
fi
kill $FWD 2>/dev/null
wait $FWD 2>/dev/null

# A ControlMaster and two multiplexed sessions: the upload's window is
# sshd's, the download's is the master's.
CTL="$TESTDIR/ctl"
ip netns exec "$LFN_A" "$SSH" -F "$SSH_CONFIG" -M -S "$CTL" -N -vv \
    -E "$TESTDIR/master.log" hpntest &
MASTER=$!
hpn_track_pid $MASTER
i=0
until [ -S "$CTL" ] || [ $i -gt 100 ]; do
	i=`expr $i + 1`
	sleep 0.1
done
from=`lines "$SSHD_LOG"`
if lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "cat > $TESTDIR/up" \
    <"$DATA" 2>"$TESTDIR/err"; then
	same mux-upload "$TESTDIR/up"
	peer_cap mux-upload-cap "$SSHD_LOG" $from patched $PATCHED_BASE
	grew mux-upload-window "$SSHD_LOG" $from $CAP
else
	fail mux-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
mfrom=`lines "$TESTDIR/master.log"`
if lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "cat $DATA" \
    >"$TESTDIR/down" 2>"$TESTDIR/err"; then
	same mux-download "$TESTDIR/down"
	# The master's caps since it started: the highest may come first.
	peer_cap mux-download-cap "$TESTDIR/master.log" 1 patched \
	    $PATCHED_BASE
	grew mux-download-window "$TESTDIR/master.log" $mfrom $CAP
else
	fail mux-download "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER 2>/dev/null

# A stock sender into our sshd: the window grows, but stays within what
# a stock sender's buffers handle well: the cap.
from=`lines "$SSHD_LOG"`
if lfn_a "$STOCK_BUILD/ssh" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" \
    <"$DATA" 2>"$TESTDIR/err"; then
	same stock-upload "$TESTDIR/up"
	peer_cap stock-upload-cap "$SSHD_LOG" $from stock $STOCK_PEER_MAX
	grew stock-upload-window "$SSHD_LOG" $from $CAP
else
	fail stock-upload "stock ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
stop_sshd

# HPNBufferSize 8200 KiB, just above the 8 MiB base: once the link shows
# a rate, the cap stops at HPNBufferSize, and so does the window.
SMALL_MAX=8396800
lfn_start_sshd small hpn "LogLevel DEBUG2" "HPNBufferSize 8200"
if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
    2>"$TESTDIR/err"; then
	same small-upload "$TESTDIR/up"
	peer_cap small-upload-cap "$SSHD_LOG" 1 patched $PATCHED_BASE \
	    $SMALL_MAX
	if [ $CAP -ne $SMALL_MAX ]; then
		fail small-upload-max "largest cap $CAP, not $SMALL_MAX"
	else
		pass small-upload-max
	fi
	grew small-upload-window "$SSHD_LOG" 1 $SMALL_MAX
else
	fail small-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
stop_sshd

# HPNDisabled on both sides: stock's fixed windows.
lfn_start_sshd off hpn "LogLevel DEBUG2" "HPNDisabled yes"
if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
    2>"$TESTDIR/err"; then
	same disabled-upload "$TESTDIR/up"
	did_not_grow disabled-upload-window "$SSHD_LOG" 1
else
	fail disabled-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
if lfn_a "$SSH" -o HPNDisabled=yes -vv -E "$TESTDIR/down.off.log" \
    -F "$SSH_CONFIG" hpntest "cat $DATA" >"$TESTDIR/down"; then
	same disabled-download "$TESTDIR/down"
	did_not_grow disabled-download-window "$TESTDIR/down.off.log" 1
else
	fail disabled-download "ssh failed"
fi
stop_sshd

# Our ssh downloading from a stock sshd.
lfn_start_sshd stock stock
if lfn_a "$SSH" -vv -E "$TESTDIR/down.stock.log" -F "$SSH_CONFIG" \
    hpntest "cat $DATA" >"$TESTDIR/down"; then
	same stock-download "$TESTDIR/down"
	peer_cap stock-download-cap "$TESTDIR/down.stock.log" 1 stock \
	    $STOCK_PEER_MAX
	grew stock-download-window "$TESTDIR/down.stock.log" 1 $CAP
else
	fail stock-download "ssh failed: `tail -n 1 "$TESTDIR/down.stock.log"`"
fi

# proxy_download NAME PEER CAP: our ssh downloads $DATA from the running
# sshd through a ProxyCommand: no socket, so no TCP_INFO; with
# TcpRcvBufPoll=no the window goes straight to the fixed cap CAP, logged
# for a PEER ("stock" or "patched") peer.
# The reader in the background is killed when the proxy ends: left alone
# it would hold the TCP connection, and with it the sshd session, open.
PROXY="bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & r=\$!; trap \"kill \$r\" EXIT; cat >&3'"
proxy_download() {
	_log="$TESTDIR/down.$1.log"
	if ! command -v bash >/dev/null 2>&1; then
		skip "$1" "no bash for the ProxyCommand (/dev/tcp)"
	elif lfn_a "$SSH" -vv -E "$_log" -F "$SSH_CONFIG" \
	    -o TcpRcvBufPoll=no -o "ProxyCommand $PROXY" hpntest \
	    "cat $DATA" >"$TESTDIR/down"; then
		same "$1" "$TESTDIR/down"
		fixed_cap "$1-cap" "$_log" "$2" "$3"
	else
		fail "$1" "ssh failed: `tail -n 1 "$_log"`"
	fi
}

# The same through a ProxyCommand: the stock peer's cap stays 8064 KiB.
proxy_download stock-proxy-download stock $STOCK_PEER_MAX
stop_sshd

# Our ssh from our sshd through a ProxyCommand: without TCP_INFO a
# patched peer's window follows the TCP receive buffer up to HPNBufferSize
# as before the cap; with TcpRcvBufPoll=no it goes straight to 32 MiB.
lfn_start_sshd hpn2 hpn
proxy_download patched-proxy-download patched $WINDOW_MAX
stop_sshd
exit 0
