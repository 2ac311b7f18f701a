#!/bin/sh
#
# bench-lfn.sh: throughput on an emulated long fat network (make bench-lfn;
# not part of make check).  Needs root (network namespaces, bench/lfn.sh).
#
# For each link (default "1000:100 100:50 1000:600 1000:1000",
# Mbit/s:RTT-ms, override with BENCH_LINKS) it measures raw TCP goodput
# with bench/lfnperf.c, then for stock->stock, patched->patched,
# stock->patched (upload into our sshd) and patched<-stock (download by
# our ssh from a stock sshd), and on request patched<-patched (download
# between ours): ssh 'cat >/dev/null' fed from a file and
# from a pipe, scp and sftp, each moving BENCH_BYTES (default 1 GiB, and
# 2 GiB on links of 600 ms or more; BENCH_BYTES_<MBIT>_<RTT> or
# BENCH_BYTES_<MBIT> override per link; raw TCP moves as much, or
# BENCH_RAW_BYTES).  It prints data-phase MB/s (elapsed time minus the
# same command's time for an empty transfer), % of raw TCP, CPU seconds
# per GiB of client and server (sshd's children, from /proc) and the peak
# RSS of each (the client's from time(1), the server's the largest VmHWM
# of sshd's sessions, sampled every half second), and in how many runs
# the sender's congestion window took BBR's PROBE_RTT dip as the data
# started (dips_start).  On links of 600 ms or
# more, one more patched->patched upload with sshd at LogLevel DEBUG2
# shows the largest window and the budget it grew in, beside sshd's peak
# RSS.  BENCH_PAIRS (default "stock->stock patched->patched stock->patched
# patched<-stock") and BENCH_METHODS (default "ssh-file ssh-pipe scp
# sftp"; "ssh-file scp sftp" on links of 600 ms or more; "tar-tree",
# "scp-tree" and "sftp-tree" copy a tree of BENCH_TREE_FILES files of
# BENCH_TREE_KIB KiB, default 1000 of 64: tar c | ssh tar x, scp -r and sftp put/get -r;
# "ssh-file-x8" runs eight ssh-file transfers of an eighth each at once,
# on eight connections, "ssh-mux-x8" the same as eight sessions of one
# ControlMaster connection, and their server RSS is the sum over all of
# sshd's processes; "rclone", "lftp", "rclone-tree" and "lftp-tree" run
# those clients in their parallel modes, 8 files or ranges at once, and
# only in the pairs "patched->stock", "patched<-stock", "patched->debian"
# and "patched<-debian": against that sshd, whoever's client) select
# rows; "patched->stock" is our ssh uploading to the unpatched sshd,
# "stock<-stock" stock downloading from it; "...debian" pairs have the
# system's own sshd and sftp-server (Debian 12's: 9.2p1) as the server.
# With
# BENCH_RUNS=N (default 1) each row is measured N times in a row and shows
# the medians, with the lowest and highest % of raw TCP.  BENCH_CIPHER
# (default: each program's default, chacha20-poly1305, which rekeys after
# every GiB unless both ends are ours) gives ssh, scp and sftp a cipher with -c; BENCH_SCP_OPTS and
# BENCH_SFTP_OPTS give scp and sftp more options (e.g. "-X nrequests=64"
# and "-R 64", stock's fixed request pipeline); BENCH_OURS_OPTS gives
# our scp and sftp alone more (e.g. "-X connections=4 -X streams=40",
# which stock's refuse).  BENCH_CC (default:
# the host's, printed on each link's line) sets the TCP congestion control
# in both namespaces, for raw TCP too.

. "`dirname "$0"`/../regress/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

LINKS=${BENCH_LINKS:-"1000:100 100:50 1000:600 1000:1000"}
PAIRS=${BENCH_PAIRS:-"stock->stock patched->patched stock->patched patched<-stock"}
RUNS=${BENCH_RUNS:-1}
LFN_CC=${BENCH_CC:-}
case "$RUNS" in
''|*[!0-9]*|0)	echo "bench-lfn: BENCH_RUNS must be a positive number, not '$RUNS'" >&2
		exit 1 ;;
esac
GIB=1073741824
TIME=/usr/bin/time

if ! why=`lfn_usable`; then
	echo "bench-lfn: skipped: $why"
	exit 0
fi
[ -x $TIME ] || echo "bench-lfn: no $TIME (Debian package time): no CPU figures"

cpu=`sed -n 's/^model name[ 	]*: //p' /proc/cpuinfo | head -n 1`
grep -qw aes /proc/cpuinfo && aesni=yes || aesni=no
echo "machine: $cpu, `nproc` cores online, AES-NI $aesni, Linux `uname -r`"

# sshd_cpu: the CPU seconds of sshd's reaped children so far.
sshd_cpu() {
	awk -v hz=`getconf CLK_TCK` '{ print ($16 + $17) / hz }' \
	    "/proc/$SSHD_PID/stat"
}

# link_cpu: the CPU seconds of the user-space link process, if any.
link_cpu() {
	[ -n "${LFN_LINK_PID:-}" ] && [ -r "/proc/$LFN_LINK_PID/stat" ] || return 0
	awk -v hz=`getconf CLK_TCK` '{ print ($14 + $15) / hz }' \
	    "/proc/$LFN_LINK_PID/stat"
}

# hwm_start / hwm_stop: SRSS, the largest VmHWM (KiB) of sshd's sessions
# while a transfer runs, and SRSS_SUM, the largest sum of them, sampled
# every half second (VmHWM only grows).
hwm_start() {
	: >"$TESTDIR/hwm"
	( while :; do
		sessions_hwms | awk '$1 > m { m = $1 } { s += $1 }
		    END { print m + 0, s + 0 }' >>"$TESTDIR/hwm"
		sleep 0.5
	done ) &
	HWM_PID=$!
	hpn_track_pid $HWM_PID
}
hwm_stop() {
	kill $HWM_PID 2>/dev/null
	wait $HWM_PID 2>/dev/null
	SRSS=`awk '$1 > m { m = $1 } END { print m + 0 }' "$TESTDIR/hwm"`
	SRSS_SUM=`awk '$2 > m { m = $2 } END { print m + 0 }' "$TESTDIR/hwm"`
}

# dips_start NS SELECTOR BYTES / dips_stop: DIP, 1 if the sending side's
# connection (SELECTOR in namespace NS) dropped its congestion window to
# 4 packets, BBR's PROBE_RTT, while the data started: after its first
# 64 KiB (more than the setup sends) were acknowledged and before a
# sixteenth of BYTES (ss -ti, every half second), else 0.  At 1000 ms a
# connection whose setup outlasts BBR's 10 s min_rtt window can take that
# dip as the data starts, which stalls its ramp for a round trip and a
# half (docs/sftp-pipeline.md).  The dip a long transfer takes later, at
# full rate when BBR's minimum expires again, is not counted.
dips_start() {
	( while :; do
		ip netns exec "$1" ss -Htin state established $2 |
		    tr ' ' '\n' | awk -v b=$3 '
		    /^cwnd:/ { c = substr($0, 6) }
		    /^bytes_acked:/ { a = substr($0, 13)
			if (c == 4 && a > 65536 && a < b / 16) print "dip" }'
		sleep 0.5
	done ) >"$TESTDIR/dips" 2>/dev/null &
	DIPS_PID=$!
	hpn_track_pid $DIPS_PID
}
dips_stop() {
	kill $DIPS_PID 2>/dev/null
	wait $DIPS_PID 2>/dev/null
	hpn_untrack_pid $DIPS_PID
	DIP=0
	[ ! -s "$TESTDIR/dips" ] || DIP=1
}

# run CMD: runs CMD in A under time(1); sets ELAPSED, CCPU and CRSS
# (client: CPU seconds, peak RSS in KiB) and SCPU and SRSS (server).
run() {
	_s0=`sshd_cpu`
	hwm_start
	if [ -x $TIME ]; then
		ip netns exec "$LFN_A" $TIME -o "$TESTDIR/time" -f "%e %U %S %M" \
		    sh -c "$1" </dev/null >/dev/null 2>"$TESTDIR/run.err" ||
		    echo "bench-lfn: failed: $1: `tail -n 1 "$TESTDIR/run.err"`" >&2
		ELAPSED=`tail -n 1 "$TESTDIR/time" | cut -d' ' -f1`
		CCPU=`tail -n 1 "$TESTDIR/time" | awk '{ print $2 + $3 }'`
		CRSS=`tail -n 1 "$TESTDIR/time" | cut -d' ' -f4`
	else
		_t0=`date +%s.%N`
		ip netns exec "$LFN_A" sh -c "$1" </dev/null >/dev/null 2>&1
		ELAPSED=`echo "\`date +%s.%N\` - $_t0" | bc`
		CCPU=
		CRSS=
	fi
	hwm_stop
	# Let sshd reap the session before reading its children's time.
	sleep 1
	SCPU=`echo "\`sshd_cpu\` - $_s0" | bc`
}

# cmd DIR METHOD SSH SCP SFTP FILE: the shell command for one transfer.
cmd() {
	_o="-F $SSH_CONFIG${BENCH_CIPHER:+ -c $BENCH_CIPHER}"
	_scp="${BENCH_SCP_OPTS:-}"
	_sftp="${BENCH_SFTP_OPTS:-}"
	case $4 in
	"$HPN_BUILD"/*)	_scp="$_scp ${BENCH_OURS_OPTS:-}"
			_sftp="$_sftp ${BENCH_OURS_OPTS:-}" ;;
	esac
	_t="$TESTDIR/tree.dst"
	_rmt="rm -rf $_t"
	_m="$TESTDIR/mux.ctl"
	_rc="rclone -q --config /dev/null --transfers 8 --multi-thread-streams 8"
	_rc="$_rc --ignore-checksum --sftp-disable-hashcheck"
	_rr=":sftp,host=$LFN_ADDR_B,port=$SSHD_PORT,user=$USER"
	_rr="$_rr,key_file=$TESTDIR/id_ed25519:"
	_lf="lftp -c \"set sftp:connect-program '$SYS_SSH -a -x -F $SSH_CONFIG';"
	_lf="$_lf set xfer:clobber on; open sftp://hpntest;"
	case "$1:$2" in
	up:ssh-file)	echo "$3 $_o hpntest 'cat >/dev/null' <$6" ;;
	up:ssh-pipe)	echo "cat $6 | $3 $_o hpntest 'cat >/dev/null'" ;;
	up:ssh-file-x8)	echo "for i in 1 2 3 4 5 6 7 8; do $3 $_o hpntest" \
			    "'cat >/dev/null' <$6.x8 & done; wait" ;;
	up:ssh-mux-x8)	echo "$3 $_o -M -S $_m -f -N hpntest &&" \
			    "for i in 1 2 3 4 5 6 7 8; do $3 $_o -S $_m hpntest" \
			    "'cat >/dev/null' <$6.x8 & done; wait;" \
			    "$3 $_o -S $_m -O exit hpntest" ;;
	up:scp)		echo "$4 -q -S $3 $_o $_scp $6 hpntest:/dev/null" ;;
	up:sftp)	printf 'put %s /dev/null\n' "$6" >"$TESTDIR/b.$1"
			echo "$5 -q -S $3 $_o $_sftp -b $TESTDIR/b.$1 hpntest" ;;
	down:ssh-file)	echo "$3 $_o hpntest 'cat $6' >/dev/null" ;;
	down:ssh-pipe)	echo "$3 $_o hpntest 'cat $6 | cat' >/dev/null" ;;
	down:ssh-file-x8) echo "for i in 1 2 3 4 5 6 7 8; do $3 $_o hpntest" \
			    "'cat $6.x8' >/dev/null & done; wait" ;;
	down:ssh-mux-x8) echo "$3 $_o -M -S $_m -f -N hpntest &&" \
			    "for i in 1 2 3 4 5 6 7 8; do $3 $_o -S $_m hpntest" \
			    "'cat $6.x8' >/dev/null & done; wait;" \
			    "$3 $_o -S $_m -O exit hpntest" ;;
	down:scp)	echo "$4 -q -S $3 $_o $_scp hpntest:$6 /dev/null" ;;
	down:sftp)	printf 'get %s /dev/null\n' "$6" >"$TESTDIR/b.$1"
			echo "$5 -q -S $3 $_o $_sftp -b $TESTDIR/b.$1 hpntest" ;;
	# A tree (FILE is a directory) into $TESTDIR/tree.dst, made anew.
	up:tar-tree)	echo "$_rmt; tar cf - -C $6 . | $3 $_o hpntest" \
			    "'mkdir $_t && tar xf - -C $_t'" ;;
	up:scp-tree)	echo "$_rmt; $4 -r -q -S $3 $_o $_scp $6 hpntest:$_t" ;;
	up:sftp-tree)	printf 'put -r %s %s\n' "$6" "$_t" >"$TESTDIR/b.$1"
			echo "$_rmt; $5 -q -S $3 $_o $_sftp -b $TESTDIR/b.$1" \
			    "hpntest" ;;
	down:tar-tree)	echo "$_rmt; mkdir $_t && $3 $_o hpntest 'tar cf - -C $6 .'" \
			    "| tar xf - -C $_t" ;;
	down:scp-tree)	echo "$_rmt; $4 -r -q -S $3 $_o $_scp hpntest:$6 $_t" ;;
	down:sftp-tree)	printf 'get -r %s %s\n' "$6" "$_t" >"$TESTDIR/b.$1"
			echo "$_rmt; $5 -q -S $3 $_o $_sftp -b $TESTDIR/b.$1" \
			    "hpntest" ;;
	# rclone (its own SSH, 8 files at once; a download of one file in
	# 8 ranges at once) and lftp (through Debian's ssh; 8 files at
	# once, pget of one file in 8 ranges): others' parallel modes.
	up:rclone)	echo "$_rc copyto $6 $_rr$_t.1" ;;
	down:rclone)	echo "rm -f $_t.1; $_rc copyto $_rr$6 $_t.1" ;;
	up:rclone-tree)	echo "$_rmt; $_rc copy $6 $_rr$_t" ;;
	down:rclone-tree) echo "$_rmt; $_rc copy $_rr$6 $_t" ;;
	up:lftp)	echo "$_lf put $6 -o $_t.1\"" ;;
	down:lftp)	echo "rm -f $_t.1; $_lf pget -n 8 $6 -o $_t.1\"" ;;
	up:lftp-tree)	echo "$_rmt; $_lf mirror -R --parallel=8 $6 $_t\"" ;;
	down:lftp-tree)	echo "$_rmt; $_lf mirror --parallel=8 $6 $_t\"" ;;
	esac
}

# median FIELD: the median of field FIELD of $TESTDIR/rates ("-" stays).
median() {
	cut -d' ' -f$1 "$TESTDIR/rates" | sort -g |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bench_pair LABEL DIR CLIENT-BUILD SERVER-FLAVOUR
bench_pair() {
	_label="$1"
	_way="$2"
	_cb="$3"
	lfn_start_sshd "b`echo "$_label" | tr -c 'a-z\n' _`" "$4"
	for _m in $METHODS; do
		# Others' clients, once per direction against the stock sshd.
		case $_m:$_label in
		rclone*:patched-\>stock|lftp*:patched-\>stock) ;;
		rclone*:patched\<-stock|lftp*:patched\<-stock) ;;
		rclone*:patched-\>debian|lftp*:patched-\>debian) ;;
		rclone*:patched\<-debian|lftp*:patched\<-debian) ;;
		rclone*|lftp*) continue ;;
		esac
		: >"$TESTDIR/runs"
		case $_m in
		*-tree)	_e="$EMPTY_TREE" _d="$TREE" _b=$TREE_BYTES ;;
		*)	_e="$EMPTY" _d="$DATA" _b=$BYTES ;;
		esac
		_r=0
		while [ $_r -lt $RUNS ]; do
			run "`cmd $_way $_m $_cb/ssh $_cb/scp $_cb/sftp $_e`"
			_setup=$ELAPSED
			case $_way in
			up)	dips_start "$LFN_A" \
				    "dst $LFN_ADDR_B:$SSHD_PORT" $_b ;;
			down)	dips_start "$LFN_B" \
				    "src $LFN_ADDR_B:$SSHD_PORT" $_b ;;
			esac
			run "`cmd $_way $_m $_cb/ssh $_cb/scp $_cb/sftp $_d`"
			dips_stop
			case $_m in
			*-x8)	SRSS=$SRSS_SUM ;;
			esac
			echo "$ELAPSED $_setup ${CCPU:--} $SCPU ${CRSS:--} $SRSS" \
			    "$DIP" >>"$TESTDIR/runs"
			_r=`expr $_r + 1`
		done
		# One line per run: MB/s, client and server s/GiB and peak
		# RSS in MiB; then the medians (the lower middle value of an
		# even count).
		awk -v b="$_b" -v gib=$GIB '{
			d = $1 - $2; if (d <= 0) d = $1
			print b / d / 1e6, $3 == "-" ? "-" : $3 * gib / b,
			    $4 * gib / b, $5 == "-" ? "-" : $5 / 1024, $6 / 1024
		}' "$TESTDIR/runs" >"$TESTDIR/rates"
		_lo=`sort -g "$TESTDIR/rates" | head -n 1 | cut -d' ' -f1`
		_hi=`sort -g "$TESTDIR/rates" | tail -n 1 | cut -d' ' -f1`
		_dips=`awk '{ n += $7 } END { print n + 0 }' "$TESTDIR/runs"`
		awk -v l="$_label" -v m="$_m" -v mbs="`median 1`" \
		    -v cc="`median 2`" -v sc="`median 3`" -v raw="$RAW" \
		    -v cr="`median 4`" -v sr="`median 5`" \
		    -v lo="$_lo" -v hi="$_hi" -v runs=$RUNS -v dips=$_dips 'BEGIN {
			cc = cc == "-" ? "-" : sprintf("%.2f", cc)
			cr = cr == "-" ? "-" : sprintf("%.0f", cr)
			printf "%-18s %-11s %8.1f %6.0f%% %9s %9.2f %7s %7.0f", l,
			    m, mbs, 100 * mbs / raw, cc, sc, cr, sr
			if (runs > 1)
				printf "   %3.0f-%.0f%%", 100 * lo / raw,
				    100 * hi / raw
			if (dips > 0)
				printf "   PROBE_RTT at the start in %d of %d",
				    dips, runs
			printf "\n"
		}'
	done
	stop_sshd
}

# window_row: one patched->patched upload with sshd at LogLevel DEBUG2:
# the largest window, the largest budget need and sshd's peak RSS.
window_row() {
	lfn_start_sshd bwin hpn "LogLevel DEBUG2"
	run "`cmd up ssh-file $HPN_BUILD/ssh - - $DATA`"
	_w=`max_window "$SSHD_LOG"`
	_n=`sed -n 's/.*window budget [0-9]* = need \([0-9]*\) .*/\1/p' \
	    "$SSHD_LOG" | sort -n | tail -n 1`
	echo "window (patched->patched ssh-file, sshd at debug2): largest" \
	    "${_w:-?} bytes, budget need up to ${_n:-?}; sshd-session peak" \
	    "RSS `expr $SRSS / 1024` MiB; `echo "$BYTES $ELAPSED" |
	    awk '{ printf "%.1f", $1 / $2 / 1e6 }'` MB/s (with setup)"
	stop_sshd
}

EMPTY="$TESTDIR/empty"
: >"$EMPTY"
: >"$EMPTY.x8"
# The tree of the *-tree methods: BENCH_TREE_FILES files of
# BENCH_TREE_KIB KiB (default 1000 of 64).
TREE_FILES=${BENCH_TREE_FILES:-1000}
TREE_KIB=${BENCH_TREE_KIB:-64}
case "$TREE_FILES:$TREE_KIB" in
*[!0-9:]*|0:*|*:0|:*|*:)
	echo "bench-lfn: BENCH_TREE_FILES and BENCH_TREE_KIB must be positive numbers, not '$TREE_FILES' and '$TREE_KIB'" >&2
	exit 1 ;;
esac
TREE_BYTES=`expr $TREE_FILES \* $TREE_KIB \* 1024`
EMPTY_TREE="$TESTDIR/emptytree"
mkdir "$EMPTY_TREE"
case " ${BENCH_METHODS:-} " in
*-tree" "*)
	TREE="$TESTDIR/tree"
	mkdir "$TREE"
	_i=0
	while [ $_i -lt $TREE_FILES ]; do
		head -c `expr $TREE_KIB \* 1024` /dev/urandom >"$TREE/f$_i"
		_i=`expr $_i + 1`
	done
	echo "tree: $TREE_FILES files of $TREE_KIB KiB (the *-tree rows: MB/s over" \
	    "`expr $TREE_BYTES / 1048576` MiB)"
	;;
esac
for link in $LINKS; do
	mbit=${link%:*}
	rtt=${link#*:}
	if [ $rtt -ge 600 ]; then
		_bytes=`expr 2 \* $GIB`
		METHODS=${BENCH_METHODS:-"ssh-file scp sftp"}
	else
		_bytes=$GIB
		METHODS=${BENCH_METHODS:-"ssh-file ssh-pipe scp sftp"}
	fi
	eval "BYTES=\${BENCH_BYTES_${mbit}_$rtt:-\${BENCH_BYTES_$mbit:-\${BENCH_BYTES:-$_bytes}}}"
	RAW_BYTES=${BENCH_RAW_BYTES:-$BYTES}
	DATA=`make_data $BYTES`
	case " $METHODS " in
	*" ssh-file-x8 "*|*" ssh-mux-x8 "*)
		head -c `expr $BYTES / 8` "$DATA" >"$DATA.x8" ;;
	esac
	lfn_up $mbit $rtt >"$TESTDIR/lfn.out" || exit 1
	_l0=`link_cpu`
	RAW=`lfn_a "$TESTDIR/lfnperf" -c $LFN_ADDR_B 5201 $RAW_BYTES |
	    cut -d' ' -f3`
	_l1=`link_cpu`
	echo
	echo "link: $mbit Mbit/s, RTT $rtt ms (measured $LFN_RTT ms), $LFN_KIND, MTU $LFN_MTU, cipher ${BENCH_CIPHER:-default}, TCP congestion control `lfn_a sysctl -n net.ipv4.tcp_congestion_control`${BENCH_OURS_OPTS:+, our scp and sftp with $BENCH_OURS_OPTS}"
	echo "raw TCP, `expr $RAW_BYTES / 1048576` MiB: $RAW MB/s; each transfer below: `expr $BYTES / 1048576` MiB"
	[ -z "$_l0" ] || echo "link process (tunlink) CPU during raw TCP:" \
	    "`echo "$_l1 $_l0" | awk -v b=$RAW_BYTES -v g=$GIB \
	    '{ printf "%.2f", ($1 - $2) * g / b }'` s/GiB"
	[ $RUNS -eq 1 ] || echo "each row: medians of $RUNS runs; last column: lowest-highest % of raw TCP"
	printf "%-18s %-11s %8s %7s %9s %9s %7s %7s" pair method "MB/s" "raw" \
	    "cli s/GiB" "srv s/GiB" "cli MiB" "srv MiB"
	[ $RUNS -eq 1 ] && echo || printf "   %s\n" "runs"
	for pair in $PAIRS; do
		case "$pair" in
		"stock->stock")	bench_pair "$pair" up "$STOCK_BUILD" stock ;;
		"patched->patched") bench_pair "$pair" up "$HPN_BUILD" hpn ;;
		"stock->patched") bench_pair "$pair" up "$STOCK_BUILD" hpn ;;
		"patched<-stock") bench_pair "$pair" down "$HPN_BUILD" stock ;;
		"patched->stock") bench_pair "$pair" up "$HPN_BUILD" stock ;;
		"patched<-patched") bench_pair "$pair" down "$HPN_BUILD" hpn ;;
		"stock<-stock")	bench_pair "$pair" down "$STOCK_BUILD" stock ;;
		"patched->debian") bench_pair "$pair" up "$HPN_BUILD" system ;;
		"stock->debian") bench_pair "$pair" up "$STOCK_BUILD" system ;;
		"patched<-debian") bench_pair "$pair" down "$HPN_BUILD" system ;;
		"stock<-debian") bench_pair "$pair" down "$STOCK_BUILD" system ;;
		*)		echo "bench-lfn: unknown pair $pair" >&2 ;;
		esac
	done
	case " $PAIRS " in
	*" patched->patched "*)	[ $rtt -lt 600 ] || window_row ;;
	esac
	lfn_down
	sed -n 's/^tunlink: a->b/# link counters: a->b/p' "$TESTDIR/tunlink.log" 2>/dev/null
	rm -f "$DATA" "$DATA.x8" "$TESTDIR/tunlink.log"
done
exit 0
