#!/bin/sh
#
# t-window.sh: dynamic channel windows (patch 0003, hpn-window.c).  The
# options in sshd -T / ssh -G and their bad values; then, on an emulated
# 100 Mbit/s, 50 ms RTT link (bench/lfn.sh, needs root), 64 MiB
# byte-exact transfers whose receiver's window must grow past stock's
# 2 MiB (from the debug2 log) and stay within the connection's window
# budget logged at debug2: the data carried in a round trip (receive rate
# times minimum round trip) plus headroom, and a stock window for each
# idle channel, whose parts must add up and fit the link (a rate at most
# the link's; a round trip near the link's) and which must not pass
# HPNBufferSize: between patched peers (headroom at least 8 MiB) a
# session upload and download, a -L forwarding, a ControlMaster session,
# and an upload with HPNBufferSize just above 8 MiB, where the need must
# stop at HPNBufferSize; a stock sender into our sshd and our ssh
# downloading from a stock sshd (headroom 8064 KiB).  Through a
# ProxyCommand (no TCP_INFO) the need is fixed at 8064 KiB, for a stock
# sshd and for ours.  With HPNDisabled the window must stay at 2 MiB.
# With the server's tcp_rmem maximum at 1 MiB, sshd says once that the
# kernel holds the transfer back.  On a 1 Gbit/s, 100 ms link, a 512
# MiB download from a stock sshd that rekeys every 128 MiB: exact, and
# once a queue has formed, no need after the first rekey (its held-back
# burst turns a window over within a round trip) is above the largest
# before it or per_rtt + 8064 KiB, and the windows go back paced, in
# adjusts of 2 MiB at most.
# The 600 ms link is t-windowlong.sh's; the rekeys the windows make
# earlier, t-rekey.sh's.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"
. "$HPN_TOP/regress/lib-window.sh"

SIZE=${HPN_WINDOW_BYTES:-67108864}
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
want_lines sshd-T-defaults "$out" "hpndisabled no" "hpnbuffersize 262144" \
    "tcprcvbufpoll yes" "tcprcvbuf 0"
out=`"$HPN_BUILD/sshd" -T -f "\`sshd_conf 'HPNDisabled yes' \
    'HPNBufferSize 8192' 'TcpRcvBufPoll no' 'TcpRcvBuf 4096'\`" 2>&1`
want_lines sshd-T-set "$out" "hpndisabled yes" "hpnbuffersize 8192" \
    "tcprcvbufpoll no" "tcprcvbuf 4096"
out=`"$SSH" -G -F "\`ssh_conf\`" somehost 2>&1`
want_lines ssh-G-defaults "$out" "hpndisabled no" "hpnbuffersize 262144" \
    "tcprcvbufpoll yes" "tcprcvbuf 0"
out=`"$SSH" -G -F "\`ssh_conf 'HPNDisabled yes' 'HPNBufferSize 8192' \
    'TcpRcvBufPoll no' 'TcpRcvBuf 4096'\`" somehost 2>&1`
want_lines ssh-G-set "$out" "hpndisabled yes" "hpnbuffersize 8192" \
    "tcprcvbufpoll no" "tcprcvbuf 4096"

# Each bad line is line 3 of the sshd file and line 3 of the ssh file.
for bad in "TcpRcvBuf -1" "TcpRcvBuf 524289" "TcpRcvBuf many" \
    "HPNDisabled maybe" "HPNBufferSize 0" "HPNBufferSize 524289" \
    "TcpRcvBufPoll sometimes"; do
	n=`echo "$bad" | tr ' ' '-'`
	check_rejected "sshd-rejects-$n" 3 "sshd -t accepted '$bad'" \
	    "$HPN_BUILD/sshd" -t -f "`sshd_conf "$bad"`"
	check_rejected "ssh-rejects-$n" 3 "ssh -G accepted '$bad'" \
	    "$SSH" -G -F "`ssh_conf "$bad"`" somehost
done

# --- On the emulated long fat network.

if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
lfn_up $LFN_MBIT $LFN_RTT_MS
DATA=`make_data $SIZE`

# Session upload and download, our ssh and our sshd.
lfn_start_sshd hpn hpn "LogLevel DEBUG2"
lfn_upload session-upload patched $PATCHED_BASE ssh "$SSH" -F "$SSH_CONFIG"
if lfn_a "$SSH" -vv -E "$TESTDIR/down.log" -F "$SSH_CONFIG" hpntest \
    "cat $DATA" >"$TESTDIR/down"; then
	same session-download "$TESTDIR/down"
	peer_budget session-download-budget "$TESTDIR/down.log" 0 patched \
	    $PATCHED_BASE
	grew session-download-window "$TESTDIR/down.log" 0 $NEED
else
	fail session-download "ssh failed: `tail -n 1 "$TESTDIR/down.log"`"
fi

# On other releases, a session's channel hooks are the ones a forwarding
# and a multiplexed session use.
if ! default_release_only "forward-L, mux-*"; then
	# A -L forwarding into a sink in B; sshd receives the channel's data.
	from=`log_mark "$SSHD_LOG"`
	ip netns exec "$LFN_B" "$TESTDIR/lfnperf" -s $LFN_ADDR_B 5301 \
	    "$TESTDIR/fwd" &
	SINK=$!
	hpn_track_pid $SINK
	ip netns exec "$LFN_A" "$SSH" -F "$SSH_CONFIG" -N \
	    -o ExitOnForwardFailure=yes -L 127.0.0.1:5302:$LFN_ADDR_B:5301 \
	    hpntest 2>"$TESTDIR/fwd.err" &
	FWD=$!
	hpn_track_pid $FWD
	# fwd_settled: the forward listens, or its ssh has ended.
	fwd_settled() {
		lfn_a ss -Htln "sport = :5302" | grep -q . ||
		    ! kill -0 $FWD 2>/dev/null
	}
	wait_until 10 fwd_settled
	if lfn_a "$TESTDIR/lfnperf" -c 127.0.0.1 5302 "@$DATA" >/dev/null; then
		wait $SINK
		same forward-L "$TESTDIR/fwd"
		peer_budget forward-L-budget "$SSHD_LOG" $from patched \
		    $PATCHED_BASE
		grew forward-L-window "$SSHD_LOG" $from $NEED
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
	wait_until 10 test -S "$CTL"
	lfn_upload mux-upload patched $PATCHED_BASE ssh "$SSH" \
	    -F "$SSH_CONFIG" -S "$CTL"
	mfrom=`log_mark "$TESTDIR/master.log"`
	if lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest "cat $DATA" \
	    >"$TESTDIR/down" 2>"$TESTDIR/err"; then
		same mux-download "$TESTDIR/down"
		# The master's caps since it started: the highest may
		# come first.
		peer_budget mux-download-budget "$TESTDIR/master.log" 0 \
		    patched $PATCHED_BASE
		grew mux-download-window "$TESTDIR/master.log" $mfrom $NEED
	else
		fail mux-download "ssh failed: `tail -n 1 "$TESTDIR/err"`"
	fi
	lfn_a "$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
	wait $MASTER 2>/dev/null
fi

# A stock sender into our sshd: the window grows, but stays within what
# a stock sender's buffers handle well: the cap.
lfn_upload stock-upload stock $STOCK_PEER_MAX "stock ssh" "$STOCK_BUILD/ssh" \
    -F "$SSH_CONFIG"
stop_sshd

# What HPNBufferSize, a ProxyCommand (no TCP_INFO) and the kernel's
# buffer limit do to the budget is hpn-window.c's logic: the default
# release checks it.
if ! default_release_only "small-*"; then
	# HPNBufferSize 8200 KiB, just above the 8 MiB base: once the link shows
	# a rate, the cap stops at HPNBufferSize, and so does the window.
	SMALL_MAX=8396800
	lfn_start_sshd small hpn "LogLevel DEBUG2" "HPNBufferSize 8200"
	if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
	    2>"$TESTDIR/err"; then
		same small-upload "$TESTDIR/up"
		peer_budget small-upload-budget "$SSHD_LOG" 0 patched \
		    $PATCHED_BASE $SMALL_MAX
		if [ $NEED -ne $SMALL_MAX ]; then
			fail small-upload-max \
			    "largest need $NEED, not $SMALL_MAX"
		else
			pass small-upload-max
		fi
		grew small-upload-window "$SSHD_LOG" 0 $SMALL_MAX
	else
		fail small-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
	fi
	stop_sshd
fi

# HPNDisabled on both sides: stock's fixed windows.
lfn_start_sshd off hpn "LogLevel DEBUG2" "HPNDisabled yes"
if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
    2>"$TESTDIR/err"; then
	same disabled-upload "$TESTDIR/up"
	did_not_grow disabled-upload-window "$SSHD_LOG" 0
else
	fail disabled-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
fi
if lfn_a "$SSH" -o HPNDisabled=yes -vv -E "$TESTDIR/down.off.log" \
    -F "$SSH_CONFIG" hpntest "cat $DATA" >"$TESTDIR/down"; then
	same disabled-download "$TESTDIR/down"
	did_not_grow disabled-download-window "$TESTDIR/down.off.log" 0
else
	fail disabled-download "ssh failed"
fi
stop_sshd

# Our ssh downloading from a stock sshd.
lfn_start_sshd stock stock
if lfn_a "$SSH" -vv -E "$TESTDIR/down.stock.log" -F "$SSH_CONFIG" \
    hpntest "cat $DATA" >"$TESTDIR/down"; then
	same stock-download "$TESTDIR/down"
	peer_budget stock-download-budget "$TESTDIR/down.stock.log" 0 stock \
	    $STOCK_PEER_MAX
	grew stock-download-window "$TESTDIR/down.stock.log" 0 $NEED
else
	fail stock-download "ssh failed: `tail -n 1 "$TESTDIR/down.stock.log"`"
fi

# proxy_download NAME PEER CAP: our ssh downloads $DATA from the running
# sshd through a ProxyCommand: no socket, so no TCP_INFO; with
# TcpRcvBufPoll=no the window goes straight to the fixed cap CAP, logged
# for a PEER ("stock" or "patched") peer.
proxy_download() {
	_log="$TESTDIR/down.$1.log"
	if ! command -v bash >/dev/null 2>&1; then
		skip "$1" "no bash for the ProxyCommand (/dev/tcp)"
	elif lfn_a "$SSH" -vv -E "$_log" -F "$SSH_CONFIG" \
	    -o TcpRcvBufPoll=no -o "ProxyCommand $HPN_PROXY" hpntest \
	    "cat $DATA" >"$TESTDIR/down"; then
		same "$1" "$TESTDIR/down"
		fixed_budget "$1-budget" "$_log" "$2" "$3"
	else
		fail "$1" "ssh failed: `tail -n 1 "$_log"`"
	fi
}

# The same through a ProxyCommand: the stock peer's cap stays 8064 KiB.
default_release_only "stock-proxy-*" ||
    proxy_download stock-proxy-download stock $STOCK_PEER_MAX
stop_sshd

if ! default_release_only "patched-proxy-*, rmem-*"; then
	# Our ssh from our sshd through a ProxyCommand: without TCP_INFO (and
	# without a socket whose receive buffer to follow) a patched peer's need
	# is a stock peer's, 8064 KiB, whatever its banner says.
	lfn_start_sshd hpn2 hpn
	proxy_download patched-proxy-download patched $STOCK_PEER_MAX
	stop_sshd

	# The kernel's limit: with B's net.ipv4.tcp_rmem maximum at 1 MiB, the
	# TCP receive buffer, not the window, holds the transfer, and sshd says
	# so at debug1, once.
	lfn_b sysctl -q -w net.ipv4.tcp_rmem="4096 131072 1048576"
	lfn_start_sshd rmem hpn "LogLevel DEBUG1"
	if lfn_a "$SSH" -F "$SSH_CONFIG" hpntest "cat > $TESTDIR/up" <"$DATA" \
	    2>"$TESTDIR/err"; then
		same rmem-upload "$TESTDIR/up"
		_n=`grep -c "TCP receive buffer at its limit, net.ipv4.tcp_rmem maximum 1048576 (SO_RCVBUF [0-9]*): it, not the window (up to [0-9]*), holds the transfer" "$SSHD_LOG"`
		if [ "$_n" = 1 ]; then
			pass rmem-limit-logged
		else
			fail rmem-limit-logged "$_n lines about the TCP \
receive buffer's limit, not 1"
		fi
	else
		fail rmem-upload "ssh failed: `tail -n 1 "$TESTDIR/err"`"
	fi
	stop_sshd
	lfn_b sysctl -q -w net.ipv4.tcp_rmem="4096 131072 268435456"
fi

# --- A stock sshd's rekeys, on a 1 Gbit/s, 100 ms link.
default_release_only "rekey-burst-*" && exit 0
lfn_down
LFN_MBIT=1000
LFN_RTT_MS=100
lfn_up $LFN_MBIT $LFN_RTT_MS
DATA=`make_data 536870912`
# need_at LOG: the stock-peer budgets in LOG, one line per budget logged,
# each "LINE NEED PER_RTT MIN_RTT LARGEST_SRTT".
need_at() {
	grep -n 'stock peer: window budget .*need = per_rtt' "$1" |
	    sed 's/^\([0-9]*\):.* = need \([0-9]*\) .*per_rtt \([0-9]*\) .*min_rtt \([0-9]*\) us.*largest \([0-9]*\) us.*/\1 \2 \3 \4 \5/'
}
# A rekey sends nothing for a round trip, then what waited at once: a
# window turns over within a round trip.  Once a queue has formed (the
# largest smoothed round trip at 5/4 of the minimum) that is a burst, not
# a faster path: no need logged after the first rekey is above the
# largest before it or per_rtt + 8064 KiB, whichever is more (it grew
# to 2.6 times that, and BBR overfilled the link's queue for the rest of
# the copy).
lfn_start_sshd rekey stock "RekeyLimit 128M"
if lfn_a "$SSH" -vv -E "$TESTDIR/down.rekey.log" -F "$SSH_CONFIG" \
    hpntest "cat $DATA" >"$TESTDIR/down"; then
	same rekey-burst-download "$TESTDIR/down"
	_k=`grep -n 'SSH2_MSG_KEXINIT received' "$TESTDIR/down.rekey.log" |
	    sed -n '2s/:.*//p'`
	_r=`need_at "$TESTDIR/down.rekey.log" | awk -v k=${_k:-0} \
	    -v base=$STOCK_PEER_MAX '
	    $1 < k { b = $2; next }
	    $5 < $4 + $4 / 4 { next }
	    { if ($3 > p) p = $3; m = b > p + base ? b : p + base
	      if ($2 > m && !bad) bad = $2 " above " m; n++ }
	    END { print (bad ? bad : "ok " b " " n + 0) }'`
	if [ -z "$_k" ]; then
		fail rekey-burst-need "the server did not rekey"
	elif [ "${_r%% *}" != ok ]; then
		fail rekey-burst-need "after the first rekey a need of $_r"
	else
		pass rekey-burst-need
		set -- $_r
		echo "# rekey-burst-need: largest need before the first" \
		    "rekey $2; $3 logged after it with a queue, within bounds"
	fi
	# Once a queue formed the windows go back paced: while they do, no
	# adjust gives back more than HPN_PACE_BURST (2 MiB) at once.
	_big=`awk '/windows go back paced/ { on = 1 }
	    /windows go back unpaced/ { on = 0 }
	    on && /sent adjust/ && $NF + 0 > 2097152 { n++ }
	    END { print n + 0 }' "$TESTDIR/down.rekey.log"`
	if ! grep -q 'windows go back paced' "$TESTDIR/down.rekey.log"; then
		fail rekey-burst-paced "the windows did not go back paced"
	elif [ "$_big" != 0 ]; then
		fail rekey-burst-paced "$_big adjusts above 2 MiB while paced"
	else
		pass rekey-burst-paced
	fi
else
	fail rekey-burst-download "ssh failed: `tail -n 1 \
	    "$TESTDIR/down.rekey.log"`"
fi
stop_sshd
exit 0
