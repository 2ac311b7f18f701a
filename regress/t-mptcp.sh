#!/bin/sh
#
# t-mptcp.sh: Multipath TCP (patch 0009, UseMPTCP).  The option in ssh -G
# and sshd -T, bad values refused with their line; then, between two
# network namespaces joined by two veth pairs (198.18.61.0/24 and
# 198.18.62.0/24, the server announcing its second address), copies that
# arrive byte for byte: ours at both ends with both paths carrying data,
# ours against the stock twin at either end (plain TCP, on one path),
# and, where net.mptcp.enabled is 0, ssh and sshd saying so and using
# TCP.  The namespace part needs root, ip(8) with "ip mptcp" and a kernel
# with MPTCP; it is skipped with the reason otherwise.

. "`dirname "$0"`/lib.sh"

SSH="$HPN_BUILD/ssh"
hpn_keys

# --- The option.
"$SSH" -G -F /dev/null host.example >"$TESTDIR/G.default" 2>&1
check_has mptcp-ssh-default-no "$TESTDIR/G.default" "^usemptcp no$"
"$SSH" -G -F /dev/null -o UseMPTCP=yes host.example >"$TESTDIR/G.yes" 2>&1
check_has mptcp-ssh-yes "$TESTDIR/G.yes" "^usemptcp yes$"
printf 'Host *\n\tUseMPTCP maybe\n' >"$TESTDIR/ssh_config.bad"
check_rejected mptcp-ssh-bad-value 2 "UseMPTCP maybe accepted" \
    "$SSH" -G -F "$TESTDIR/ssh_config.bad" host.example
_sshd_config mptcp-T 22 127.0.0.1 "$HPN_BUILD" "UseMPTCP yes"
# sshd -T prints lower-case keywords before 10.5p1, mixed case since.
"$HPN_BUILD/sshd" -T -f "$_conf" 2>&1 | awk '{ $1 = tolower($1); print }' \
    >"$TESTDIR/T.yes"
check_has mptcp-sshd-yes "$TESTDIR/T.yes" "^usemptcp yes$"
_sshd_config mptcp-T 22 127.0.0.1 "$HPN_BUILD"
"$HPN_BUILD/sshd" -T -f "$_conf" 2>&1 | awk '{ $1 = tolower($1); print }' \
    >"$TESTDIR/T.default"
check_has mptcp-sshd-default-no "$TESTDIR/T.default" "^usemptcp no$"
_sshd_config mptcp-T 22 127.0.0.1 "$HPN_BUILD" "UseMPTCP maybe"
check_rejected mptcp-sshd-bad-value 1 "UseMPTCP maybe accepted" \
    "$HPN_BUILD/sshd" -t -f "$_conf"

# --- Two paths.
why=
if [ "`id -u`" != 0 ]; then
	why="needs root (network namespaces)"
elif ! command -v ip >/dev/null 2>&1; then
	why="no ip(8)"
elif [ ! -r /proc/sys/net/mptcp/enabled ]; then
	why="this kernel has no Multipath TCP (no net.mptcp sysctls)"
elif ! ip mptcp limits show >/dev/null 2>&1; then
	why="this ip(8) has no 'ip mptcp'"
fi
if [ -n "$why" ]; then
	skip mptcp-paths "$why"
	exit 0
fi

NSC=hpnmpc$$
NSS=hpnmps$$
ADDR_S=198.18.61.2
ADDR_S2=198.18.62.2
ip netns add $NSC || die "cannot create network namespace $NSC"
hpn_on_exit "ip netns del $NSC 2>/dev/null"
ip netns add $NSS || die "cannot create network namespace $NSS"
hpn_on_exit "ip netns del $NSS 2>/dev/null"
for i in 1 2; do
	ip link add mpc$i netns $NSC type veth peer name mps$i netns $NSS ||
	    die "cannot create veth pair $i"
	ip -n $NSC addr add 198.18.6$i.1/24 dev mpc$i
	ip -n $NSS addr add 198.18.6$i.2/24 dev mps$i
	ip -n $NSC link set mpc$i up
	ip -n $NSS link set mps$i up
done
for ns in $NSC $NSS; do
	ip -n $ns link set lo up
	ip netns exec $ns sysctl -qw net.mptcp.enabled=1 ||
	    die "cannot enable MPTCP in $ns"
	ip -n $ns mptcp limits set subflow 2 add_addr_accepted 2 ||
	    die "cannot set MPTCP limits in $ns"
done
# Each path at most 200 Mbit/s each way where tc has tbf, so that a copy
# needs both (unshaped, the scheduler may leave the second path nearly
# idle).
shaped=yes
for i in 1 2; do
	ip netns exec $NSC tc qdisc add dev mpc$i root tbf rate 200mbit \
	    burst 64kb latency 50ms 2>/dev/null &&
	    ip netns exec $NSS tc qdisc add dev mps$i root tbf rate 200mbit \
	    burst 64kb latency 50ms 2>/dev/null || shaped=no
done
echo "# paths shaped to 200 Mbit/s by tbf: $shaped"
# The server announces its second address; the client opens a subflow to
# it, over the second pair.
ip -n $NSS mptcp endpoint add $ADDR_S2 dev mps2 signal ||
    die "cannot add the server's MPTCP endpoint"

# mp_sshd NAME FLAVOUR ADDR [CONFIG-LINE...]: sshd in the server's
# namespace listening on ADDR (and where CONFIG-LINEs say); ssh_config's
# hpntest points at ADDR.
mp_sshd() {
	_name="$1"
	case "$2" in
	hpn)	_b="$HPN_BUILD" ;;
	stock)	_b="$STOCK_BUILD" ;;
	esac
	_addr="$3"
	shift 3
	SSHD_PORT=`hpn_free_port`
	_sshd_config "$_name" $SSHD_PORT $_addr "$_b" "$@"
	: >"$SSHD_LOG"
	ip netns exec $NSS "$_b/sshd" -D -f "$_conf" -E "$SSHD_LOG" &
	SSHD_PID=$!
	hpn_track_pid $SSHD_PID
	wait_until 10 grep -q "Server listening on $_addr port $SSHD_PORT" \
	    "$SSHD_LOG" || {
		tail -n 20 "$SSHD_LOG" >&2
		die "sshd ($_b) did not start on $_addr in $NSS"
	}
	_write_ssh_config "$_name"
	sed -i "s/HostName 127.0.0.1/HostName $_addr/" "$SSH_CONFIG"
}

# A subflow to the announced address joins through a listener there: the
# sshd of the two-path copies listens on both addresses.
BOTH="ListenAddress $ADDR_S2"

# path_bytes: the bytes the client's two veths sent and received so far,
# "TX1 TX2 RX1 RX2".
path_bytes() {
	for _d in tx rx; do
		for _i in 1 2; do
			ip netns exec $NSC \
			    cat /sys/class/net/mpc$_i/statistics/${_d}_bytes
		done
	done | tr '\n' ' '
}

# paths BEFORE AFTER DIR WANT: over the copy between path_bytes BEFORE
# and AFTER, in direction DIR (tx: from the client, rx: to it), both paths
# carried at least 2 MiB of the 64 (WANT both), or the second under
# 256 KiB (WANT one).
paths() {
	_pd=$3 _pw=$4
	set -- $1 $2
	case "$_pd" in
	tx)	_d1=`expr $5 - $1` _d2=`expr $6 - $2` ;;
	*)	_d1=`expr $7 - $3` _d2=`expr $8 - $4` ;;
	esac
	case "$_pw" in
	both)	[ $_d1 -ge 2097152 ] && [ $_d2 -ge 2097152 ] ;;
	*)	[ $_d2 -lt 262144 ] ;;
	esac
}

# mp_copy NAME SSH DIR WANT [SSH-ARG...]: DATA up (DIR up) or down through
# SSH run in the client's namespace, byte for byte, ssh -v's output in
# $TESTDIR/err.NAME; then WANT (both, one) for the paths.
mp_copy() {
	_n="$1" _ssh="$2" _dir="$3" _want="$4"
	shift 4
	_got="$TESTDIR/got.$_n"
	rm -f "$_got"
	_before=`path_bytes`
	_t0=`date +%s.%N`
	case "$_dir" in
	up)	ip netns exec $NSC "$_ssh" -F "$SSH_CONFIG" -v "$@" hpntest \
		    "cat > $_got" <"$DATA" 2>"$TESTDIR/err.$_n"
		_rc=$? _pd=tx ;;
	down)	ip netns exec $NSC "$_ssh" -F "$SSH_CONFIG" -v "$@" hpntest \
		    "cat $DATA" >"$_got" 2>"$TESTDIR/err.$_n"
		_rc=$? _pd=rx ;;
	esac
	_after=`path_bytes`
	_t1=`date +%s.%N`
	check_copy "$_n" ssh $_rc "$TESTDIR/err.$_n" "$DATA" "$_got"
	rm -f "$_got"
	if paths "$_before" "$_after" $_pd $_want; then
		pass "$_n-paths-$_want"
		echo "# $_n: path 1 `expr $_d1 / 1024` KiB, path 2" \
		    "`expr $_d2 / 1024` KiB"
	else
		fail "$_n-paths-$_want" "client's veths before: $_before after: $_after"
	fi
	# Not asserted (no timed checks in make check): the rate with the
	# paths shaped, for docs/mptcp.md.
	[ $_rc -ne 0 ] || echo "# $_n: `echo "$_t0 $_t1" |
	    awk '{ printf "%.1f", 64 / ($2 - $1) }'` MiB/s with setup"
}

DATA=`make_data 67108864`

# Ours at both ends: Multipath TCP, both paths carry data.
mp_sshd mp-hpn hpn $ADDR_S "UseMPTCP yes" "$BOTH"
check_has mptcp-sshd-socket "$SSHD_LOG" "Multipath TCP socket (UseMPTCP)"
mp_copy mptcp-ours-up "$SSH" up both -o UseMPTCP=yes
check_has mptcp-ours-in-use "$TESTDIR/err.mptcp-ours-up" \
    "Multipath TCP: in use"
# sshd cannot read an MPTCP socket's IP options: it says so (debug1).
check_has mptcp-ip-options-said "$SSHD_LOG" \
    "IP options not checked: Operation not supported"
mp_copy mptcp-ours-down "$SSH" down both -o UseMPTCP=yes
# The stock twin's ssh to our sshd: plain TCP, the same bytes.
mp_copy mptcp-stockssh-up "$STOCK_BUILD/ssh" up one
mp_copy mptcp-stockssh-down "$STOCK_BUILD/ssh" down one
# Our ssh without UseMPTCP: TCP, nothing said.
mp_copy mptcp-off-up "$SSH" up one
check_has_not mptcp-off-silent "$TESTDIR/err.mptcp-off-up" "Multipath TCP"
stop_sshd

# Over IPv6 (::1 in the server's namespace): Linux's MPTCP sockets refuse
# IPV6_TCLASS, which ssh and sshd set for IPQoS; that is no error, only a
# debug line.
if ! ip -n $NSS -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/'; then
	skip mptcp-v6 "no IPv6 on the namespace's loopback"
else
	mp_sshd mp-v6 hpn ::1 "AddressFamily inet6" "UseMPTCP yes"
	out=`ip netns exec $NSS "$SSH" -F "$SSH_CONFIG" -v -o UseMPTCP=yes \
	    hpntest 'echo v6' 2>"$TESTDIR/err.mp-v6"`
	if [ "$out" = v6 ]; then
		pass mptcp-v6-session
	else
		fail mptcp-v6-session \
		    "got '$out': `tail -n 1 "$TESTDIR/err.mp-v6"`"
	fi
	check_has mptcp-v6-in-use "$TESTDIR/err.mp-v6" "Multipath TCP: in use"
	grep -v '^debug' "$TESTDIR/err.mp-v6" >"$TESTDIR/err.mp-v6.nodebug"
	check_has_not mptcp-v6-ssh-no-tclass-error \
	    "$TESTDIR/err.mp-v6.nodebug" IPV6_TCLASS
	grep -v 'debug[0-9]:' "$SSHD_LOG" >"$TESTDIR/sshd.mp-v6.nodebug"
	check_has_not mptcp-v6-sshd-no-tclass-error \
	    "$TESTDIR/sshd.mp-v6.nodebug" IPV6_TCLASS
	stop_sshd
fi

# Our ssh with UseMPTCP to the stock twin's sshd: the server does not take
# it; plain TCP on the same socket.
mp_sshd mp-stock stock $ADDR_S "$BOTH"
mp_copy mptcp-stocksshd-up "$SSH" up one -o UseMPTCP=yes
mp_copy mptcp-stocksshd-down "$SSH" down one -o UseMPTCP=yes
check_has mptcp-stocksshd-fallback "$TESTDIR/err.mptcp-stocksshd-up" \
    "Multipath TCP: the peer did not take it, plain TCP"
stop_sshd

# No Multipath TCP in either namespace (net.mptcp.enabled=0): ssh and sshd
# say so and use TCP.
for ns in $NSC $NSS; do
	ip netns exec $ns sysctl -qw net.mptcp.enabled=0
done
mp_sshd mp-off hpn $ADDR_S "UseMPTCP yes" "$BOTH"
check_has mptcp-sshd-notice "$SSHD_LOG" \
    "UseMPTCP: no Multipath TCP here (.*), using TCP"
mp_copy mptcp-disabled-up "$SSH" up one -o UseMPTCP=yes
check_has mptcp-ssh-notice "$TESTDIR/err.mptcp-disabled-up" \
    "UseMPTCP: no Multipath TCP here (.*), using TCP"
stop_sshd
rm -f "$DATA"
exit 0
