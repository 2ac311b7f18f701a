#!/bin/sh
#
# bench-feeder.sh: a bulk upload whose feeder slows down and comes back
# (a tar that reaches many small files, then big ones), on the emulated
# link (bench/lfn.sh, needs root): 128 MiB fast, then 2 MB/s for
# BENCH_SLOW seconds (default 30), then 128 MiB fast again.  Prints, for
# ours and the stock twin side by side (each end its own), the last fast
# phase's rate and its share of the link, with the machine.  The sending
# side's hold (patch 0003, hpn_window_hold()) must not keep the rate it
# read from the slow phase once the data comes fast again.
#
#   BENCH_LINK=MBIT:RTT-MS (default 200:600), BENCH_SLOW=SECONDS
#
# make bench-feeder runs it.

. "`dirname "$0"`/../regress/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

if ! why=`lfn_usable`; then
	echo "bench-feeder: $why" >&2
	exit 1
fi
LINK="${BENCH_LINK:-200:600}"
MBIT=${LINK%%:*}
RTT=${LINK#*:}
SLOW="${BENCH_SLOW:-30}"
PHASE=134217728
lfn_up $MBIT $RTT
DATA=`make_data $PHASE`

# feed: the phases on standard output; the time the last began in $1.
cat >"$TESTDIR/feed.sh" <<'EOF'
cat "$1"
i=0
while [ $i -lt $(( $2 * 4 )) ]; do
	head -c 524288 "$1"
	sleep 0.25
	i=$((i + 1))
done
date +%s.%N >"$3"
cat "$1"
EOF

echo "bench-feeder: `grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 |
    sed 's/^ *//'`, `nproc` cores, $LFN_KIND link $MBIT Mbit/s x $RTT ms" \
    "(`lfn_rtt` ms measured), `date -u +%Y-%m-%d`"
echo "bench-feeder: 128 MiB fast, 2 MB/s for $SLOW s, 128 MiB fast:" \
    "the last phase"
for who in hpn stock; do
	case $who in
	hpn)	b="$HPN_BUILD" ;;
	stock)	b="$STOCK_BUILD" ;;
	esac
	lfn_start_sshd feed-$who $who
	rm -f "$TESTDIR/t3"
	sh "$TESTDIR/feed.sh" "$DATA" "$SLOW" "$TESTDIR/t3" |
	    lfn_a "$b/ssh" -F "$SSH_CONFIG" hpntest "cat >/dev/null"
	t1=`date +%s.%N`
	stop_sshd
	echo "$who `cat "$TESTDIR/t3"` $t1" | awk -v n=$PHASE -v m=$MBIT '{
	    r = n * 8 / 1e6 / ($3 - $2)
	    printf "  %-6s %7.1f Mbit/s  %3.0f%% of the link\n", $1, r,
	    100 * r / m }'
done
