#!/bin/sh
#
# t-sftpadv.sh: every copy mode of scp and sftp against an SFTP server
# that behaves legally but unlike OpenSSH's (regress/sftp-adversary.py,
# through -D), the unpatched client beside ours (lib-sftp.sh).
#
#   For each of the server's behaviours (short READ replies, replies in
#   any order, delays, listings in small pieces or starting over after
#   EOF, a READ or WRITE failing at an offset, OPEN refused for some
#   names, a small or large handle limit, no limits extension, no size
#   changes, hostile names in listings) and each copy mode (scp and
#   sftp, up and down, -r, -p, a glob, several arguments, one file,
#   resume, two sources of one name): the same exit status, messages
#   and files as the unpatched client, and nothing lost.
#   A listing whose 1st or 2nd reply comes after 80 later ones: the same.
#   scp -Z over a part that differs, the range copied again failing (a
#   READ down, a WRITE up): exit non-zero, a start of the source left.
#   Messages (stdout and stderr together) in the unpatched client's order.
#   A connection that drops after N requests: the patched client exits
#   255 (or 0, no file failed, if it was done), and every file is as
#   before, whole, or named in an error line.
#   A server that stops answering, then an interrupt (sftp) and the
#   connection gone: the same.
#   An interrupt of sftp in mid-copy, both ways: every file as before,
#   whole, or named; no open handle left.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"

grep -q 'sftp-batch' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip sftpadv "the tree under test has no sftp-batch.c"
	exit 0
}

SWITCHES="short=8192 short=1000,shortrand=1 reorder=16
	reorder=64,chunk=2 delay=3,reorder=4 restart=1,chunk=3
	failread=70000,failname=f1* failwrite=70000,failname=f1*
	refuse=f2* handles=1 handles=3 handles=64 nolimits=1 nosize=1 hostile=1
	short=3000,shortrand=1,reorder=32,chunk=5,restart=1"

DROPS="6 25 60 140"
DROP_MODES="sftp-get-r sftp-put-r scp-down-r scp-up-args"
INT_MODES="sftp-get-r sftp-put-r sftp-get-glob sftp-put-glob"
STOP_MODES="scp-down-r scp-up-r scp-up-args"

# The whole matrix on the default release; elsewhere each hunk once.
if other_release; then
	SWITCHES="short=8000,shortrand=1,reorder=32,chunk=5,restart=1"
	ADV_MODES="sftp-get-r sftp-put-r scp-down-glob scp-up-args
	    sftp-put-dup scp-up-one scp-down-one"
	DROPS=25
	DROP_MODES="sftp-get-r scp-up-args"
	INT_MODES=sftp-get-r
	STOP_MODES=scp-down-r
	echo "# $SUITE: one mix of switches, fewer drops and interrupts" \
	    "on this release"
fi

adv_setup 7 24
for sw in $SWITCHES; do
	for m in $ADV_MODES; do
		adv_same "$m/$sw" $m "$sw"
	done
done

# A listing's reply held back past 80 later ones (its 1st, its 2nd):
# every name still comes, in both clients.
for sw in holddir=1,chunk=10 holddir=2,chunk=3; do
	for m in sftp-get-r scp-down-r; do
		adv_same "$m/$sw" $m "$sw"
	done
done

# Messages in the unpatched client's order: put -r of directories that
# each hold a file and a FIFO (skipped, with a line on stderr): stdout
# and stderr together, line by line, the same.
mkdir -p "$TESTDIR/ord"
for i in 1 2 3 4 5 6; do
	mkdir "$TESTDIR/ord/d$i"
	head -c 300000 /dev/zero >"$TESTDIR/ord/d$i/f"
	mkfifo "$TESTDIR/ord/d$i/p"
done
for who in hpn stock; do
	b=`adv_build $who`
	rm -rf "$TESTDIR/orddst"
	mkdir "$TESTDIR/orddst"
	echo "put -r $TESTDIR/ord $TESTDIR/orddst" >"$TESTDIR/batch"
	HPN_ADVERSARY=delay=5 timeout -s INT -k 5 60 stdbuf -oL -eL \
	    "$b/sftp" -D "$ADV" -b "$TESTDIR/batch" 2>&1 |
	    tr -d '\r' >"$TESTDIR/ord.$who"
done
if grep -q 'not a regular file' "$TESTDIR/ord.hpn" &&
    cmp -s "$TESTDIR/ord.stock" "$TESTDIR/ord.hpn"; then
	pass order
else
	fail order "`diff "$TESTDIR/ord.stock" "$TESTDIR/ord.hpn" |
	    grep '^[<>]' | head -n 2 | tr '\n' ' '`"
fi

# One file of many requests copied in place (scp, both ways) from and to
# a server that answers out of order: whole, exit status 0.  (9.2p1's own
# scp cuts it short, to the first reply out of order.)
BIG=`make_data 3000017`
for dir in up down; do
	rm -f "$TESTDIR/big.out"
	case $dir in
	up)	set -- "$BIG" "x:$TESTDIR/big.out" ;;
	down)	set -- "x:$BIG" "$TESTDIR/big.out" ;;
	esac
	HPN_ADVERSARY=reorder=32,seed=3 timeout -s INT -k 5 $ADV_TIMEOUT \
	    "$HPN_BUILD/scp" -q -D "$ADV" "$@" 2>"$TESTDIR/err.big"
	check_copy "scp-$dir-inplace-reordered" scp $? "$TESTDIR/err.big" \
	    "$BIG" "$TESTDIR/big.out"
done

# Hostile names: nothing written outside the destination.
check hostile-outside test ! -e "$TESTDIR/dst.hpn/evil-up" -a \
    ! -e /tmp/evil-abs -a ! -e "$TESTDIR/dst.hpn/src/sub"

# A connection that drops after N requests (N in the listing, the
# opens, the data): exit status 255, nothing lost or left unnamed.
for n in $DROPS; do
	for m in $DROP_MODES; do
		adv_copy hpn $m "drop=$n,short=20000"
		adv_done "$m/drop=$n-status" ||
		    check "$m/drop=$n-status" test "`cat "$TESTDIR/rc.hpn"`" \
		    -eq 255
		adv_lossless "$m/drop=$n-lossless" $m
	done
done

# adv_interrupt NAME MODE SWITCHES: once the server has answered some
# requests, SIGINT to sftp (scp dies at once on SIGINT, as it always
# has: it is left out), then, if the server stopped answering, the
# connection closed; what is left is lossless and, after an interrupt
# alone, every handle closed.
adv_interrupt() {
	: >"$TESTDIR/adv.log"
	adv_copy hpn "$2" "$3,log=$TESTDIR/adv.log" &
	_pid=$!
	hpn_track_pid $_pid
	wait_until 20 grep -qs '^open \|^stopped ' "$TESTDIR/adv.log"
	sleep 0.3
	sftp_interrupt $_pid
	_spid=`sed -n 's/^stopped //p' "$TESTDIR/adv.log"`
	if [ -n "$_spid" ]; then
		sleep 0.5
		kill "$_spid" 2>/dev/null
	fi
	wait $_pid
	hpn_untrack_pid $_pid
	adv_done "$1-status" || pass "$1-status"
	adv_lossless "$1-lossless" "$2"
	if [ -z "$_spid" ]; then
		_o=`grep -c '^open ' "$TESTDIR/adv.log"`
		_c=`grep -c '^close ' "$TESTDIR/adv.log"`
		check "$1-closed" test "$_o" -eq "$_c"
	fi
}

for m in $INT_MODES; do
	adv_interrupt "$m/interrupt" $m "delay=40,short=30000"
	adv_interrupt "$m/stop" $m "stop=40"
done
for m in $STOP_MODES; do
	adv_interrupt "$m/stop" $m "stop=40"
done

# A resumed part that differs from its source is copied again; a READ
# (down) or WRITE (up) of that range fails: scp -Z exits non-zero and
# leaves a start of the source, never its full size with old bytes.
head -c 3000000 /dev/urandom >"$TESTDIR/redo.src"
for dir in down up; do
	head -c 2000000 /dev/zero >"$TESTDIR/redo.dst"
	case $dir in
	down)	set -- "x:$TESTDIR/redo.src" "$TESTDIR/redo.dst"
		_sw=checkfile=ok,failread=1000000,failname=redo.src ;;
	up)	set -- "$TESTDIR/redo.src" "x:$TESTDIR/redo.dst"
		_sw=checkfile=ok,failwrite=1000000,failname=redo.dst ;;
	esac
	HPN_ADVERSARY=$_sw timeout -s INT -k 5 $ADV_TIMEOUT \
	    "$HPN_BUILD/scp" -q -Z -D "$ADV" "$@" 2>"$TESTDIR/err.redo"
	_rc=$?
	_sz=`wc -c <"$TESTDIR/redo.dst"`
	if [ $_rc -ne 0 ] && [ "$_sz" -lt 3000000 ] &&
	    cmp -s -n "$_sz" "$TESTDIR/redo.src" "$TESTDIR/redo.dst"; then
		pass "redo-fails-$dir"
	else
		fail "redo-fails-$dir" "exit status $_rc, $_sz bytes (`head -n 2 \
		    "$TESTDIR/err.redo" | tr '\n' ' '`)"
	fi
done

# A verified resumed upload sends an appending open (the gate) beside its
# own: where the server refuses both, in either order of the replies, the
# file is named once, as stock's reput names it, and left as it was.
head -c 1000000 "$TESTDIR/redo.src" >"$TESTDIR/gate.part"
for sw in checkfile=ok,refuse=gate.dst checkfile=ok,refuse=gate.dst,reorder=4
do
	cp "$TESTDIR/gate.part" "$TESTDIR/gate.dst"
	echo "reput $TESTDIR/redo.src $TESTDIR/gate.dst" >"$TESTDIR/b.gate"
	HPN_ADVERSARY=$sw timeout -s INT -k 5 $ADV_TIMEOUT \
	    "$HPN_BUILD/sftp" -D "$ADV" -b "$TESTDIR/b.gate" \
	    >/dev/null 2>"$TESTDIR/err.gate"
	_rc=$?
	_n=`grep -c '^dest open .*: Permission denied' "$TESTDIR/err.gate"`
	if [ $_rc -eq 1 ] && [ "$_n" -eq 1 ] &&
	    cmp -s "$TESTDIR/gate.part" "$TESTDIR/gate.dst"; then
		pass "gate-refused/$sw"
	else
		fail "gate-refused/$sw" "exit status $_rc, named $_n times \
(`tr '\n' ' ' <"$TESTDIR/err.gate"`)"
	fi
done
