#!/bin/sh
#
# t-window.sh: dynamic channel windows.  The options in sshd -T / ssh -G and
# their bad values; sshd starting an upload's rekeys (on loopback); then,
# on an emulated 100 Mbit/s, 50 ms RTT link
# (bench/lfn.sh, needs root), 64 MiB byte-exact transfers whose receiver's
# window must grow past stock's 2 MiB (from the debug2 log) and stay within
# the connection's window budget logged at debug2: the data carried in a
# round trip (receive rate times minimum round trip) plus headroom, and a
# stock window for each idle channel, whose parts must add up and fit the
# link (a rate at most the link's; a round trip near the link's) and
# which must not pass HPNBufferSize: between patched
# peers (headroom at least 8 MiB) a session upload and download, a -L
# forwarding, a ControlMaster session, and an upload with HPNBufferSize
# just above 8 MiB, where the need must stop at HPNBufferSize; a stock
# sender into our sshd and our ssh downloading from a stock sshd
# (headroom 8064 KiB).  Through a ProxyCommand (no TCP_INFO) the need is
# fixed at 8064 KiB, for a stock sshd and for ours.
# With HPNDisabled the window must stay at 2 MiB.  With the server's
# tcp_rmem maximum at 1 MiB, sshd says once that the kernel holds the
# transfer back.  Then on a 1 Gbit/s, 600 ms link (75 MB in flight): a
# 256 MiB upload whose window doubles while the link fills and grows past
# the old 32 MiB limit, within the budget; the same from a stock sender,
# whose window doubles too (within its own rule); and sixteen channels on one
# ControlMaster (one whose command never reads its input, fourteen idle,
# one upload) where only the upload's window grows and no growth leaves
# the windows' sum above the budget (the sshd-session's peak RSS is
# printed).

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

SSH="$HPN_BUILD/ssh"
SIZE=${HPN_WINDOW_BYTES:-67108864}
STOCK_WINDOW=2097152
STOCK_PEER_MAX=8257536		# HPN_WINDOW_STOCK_MAX
PATCHED_BASE=8388608		# HPN_WINDOW_HEADROOM
WINDOW_MAX=268435456		# HPNBufferSize's default
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

# --- Rekeying an upload: sshd starts each rekey while the client may
# still send what its windows allow (plus framing) before its own limit,
# so that the client, which would wait two round trips for the exchange
# it starts, waits one.  On loopback, RekeyLimit 64M on both sides, a
# 320 MiB upload from a stock ssh and from ours: byte-exact, and each key
# exchange after the first began with sshd's KEXINIT (sent before the
# client's was received), with ssh_packet_rekey_early logged.

# early_rekeys NAME MARK: each of sshd's key exchanges after MARK started
# by sshd (rekeys_not_started), at least three, ssh_packet_rekey_early
# logged.
early_rekeys() {
	_why=`rekeys_not_started $2 sent`
	if [ -z "$_why" ] && ! log_has $2 \
	    "ssh_packet_rekey_early: [0-9]* of [0-9]* blocks in, [0-9]* reserved"
	then
		_why="no ssh_packet_rekey_early line"
	fi
	if [ -n "$_why" ]; then
		fail "$1" "$_why"
	else
		pass "$1"
		echo "# $1: `log_count $2 ssh_packet_rekey_early` rekeys," \
		    "each started by sshd"
	fi
}

REKEY_DATA=`make_data 335544320`
start_sshd rekey hpn "LogLevel DEBUG2" "RekeyLimit 64M"
for who in stock hpn; do
	case $who in
	stock)	client="$STOCK_BUILD/ssh" ;;
	hpn)	client="$SSH" ;;
	esac
	from=`log_mark`
	xfer_up rekey-$who "$client" "$REKEY_DATA" \
	    -c chacha20-poly1305@openssh.com -o RekeyLimit=64M
	early_rekeys rekey-$who-early $from
done
stop_sshd

# --- Rekeying a download: where the last exchange showed that the server
# lists first the KEX and host key algorithms in use, our ssh starts each
# rekey while the server may still send what its windows allow, and sends
# its KEX_ECDH_INIT right behind its KEXINIT (RFC 4253's
# first_kex_packet_follows), so the sending sshd waits one round trip, not
# two.  On loopback, the stock twin's sshd and our ssh at RekeyLimit 64M,
# a 320 MiB download: byte-exact, each rekey started by our ssh with a
# guess the server took (guessed_rekeys).  With HPNDisabled, no guess.
# Against an sshd whose first host key is RSA while we know its Ed25519
# key (so its first host key algorithm is not the one in use), no guess:
# byte-exact, with rekeys.

start_sshd rekeyd stock "LogLevel DEBUG2" "RekeyLimit 64M"
from=`log_mark`
xfer_down rekey-guess "$SSH" "$REKEY_DATA" -v \
    -c chacha20-poly1305@openssh.com -o RekeyLimit=64M
guessed_rekeys rekey-guess-taken "$TESTDIR/err.rekey-guess.down" $from 3
xfer_down rekey-noguess "$SSH" "$REKEY_DATA" -v -o HPNDisabled=yes \
    -c chacha20-poly1305@openssh.com -o RekeyLimit=64M
check_has_not rekey-noguess-hpndisabled \
    "$TESTDIR/err.rekey-noguess.down" "SSH2_MSG_KEXINIT guesses"
stop_sshd
"$HPN_BUILD/ssh-keygen" -q -t rsa -b 2048 -N '' -f "$TESTDIR/host_rsa" ||
    die "ssh-keygen (RSA host key) failed"
start_sshd rekeyrsa stock "LogLevel DEBUG2" "RekeyLimit 64M" \
    "HostKey $TESTDIR/host_rsa"
xfer_down rekey-rsafirst "$SSH" "$REKEY_DATA" -v \
    -c chacha20-poly1305@openssh.com -o RekeyLimit=64M
check_has_not rekey-rsafirst-noguess \
    "$TESTDIR/err.rekey-rsafirst.down" "SSH2_MSG_KEXINIT guesses"
n=`grep -c "SSH2_MSG_NEWKEYS received" "$TESTDIR/err.rekey-rsafirst.down"`
if [ "$n" -ge 4 ]; then
	pass rekey-rsafirst-rekeys
else
	fail rekey-rsafirst-rekeys "$n NEWKEYS received, not 4 or more"
fi
stop_sshd
rm -f "$REKEY_DATA"

# --- On the emulated long fat network.

if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
lfn_up $LFN_MBIT $LFN_RTT_MS
DATA=`make_data $SIZE`

# grew NAME LOG MARK [MAX]: pass if the window grew past stock's
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

# peer_budget NAME LOG MARK KIND BASE [MAX]: the window budgets
# logged at debug2 for a KIND (stock or patched) peer (lib.sh's
# budget_lines), each of which must add up (budget_problem), with headroom
# BASE (at least) and HPNBufferSize MAX (default WINDOW_MAX), the rate
# within the link's (25% slack for sampling) and the round trip within
# what lfn_up accepts; at least one rate must be above zero (the budget
# grew as the link proved its rate) unless the need reached MAX at once,
# and no window growth may leave the
# windows' sum above the budget.  Sets CAP to the largest budget.
peer_budget() {
	_max=${6:-$WINDOW_MAX}
	_side=client
	[ "$2" != "$SSHD_LOG" ] || _side=server
	_caps=`budget_lines "$2" $3 $4`
	CAP=0
	NEED=0
	if [ -z "$_caps" ]; then
		fail "$1" "no $4-peer budget with rate and round trip logged"
		return
	fi
	# The rate counts what TCP delivered in order: after a loss is
	# repaired a span also counts data that arrived in the span before
	# (hpn-window.c), and both spans of the lower-of-two rule can carry
	# such a burst: a short link's rates have been seen up to 15% above
	# it (make check-releases, 10.0p1, 2026-11-27).  25% slack.
	_ratemax=`expr $LFN_MBIT \* 125000 \* 5 / 4`
	_rttlo=`expr \( $LFN_RTT_MS - 2 \) \* 1000`
	_rtthi=`expr \( $LFN_RTT_MS + $LFN_RTT_MS / 5 + 5 \) \* 1000`
	_why=`printf '%s\n' "$_caps" | {
		_moved=0
		while read _b _n _i _k _pr _h _r _t _m _l _s _x _w _z; do
			_p=$(budget_problem $_b $_n $_i $_k $_pr $_h $_r $_t \
			    $_m $_l $_s $_x $_w $_z $5 $_max $_side)
			if [ -n "$_p" ]; then
				echo "$_p"
			elif [ $_r -gt $_ratemax ]; then
				echo "rate $_r B/s above the link's $LFN_MBIT Mbit/s"
			elif [ $_t -lt $_rttlo ] || [ $_t -gt $_rtthi ]; then
				echo "min_rtt $_t us, link $LFN_RTT_MS ms"
			fi
			[ $_r -eq 0 ] && [ $_n -lt $_max ] || _moved=1
		done
		[ $_moved = 1 ] || echo "no budget with a rate above 0" \
		    "or at HPNBufferSize"
	} | head -n 1`
	[ -n "$_why" ] || _why=`window_sums "$2" $3`
	CAP=`printf '%s\n' "$_caps" | cut -d' ' -f1 | sort -n | tail -n 1`
	NEED=`printf '%s\n' "$_caps" | cut -d' ' -f2 | sort -n | tail -n 1`
	if [ -n "$_why" ]; then
		fail "$1" "$_why"
	else
		pass "$1"
		echo "# $1: `printf '%s\n' "$_caps" | wc -l` budgets logged," \
		    "largest $CAP: `printf '%s\n' "$_caps" |
		    sort -n | tail -n 1 | awk '{ print "need " $2 " = " $5 \
		    " + " $6 " (" $7 " B/s * " $8 " us), " $4 " idle" }'`"
	fi
}

# fixed_budget NAME LOG KIND NEED: LOG has KIND's fixed need NEED (no
# TCP_INFO) and no rate-based budget, and the window grew to exactly NEED.
fixed_budget() {
	_w=`max_window "$2"`
	if ! grep -q "$3 peer: window budget [0-9]* = need $4 + [0-9]* for [0-9]* idle channels; need fixed (no TCP_INFO)" "$2"; then
		fail "$1" "no fixed need $4 logged: `grep "peer: window budget" \
		    "$2" | head -n 1`"
	elif grep -q "peer: window budget .*need = per_rtt" "$2"; then
		fail "$1" "a rate-based budget without a socket"
	elif [ "${_w:-0}" -ne $4 ]; then
		fail "$1" "window grew to ${_w:-nothing}, not to $4"
	else
		pass "$1"
	fi
}

# same NAME FILE: byte-exact check against DATA.
same() {
	check_same "$1" "$DATA" "$2"
	rm -f "$2"
}

# lfn_upload NAME KIND BASE WHAT SSH [SSH-ARG...]: SSH (WHAT in a failure)
# uploads $DATA into sshd: byte-exact (NAME), the budgets sshd logs for a
# KIND peer with BASE (NAME-budget, peer_budget) and the window's growth
# up to the need (NAME-window, grew).
lfn_upload() {
	_up_name="$1"
	_up_kind="$2"
	_up_base="$3"
	_up_what="$4"
	shift 4
	_up_from=`log_mark "$SSHD_LOG"`
	if lfn_a "$@" hpntest "cat > $TESTDIR/up" <"$DATA" \
	    2>"$TESTDIR/err"; then
		same "$_up_name" "$TESTDIR/up"
		peer_budget "$_up_name-budget" "$SSHD_LOG" $_up_from $_up_kind \
		    $_up_base
		grew "$_up_name-window" "$SSHD_LOG" $_up_from $NEED
	else
		fail "$_up_name" "$_up_what failed: `tail -n 1 "$TESTDIR/err"`"
	fi
}

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

# --- A long round trip: 1 Gbit/s at 600 ms, a bandwidth-delay product of
# 75 MB (the window 10 Gbit/s needs at 60 ms).  On other releases, and
# with HPN_WINDOW_LONG=no, the suite stops before it.
if [ "${HPN_WINDOW_LONG:-yes}" = no ] || default_release_only "long-*"; then
	exit 0
fi
lfn_down
LFN_MBIT=1000
LFN_RTT_MS=600
lfn_up $LFN_MBIT $LFN_RTT_MS
rm -f "$DATA"
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
	# budget's headroom is above both 8 MiB and half of per_rtt.
	_d=`budget_lines "$SSHD_LOG" 0 patched |
	    awk '$6 > 8388608 && 2 * $6 > $5 { n++ } END { print n + 0 }'`
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
