#!/bin/sh
#
# bench-busy.sh: a shell beside a bulk copy on one connection (make
# bench-busy; not part of make check).  Needs root (network namespaces,
# bench/lfn.sh) and python3 (bench/echo-rtt.py).
#
# For each link (default "1000:10 1000:100 1000:600 1000:1000",
# Mbit/s:RTT-ms, override with BENCH_LINKS) and each pair (default "stock
# patched": stock ssh and sshd, ours on both ends; BENCH_OTHERS="LABEL=DIR
# ..." adds builds whose DIR has ssh and sshd, both ends from DIR, for
# example HPN-SSH through links named ssh and sshd to its hpnssh and
# hpnsshd) it opens one ControlMaster connection, starts a bulk upload on
# it (`cat >/dev/null` fed from /dev/zero), waits BENCH_RAMP seconds
# (default 10 plus 15 round trips) for its window to grow, and measures,
# BENCH_RUNS times each (default 5, medians printed):
#   - `ssh -S CTL host true` on the busy connection, and on another
#     connection to the same sshd beside it (what the machine and the
#     link's queue cost with no bulk ahead in the same connection: on a
#     2-vCPU VM, ssh, sshd and the user-space link at 1 Gbit/s share the
#     CPUs with the session), printed against the idle `true`;
#   - the keystroke round trip of a pty session running cat (the remote
#     tty's echo of one character, bench/echo-rtt.py) on it;
# and the bulk rate meanwhile (the client socket's tcpi_bytes_acked over
# that time, ss(8)) against the link's rate (raw TCP's 1 GiB, slow start
# included, is printed on the link's line); then stops the bulk, waits
# two round trips and a second, and measures both again on the idle
# connection.  The bulk comes first because a connection that carried
# interactive sessions can leave BBR's start-up before its bulk begins
# (docs/windows.md), and raw TCP's yardstick starts fresh too.  The
# yardstick comes last: raw TCP (bench/lfnperf.c) sending from the
# client's namespace for the same ramp, its rate measured the same way
# over the longest busy phase of the pairs; each pair's bulk is then
# printed as a share of it.  The goal of issue 49: busy within 10% of
# idle (`true`), a keystroke within one round trip plus 20 ms, the bulk
# at 95% of raw TCP or more.
# BENCH_CIPHER gives ssh a cipher (-c).  BENCH_LOG=DIR keeps each
# ControlMaster's ssh -v log there (busy-LABEL-RTT.log: when the hold
# turns on and off).

. "`dirname "$0"`/../regress/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

LINKS=${BENCH_LINKS:-"1000:10 1000:100 1000:600 1000:1000"}
if [ -n "${BENCH_LOG:-}" ]; then
	mkdir -p "$BENCH_LOG" && BENCH_LOG=`cd "$BENCH_LOG" && pwd` ||
	    { echo "bench-busy: cannot use BENCH_LOG $BENCH_LOG" >&2; exit 1; }
fi
RUNS=${BENCH_RUNS:-5}
case "$RUNS" in
''|*[!0-9]*|0)	echo "bench-busy: BENCH_RUNS must be a positive number, not '$RUNS'" >&2
		exit 1 ;;
esac
if ! why=`lfn_usable`; then
	echo "bench-busy: skipped: $why"
	exit 0
fi
command -v python3 >/dev/null 2>&1 ||
    { echo "bench-busy: skipped: no python3"; exit 0; }
PAIRS="stock=$STOCK_BUILD patched=$HPN_BUILD ${BENCH_OTHERS:-}"
for _p in $PAIRS; do
	case "$_p" in
	?*=?*)	[ -x "${_p#*=}/ssh" ] && [ -x "${_p#*=}/sshd" ] || {
			echo "bench-busy: ${_p#*=} has no ssh and sshd" >&2
			exit 1
		} ;;
	*)	echo "bench-busy: BENCH_OTHERS takes LABEL=DIR, not '$_p'" >&2
		exit 1 ;;
	esac
done

cpu=`sed -n 's/^model name[ 	]*: //p' /proc/cpuinfo | head -n 1`
echo "machine: $cpu, `nproc` cores online, Linux `uname -r`"
echo "date: `date -u '+%Y-%m-%d %H:%M UTC'`"

# median FILE: the median of FILE's numbers (the lower middle value).
median() {
	sort -g "$1" | awk '{ v[NR] = $1 } END {
	    if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

# trues FILE [SOCKET]: RUNS timed `ssh -S CTL true` (or -S SOCKET) into
# FILE, seconds.
trues() {
	: >"$1"
	_i=0
	while [ $_i -lt $RUNS ]; do
		_t0=`date +%s.%N`
		lfn_a "$B/ssh" -F "$SSH_CONFIG" -S "${2:-$CTL}" hpntest true ||
		    echo "bench-busy: ssh true failed ($LABEL)" >&2
		echo "`date +%s.%N` - $_t0" | bc >>"$1"
		_i=`expr $_i + 1`
	done
}

# master_up SOCKET [SSH-ARG...]: a ControlMaster connection of $B's ssh
# (with BENCH_CIPHER) at SOCKET; its pid in _master.
master_up() {
	_sock=$1
	shift
	lfn_a "$B/ssh" -F "$SSH_CONFIG" ${BENCH_CIPHER:+-c $BENCH_CIPHER} \
	    "$@" -M -S "$_sock" -N hpntest 2>"$_sock.err" &
	_master=$!
	hpn_track_pid $_master
	wait_until 30 test -S "$_sock" ||
	    die "bench-busy: no ControlMaster at $_sock ($LABEL): `tail -n 1 "$_sock.err"`"
}

# master_down SOCKET PID: closes the ControlMaster at SOCKET.
master_down() {
	lfn_a "$B/ssh" -S "$1" -O exit hpntest 2>/dev/null
	wait $2 2>/dev/null
	hpn_untrack_pid $2
}

# echoes FILE: RUNS keystroke round trips of a pty session into FILE.
echoes() {
	lfn_a python3 "$HPN_TOP/bench/echo-rtt.py" $RUNS "$B/ssh" \
	    -F "$SSH_CONFIG" -S "$CTL" -tt hpntest cat >"$1" ||
	    echo "bench-busy: keystroke echo failed ($LABEL)" >&2
}

# acked FILE: each established connection to sshd, "LOCAL-PORT BYTES"
# (the client's tcpi_bytes_acked), into FILE.
acked() {
	lfn_a ss -Hti state established dst $LFN_ADDR_B | awk '
	    /^ *[0-9]/ { n = split($3, a, ":"); port = a[n] }
	    { for (i = 1; i <= NF; i++) if ($i ~ /^bytes_acked:/) {
		sub(/^bytes_acked:/, "", $i); print port, $i } }' >"$1"
}

# bulk_rate SECONDS: MB/s of the connection that moved most between the
# two acked files.
bulk_rate() {
	awk -v t="$1" 'NR == FNR { a[$1] = $2; next }
	    ($1 in a) && $2 - a[$1] > m { m = $2 - a[$1] }
	    END { printf "%.1f", m / t / 1e6 }' "$TESTDIR/acked0" \
	    "$TESTDIR/acked1"
}

for link in $LINKS; do
	mbit=${link%:*}
	rtt=${link#*:}
	lfn_up $mbit $rtt >"$TESTDIR/lfn.out" || exit 1
	RAW=`lfn_a "$TESTDIR/lfnperf" -c $LFN_ADDR_B 5201 \
	    ${BENCH_RAW_BYTES:-1073741824} | cut -d' ' -f3`
	RAMP=${BENCH_RAMP:-`expr 10 + 15 \* $rtt / 1000`}
	echo
	echo "link: $mbit Mbit/s, RTT $rtt ms (measured $LFN_RTT ms)," \
	    "$LFN_KIND, TCP congestion control" \
	    "`lfn_a sysctl -n net.ipv4.tcp_congestion_control`, cipher" \
	    "${BENCH_CIPHER:-default}; raw TCP $RAW MB/s; bulk measured" \
	    "after ${RAMP} s; medians of $RUNS"
	printf "%-10s %16s %7s %14s %22s %14s\n" pair "ssh true idle->busy" \
	    "busy" "other conn." "keystroke idle->busy" "bulk MB/s (link)"
	: >"$TESTDIR/bulks"
	_wmax=0
	for _p in $PAIRS; do
		LABEL=${_p%%=*}
		B=${_p#*=}
		lfn_start_sshd "busy$LABEL" "$B" "LogLevel INFO" \
		    "MaxSessions 20"
		CTL="$TESTDIR/ctl.$LABEL"
		_log=
		[ -z "${BENCH_LOG:-}" ] ||
		    _log="-v -E $BENCH_LOG/busy-$LABEL-$rtt.log"
		# shellcheck disable=SC2086
		master_up "$CTL" $_log
		_mpid=$_master
		# The other connection, opened before the bulk starts.
		master_up "$CTL.2"
		_m2pid=$_master
		# Fed through a FIFO: a mux client killed leaves its master
		# reading the stdin it passed, and EOF is what stops the bulk.
		rm -f "$TESTDIR/bulk.fifo"
		mkfifo "$TESTDIR/bulk.fifo" || die "bench-busy: no FIFO"
		lfn_a "$B/ssh" -F "$SSH_CONFIG" -S "$CTL" hpntest \
		    'cat >/dev/null' <"$TESTDIR/bulk.fifo" 2>/dev/null &
		_bpid=$!
		hpn_track_pid $_bpid
		cat /dev/zero >"$TESTDIR/bulk.fifo" 2>/dev/null &
		_fpid=$!
		hpn_track_pid $_fpid
		sleep $RAMP
		acked "$TESTDIR/acked0"
		_b0=`date +%s.%N`
		trues "$TESTDIR/t.busy"
		trues "$TESTDIR/t.other" "$CTL.2"
		echoes "$TESTDIR/e.busy"
		acked "$TESTDIR/acked1"
		_b1=`date +%s.%N`
		_w=`echo "$_b1 - $_b0" | bc`
		_bulk=`bulk_rate $_w`
		echo "$LABEL $_bulk" >>"$TESTDIR/bulks"
		_wmax=`echo "$_w $_wmax" | awk '{ print ($1 > $2 ? $1 : $2) }'`
		kill $_fpid 2>/dev/null
		wait $_fpid 2>/dev/null
		hpn_untrack_pid $_fpid
		wait_until 60 proc_gone $_bpid ||
		    echo "bench-busy: the bulk did not end at EOF ($LABEL)" >&2
		kill $_bpid 2>/dev/null
		wait $_bpid 2>/dev/null
		hpn_untrack_pid $_bpid
		sleep `expr 1 + 2 \* $rtt / 1000`
		acked "$TESTDIR/acked0"
		sleep 1
		acked "$TESTDIR/acked1"
		[ "`bulk_rate 1 | cut -d. -f1`" -lt 1 ] ||
		    echo "bench-busy: the bulk still moves after it was stopped ($LABEL)" >&2
		trues "$TESTDIR/t.idle"
		echoes "$TESTDIR/e.idle"
		master_down "$CTL" $_mpid
		master_down "$CTL.2" $_m2pid
		stop_sshd
		_ti=`median "$TESTDIR/t.idle"`
		_tb=`median "$TESTDIR/t.busy"`
		_to=`median "$TESTDIR/t.other"`
		_ei=`median "$TESTDIR/e.idle"`
		_eb=`median "$TESTDIR/e.busy"`
		echo "$LABEL $_ti $_tb $_ei $_eb $_bulk $mbit $_to" | awk '
		    function ms(v) { return v == "-" ? "(none)" : \
			sprintf("%.0f", 1000 * v) }
		    { printf "%-10s %7.2f -> %5.2f s %6.0f%% %5.2f s %+5.0f%% %9s -> %6s ms %6.1f (%3.0f%%)\n",
			$1, $2, $3, 100 * ($3 - $2) / $2, $8,
			100 * ($8 - $2) / $2, ms($4), ms($5), $6,
			100 * $6 / ($7 * 0.125) }'
	done
	lfn_a "$TESTDIR/lfnperf" -c $LFN_ADDR_B 5201 @/dev/zero \
	    >/dev/null 2>&1 &
	_rpid=$!
	hpn_track_pid $_rpid
	sleep $RAMP
	acked "$TESTDIR/acked0"
	sleep $_wmax
	acked "$TESTDIR/acked1"
	_raw=`bulk_rate $_wmax`
	kill $_rpid 2>/dev/null
	wait $_rpid 2>/dev/null
	hpn_untrack_pid $_rpid
	echo "$_raw $mbit" | awk '{
		printf "%-10s %62s %6.1f (%3.0f%%)\n", "raw TCP",
		    "", $1, 100 * $1 / ($2 * 0.125) }'
	awk -v raw="$_raw" -v w="$_wmax" '
	    { s = s sprintf("%s%s %s", NR > 1 ? ", " : "", $1,
		raw > 0 ? sprintf("%.0f%%", 100 * $2 / raw) : "-") }
	    END { printf "bulk against raw TCP after the same ramp, over %.1f s: %s\n", w, s }' \
	    "$TESTDIR/bulks"
	lfn_down
	rm -f "$TESTDIR/tunlink.log"
done
exit 0
