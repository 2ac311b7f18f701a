#!/bin/sh
#
# bench-resume.sh: an interrupted scp resumed (make bench-resume; not part
# of make check).  Needs root (network namespaces, bench/lfn.sh).
#
# On an emulated link (BENCH_LINK, Mbit/s:RTT-ms, default 1000:600) to
# our sshd, a file of BENCH_BYTES (default 2 GiB) is copied with our scp,
# down and up; each copy is killed (SIGKILL) once half the file is at the
# target, then run again
#   - with -Z: the target's part is compared (check-file) and only the
#     rest is sent;
#   - with -Z after one byte of the part left behind is changed (at
#     BENCH_BYTES/4, in a 32 MiB range): the copy resends from that range;
#   - as stock does it, with no resume: the whole file again.
# Printed per case: the bytes on the wire (ssh -v's count of what the
# copy's connection moved), the time, and whether the result is the
# source, byte for byte.  The first two cases must move the missing part
# (and, with the byte changed, the rest of its range) and no more.
#
# Then a tree half copied: BENCH_TREE_FILES (default 200; 0: none) files
# of 100 kB in 4 directories, of which at the target a quarter are
# absent, a quarter true halves, a quarter halves with their first byte
# changed and a quarter complete, downloaded again with sftp `get -a -r`
# by the unpatched client (file by file, trusting the sizes) and by ours
# (many files in flight, each compared first), and with our `scp -Z -r`:
# the time and how many files are their source's, byte for byte.
# BENCH_CASES (default "file tree") picks the parts.

. "`dirname "$0"`/../regress/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

LINK=${BENCH_LINK:-1000:600}
BYTES=${BENCH_BYTES:-2147483648}
CASES=${BENCH_CASES:-file tree}
TREE_FILES=${BENCH_TREE_FILES:-200}
case "$TREE_FILES" in
''|*[!0-9]*)	echo "bench-resume: BENCH_TREE_FILES must be a number" >&2
		exit 1 ;;
esac
for c in $CASES; do
	case $c in
	file|tree)	;;
	*)		echo "bench-resume: BENCH_CASES takes file and tree," \
			    "not '$c'" >&2
			exit 1 ;;
	esac
done
case "$BYTES" in
''|*[!0-9]*)	echo "bench-resume: BENCH_BYTES must be a number" >&2
		exit 1 ;;
esac
[ "$BYTES" -ge 268435456 ] ||
    { echo "bench-resume: BENCH_BYTES must be 256 MiB or more" >&2; exit 1; }
case "$LINK" in
*[0-9]:[0-9]*)	;;
*)		echo "bench-resume: BENCH_LINK takes MBIT:RTT, not '$LINK'" >&2
		exit 1 ;;
esac
if ! why=`lfn_usable`; then
	echo "bench-resume: skipped: $why"
	exit 0
fi

cpu=`sed -n 's/^model name[ 	]*: //p' /proc/cpuinfo | head -n 1`
echo "machine: $cpu, `nproc` cores online, Linux `uname -r`"
echo "date: `date -u '+%Y-%m-%d %H:%M UTC'`"

lfn_up "${LINK%:*}" "${LINK#*:}"
lfn_start_sshd resume hpn
case " $CASES " in
*" file "*)	SRC=`make_data $BYTES` ;;
esac
DST="$TESTDIR/dst"
R=33554432

# received LOG / sent LOG: ssh -v's byte counts of a copy.
received() {
	sed -n 's/.*Transferred: sent [0-9]*, received \([0-9]*\) bytes.*/\1/p' \
	    "$1" | tail -n 1
}
sent() {
	sed -n 's/.*Transferred: sent \([0-9]*\), received.*/\1/p' "$1" |
	    tail -n 1
}

# size FILE (local) / rsize FILE (in B): its size, 0 if none.
size() {
	stat -c %s "$1" 2>/dev/null || echo 0
}
half_there() {
	[ "`$1 "$2"`" -ge $(( BYTES / 2 )) ]
}
rsize() {
	lfn_b stat -c %s "$1" 2>/dev/null || echo 0
}

# killed DIR: an scp of SRC, down or up, killed once half of it is there.
killed() {
	rm -f "$DST"
	case $1 in
	down)	set -- "hpntest:$SRC" "$DST"; _sz=size ;;
	up)	set -- "$SRC" "hpntest:$DST"; _sz=rsize ;;
	esac
	lfn_a "$HPN_BUILD/scp" -q -S "$HPN_BUILD/ssh" -F "$SSH_CONFIG" \
	    "$@" 2>/dev/null &
	_kp=$!
	hpn_track_pid $_kp
	wait_until 600 half_there $_sz "$DST"
	for _p in `descendants $_kp` $_kp; do
		kill -KILL $_p 2>/dev/null
	done
	wait $_kp 2>/dev/null
	hpn_untrack_pid $_kp
	# The server writes what reached it before the kill: wait until
	# the size stays put for a second.
	PART=-1
	while [ "$PART" != "`$_sz "$DST"`" ]; do
		PART=`$_sz "$DST"`
		sleep 1
	done
}

# run CASE DIR MISSING [SCP-FLAG]: the copy again, which should move
# MISSING bytes of the file; prints its line.
run() {
	_miss="$3"
	set -- "$1" "$2" ${4:-}
	case $2 in
	down)	set -- "$1" "$2" ${3:-} "hpntest:$SRC" "$DST" ;;
	up)	set -- "$1" "$2" ${3:-} "$SRC" "hpntest:$DST" ;;
	esac
	_case="$1"
	_dir="$2"
	shift 2
	_t0=`date +%s.%N`
	lfn_a "$HPN_BUILD/scp" -v -S "$HPN_BUILD/ssh" -F "$SSH_CONFIG" \
	    "$@" 2>"$TESTDIR/e" >/dev/null
	_rc=$?
	_t=`echo "\`date +%s.%N\` - $_t0" | bc`
	if [ $_dir = down ]; then
		_wire=`received "$TESTDIR/e"`
	else
		_wire=`sent "$TESTDIR/e"`
	fi
	if [ $_rc -eq 0 ] && same_file "$SRC" "$DST" >/dev/null; then
		_ok=exact
	else
		_ok="NOT EXACT (exit $_rc)"
	fi
	case "$_wire" in
	''|*[!0-9]*)	echo "bench-resume: no byte count from ssh -v:" \
			    "`tail -n 2 "$TESTDIR/e" | tr '\n' ' '`" >&2
			_wire=- ;;
	esac
	printf '%-5s %-26s %11s %11s %11s %7.1f s  %s\n' \
	    $_dir "$_case" $PART $_miss "$_wire" $_t "$_ok"
}

# tree_partial: $TESTDIR/tdst/src, what an interrupted copy of
# $TESTDIR/tsrc/src left (see above).
tree_partial() {
	rm -rf "$TESTDIR/tdst"
	mkdir -p "$TESTDIR/tdst"
	cp -a "$TESTDIR/tsrc/src" "$TESTDIR/tdst/"
	_i=0
	for _f in `cd "$TESTDIR/tsrc" && find src -type f | LC_ALL=C sort`; do
		case $(( _i % 4 )) in
		0)	rm "$TESTDIR/tdst/$_f" ;;
		1|2)	head -c 50000 "$TESTDIR/tsrc/$_f" >"$TESTDIR/tdst/$_f" ;;
		esac
		[ $(( _i % 4 )) -ne 2 ] ||
		    printf 'X' | dd of="$TESTDIR/tdst/$_f" conv=notrunc \
		    status=none
		_i=$(( _i + 1 ))
	done
}

# tree_run NAME CMD...: CMD resumes the tree; prints its line.
tree_run() {
	_name="$1"
	shift
	tree_partial
	_t0=`date +%s.%N`
	lfn_a "$@" >/dev/null 2>"$TESTDIR/e"
	_rc=$?
	_t=`echo "\`date +%s.%N\` - $_t0" | bc`
	_same=0
	for _f in `cd "$TESTDIR/tsrc" && find src -type f`; do
		! cmp -s "$TESTDIR/tsrc/$_f" "$TESTDIR/tdst/$_f" ||
		    _same=$(( _same + 1 ))
	done
	printf '%-34s %8.1f s  exit %d  %d of %d files exact\n' "$_name" $_t \
	    $_rc $_same $TREE_FILES
}

if [ "$TREE_FILES" -gt 0 ] && [ -z "${CASES##*tree*}" ]; then
	mkdir -p "$TESTDIR/tsrc/src"
	for i in `seq 0 $(( TREE_FILES - 1 ))`; do
		mkdir -p "$TESTDIR/tsrc/src/d$(( i % 4 ))"
		head -c 100000 /dev/urandom \
		    >"$TESTDIR/tsrc/src/d$(( i % 4 ))/f$i"
	done
	echo "link: $LINK (Mbit/s:RTT ms), a tree of $TREE_FILES files of" \
	    "100 kB half copied, downloaded again from our sshd"
	echo "get -a -r $TESTDIR/tsrc/src $TESTDIR/tdst" >"$TESTDIR/tb"
	tree_run "unpatched sftp get -a -r" "$STOCK_BUILD/sftp" \
	    -S "$STOCK_BUILD/ssh" -F "$SSH_CONFIG" -b "$TESTDIR/tb" hpntest
	tree_run "our sftp get -a -r" "$HPN_BUILD/sftp" \
	    -S "$HPN_BUILD/ssh" -F "$SSH_CONFIG" -b "$TESTDIR/tb" hpntest
	tree_run "our scp -Z -r" "$HPN_BUILD/scp" -q -Z -r \
	    -S "$HPN_BUILD/ssh" -F "$SSH_CONFIG" "hpntest:$TESTDIR/tsrc/src" \
	    "$TESTDIR/tdst"
fi
[ -z "${CASES##*file*}" ] || exit 0

echo "link: $LINK (Mbit/s:RTT ms), file $BYTES bytes, our scp and sshd"
echo "part: the target's size after the kill; missing: what the copy must"
echo "move; wire: what its connection moved (ssh -v, protocol included)"
printf '%-5s %-26s %11s %11s %11s %9s  %s\n' dir case part missing wire time \
    result
for dir in down up; do
	killed $dir
	run "-Z, part intact" $dir $(( BYTES - PART )) -Z
	killed $dir
	at=$(( BYTES / 4 ))
	if [ $dir = down ]; then
		printf 'X' | dd of="$DST" bs=1 seek=$at conv=notrunc \
		    status=none
	else
		printf 'X' | lfn_b dd of="$DST" bs=1 seek=$at conv=notrunc \
		    status=none
	fi
	run "-Z, byte $at changed" $dir $(( BYTES - at / R * R )) -Z
	killed $dir
	run "no resume (stock's way)" $dir $BYTES
done
