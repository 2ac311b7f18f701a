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

. "`dirname "$0"`/../regress/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

LINK=${BENCH_LINK:-1000:600}
BYTES=${BENCH_BYTES:-2147483648}
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
SRC=`make_data $BYTES`
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
