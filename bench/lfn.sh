#!/bin/sh
#
# lfn.sh: an emulated long fat network for the tests and the benchmark,
# sourced after lib.sh.
#
# Two network namespaces, A (client, 198.18.0.1) and B (server,
# 198.18.0.2), joined by a link with a set one-way delay, rate and
# drop-tail queue: tc netem on a veth pair where the kernel has sch_netem,
# otherwise bench/tunlink.c, our user-space link between two TUN
# devices.  Everything is removed on every exit path by lib.sh's trap.
# Needs root; lfn_usable says why not when it cannot run.
#
#   lfn_usable              prints the reason and fails if no LFN here
#   lfn_up MBIT RTT-MS      build the link; sets LFN_A, LFN_B, LFN_KIND
#   lfn_down                tear it down (also run on exit)
#   lfn_a CMD... / lfn_b    run CMD in namespace A / B
#   lfn_start_sshd NAME FLAVOUR [CONFIG-LINE...]
#                           start_sshd, but in B on 198.18.0.2 (FLAVOUR
#                           hpn, stock, system: Debian's, or a build
#                           directory)
#   lfn_rtt                 the measured round trip in ms (TCP connect)
#
# LFN_MTU (default 9000) is the link's MTU; LFN_CC, if set, the TCP
# congestion control in both namespaces (default: the host's).

LFN_ADDR_A=198.18.0.1
LFN_ADDR_B=198.18.0.2
LFN_MTU=${LFN_MTU:-9000}

lfn_usable() {
	if [ "`id -u`" != 0 ]; then
		echo "needs root (network namespaces)"
		return 1
	fi
	if ! command -v ip >/dev/null 2>&1; then
		echo "no ip(8) (install iproute2)"
		return 1
	fi
	_ns="hpnprobe$$"
	if ! ip netns add "$_ns" 2>/dev/null; then
		echo "cannot create network namespaces"
		return 1
	fi
	ip netns del "$_ns"
	return 0
}

lfn_a() {
	ip netns exec "$LFN_A" "$@"
}

lfn_b() {
	ip netns exec "$LFN_B" "$@"
}

_lfn_cc() {
	# _lfn_cc NAME: build bench/NAME.c into $TESTDIR once.
	[ -x "$TESTDIR/$1" ] && return 0
	${CC:-cc} -O2 -o "$TESTDIR/$1" "$HPN_TOP/bench/$1.c" ||
	    die "cannot build bench/$1.c"
}

# The namespaces get the TCP buffer limits of a host tuned for long fat
# networks.  tcp_rmem/tcp_wmem are per namespace; net.core.rmem_max is not
# writable inside a namespace on the kernels we met, and is left alone:
# autotuning only needs tcp_rmem.
_lfn_tune() {
	ip netns exec "$1" sysctl -q -w \
	    net.ipv4.tcp_rmem="4096 131072 268435456" \
	    net.ipv4.tcp_wmem="4096 16384 268435456" >/dev/null 2>&1 || true
	ip netns exec "$1" sysctl -q -w net.ipv4.tcp_no_metrics_save=1 \
	    >/dev/null 2>&1 || true
	# LFN_CC: a TCP congestion control other than the host's.
	[ -z "${LFN_CC:-}" ] || ip netns exec "$1" sysctl -q -w \
	    net.ipv4.tcp_congestion_control="$LFN_CC" >/dev/null ||
	    die "TCP congestion control $LFN_CC cannot be set here (is it in net.ipv4.tcp_allowed_congestion_control?)"
	ip -n "$1" link set lo up
}

_lfn_netem() {
	# veth pair with netem on both ends, half the RTT each way.
	_mbit="$1"
	_half="$2"
	ip link add "hpnva$$" netns "$LFN_A" type veth peer name "hpnvb$$" \
	    netns "$LFN_B" 2>/dev/null || return 1
	_limit=`expr $_mbit \* 125 \* $_half \* 2 / $LFN_MTU + 100`
	for _s in "$LFN_A hpnva$$" "$LFN_B hpnvb$$"; do
		set -- $_s
		ip -n "$1" link set "$2" mtu $LFN_MTU up
		ip netns exec "$1" tc qdisc add dev "$2" root netem \
		    delay ${_half}ms rate ${_mbit}mbit limit $_limit \
		    2>/dev/null || return 1
	done
	ip -n "$LFN_A" addr add $LFN_ADDR_A/30 dev "hpnva$$"
	ip -n "$LFN_B" addr add $LFN_ADDR_B/30 dev "hpnvb$$"
	LFN_KIND="tc netem on veth"
	return 0
}

_lfn_tunlink() {
	_mbit="$1"
	_half="$2"
	[ -c /dev/net/tun ] || die "neither sch_netem nor /dev/net/tun"
	_lfn_cc tunlink
	ip -n "$LFN_A" tuntap add dev hpnta mode tun ||
	    die "cannot create a TUN device"
	ip -n "$LFN_B" tuntap add dev hpntb mode tun ||
	    die "cannot create a TUN device"
	ip -n "$LFN_A" link set hpnta mtu $LFN_MTU txqueuelen 10000 up
	ip -n "$LFN_B" link set hpntb mtu $LFN_MTU txqueuelen 10000 up
	ip -n "$LFN_A" addr add $LFN_ADDR_A peer $LFN_ADDR_B dev hpnta
	ip -n "$LFN_B" addr add $LFN_ADDR_B peer $LFN_ADDR_A dev hpntb
	"$TESTDIR/tunlink" -a "$LFN_A" -A hpnta -b "$LFN_B" -B hpntb \
	    -d "$_half" -r "$_mbit" ${LFN_QUEUE:+-q $LFN_QUEUE} \
	    2>>"$TESTDIR/tunlink.log" &
	LFN_LINK_PID=$!
	hpn_track_pid $LFN_LINK_PID
	LFN_KIND="user-space TUN link (bench/tunlink.c)"
}

# lfn_up MBIT RTT-MS
lfn_up() {
	_mbit="$1"
	_rtt="$2"
	_half=`expr $_rtt / 2`
	LFN_A="hpnA$$"
	LFN_B="hpnB$$"
	ip netns add "$LFN_A" || die "ip netns add $LFN_A failed"
	hpn_on_exit lfn_down
	ip netns add "$LFN_B" || die "ip netns add $LFN_B failed"
	_lfn_tune "$LFN_A"
	_lfn_tune "$LFN_B"
	if [ -z "${LFN_FORCE_TUN:-}" ] && _lfn_netem "$_mbit" "$_half"; then
		:
	else
		ip -n "$LFN_A" link del "hpnva$$" 2>/dev/null
		_lfn_tunlink "$_mbit" "$_half"
	fi
	_lfn_cc lfnperf
	# Wait for the link, then check its round trip.
	ip netns exec "$LFN_B" "$TESTDIR/lfnperf" -s $LFN_ADDR_B 5201 &
	LFN_PERF_PID=$!
	hpn_track_pid $LFN_PERF_PID
	wait_until 5 lfn_a "$TESTDIR/lfnperf" -r $LFN_ADDR_B 5201 1 \
	    >/dev/null 2>&1 || die "the emulated link does not pass traffic"
	LFN_RTT=`lfn_rtt`
	_lo=`expr $_rtt - 2`
	_hi=`expr $_rtt + $_rtt / 5 + 5`
	_ms=`echo "$LFN_RTT" | cut -d. -f1`
	if [ "$_ms" -lt $_lo ] || [ "$_ms" -gt $_hi ]; then
		die "link RTT is $LFN_RTT ms, wanted $_rtt ms"
	fi
	echo "# LFN: $LFN_KIND, $_mbit Mbit/s, RTT $LFN_RTT ms measured" \
	    "(wanted $_rtt), MTU $LFN_MTU"
}

# lfn_down: stops the link and whatever still runs in the namespaces, then
# deletes them.  Every process in them was started by us: sessions of an
# sshd we stopped whose last packets are stranded once the link is gone
# would otherwise retransmit for a quarter of an hour.
lfn_down() {
	[ -n "${LFN_A:-}" ] || return 0
	for _p in ${LFN_LINK_PID:-} ${LFN_PERF_PID:-}; do
		kill $_p 2>/dev/null
		wait $_p 2>/dev/null
		hpn_untrack_pid $_p
	done
	for _ns in "$LFN_A" "$LFN_B"; do
		_p=`ip netns pids "$_ns" 2>/dev/null`
		[ -z "$_p" ] || kill $_p 2>/dev/null
	done
	sleep 0.5
	for _ns in "$LFN_A" "$LFN_B"; do
		_p=`ip netns pids "$_ns" 2>/dev/null`
		[ -z "$_p" ] || kill -9 $_p 2>/dev/null
		ip netns del "$_ns" 2>/dev/null
	done
	LFN_A=
	LFN_B=
	LFN_LINK_PID=
	LFN_PERF_PID=
}

# The round trip as the client sees it: the fastest of 5 TCP connects
# (ping where present would do as well; Debian's minimal images lack it).
lfn_rtt() {
	if command -v ping >/dev/null 2>&1; then
		lfn_a ping -q -c 5 -i 0.2 $LFN_ADDR_B 2>/dev/null |
		    sed -n 's|^rtt[^=]*= \([0-9.]*\)/.*|\1|p' | grep . && return
	fi
	lfn_a "$TESTDIR/lfnperf" -r $LFN_ADDR_B 5201 5
}

# _lfn_sshd_settled: the sshd started last says it listens on the link
# (then _lfn_listens=yes), or it has ended.
_lfn_sshd_settled() {
	_lfn_listens=no
	if grep -q "Server listening on $LFN_ADDR_B port" "$SSHD_LOG"; then
		_lfn_listens=yes
		return 0
	fi
	! kill -0 $SSHD_PID 2>/dev/null
}

# lfn_start_sshd NAME FLAVOUR [CONFIG-LINE...]: as start_sshd, in B;
# FLAVOUR may also be system (the system's sshd and sftp-server) or a
# build directory (an absolute path).
lfn_start_sshd() {
	_name="$1"
	_flavour="$2"
	shift 2
	hpn_keys
	case "$_flavour" in
	hpn)	_b="$HPN_BUILD" ;;
	stock)	_b="$STOCK_BUILD" ;;
	system)	_b="" ;;
	/*)	_b="$_flavour" ;;
	*)	die "lfn_start_sshd: unknown flavour $_flavour" ;;
	esac
	if [ -n "$_b" ]; then
		_sshd="$_b/sshd"
		_privsep=`sed -n 's/^PRIVSEP_PATH=[ 	]*//p' "$_b/Makefile" \
		    2>/dev/null`
	else
		_sshd="$SYS_SSHD"
		_privsep=/run/sshd
	fi
	[ -x "$_sshd" ] || die "lfn_start_sshd: no sshd at $_sshd"
	[ -n "$_privsep" ] || _privsep=/var/empty
	privsep_check "$_privsep"
	_lfn_port=`expr ${_lfn_port:-2200} + 1`
	SSHD_PORT=$_lfn_port
	_sshd_config "$_name" $SSHD_PORT $LFN_ADDR_B "$_b" "$@"
	: >"$SSHD_LOG"
	ip netns exec "$LFN_B" "$_sshd" -D -f "$_conf" -E "$SSHD_LOG" &
	SSHD_PID=$!
	hpn_track_pid $SSHD_PID
	wait_until 10 _lfn_sshd_settled
	if [ $_lfn_listens = yes ]; then
		_write_ssh_config "$_name"
		sed -i "s/HostName 127.0.0.1/HostName $LFN_ADDR_B/" \
		    "$SSH_CONFIG"
		return 0
	fi
	tail -n 20 "$SSHD_LOG" >&2
	die "sshd ($_flavour) did not start in $LFN_B"
}
