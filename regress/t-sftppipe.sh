#!/bin/sh
#
# t-sftppipe.sh: scp's and sftp's request pipeline (patch 0007,
# sftp-pipeline.c).
#
#   On loopback: a file of odd size up and down with scp and sftp, and
#   with a fixed pipeline (sftp -R 64, scp -X nrequests=64), byte-exact;
#   the fixed ones never log a change of the pipeline.  An upload allows
#   256 MiB of requests from the start; with a fixed count it still waits
#   for the first write's status, as stock does.  A download sends the
#   reads the file needs (up to 64) before the first reply; with a fixed
#   count it sends one, as stock does.  An upload into
#   /dev/full fails with stock's messages and exit status, and stops
#   within a few writes (it reads each status as it comes).
#   As root, on an emulated 1 Gbit/s link with a 600 ms round trip
#   (75 MB in flight to fill it): scp up (at once) and sftp down (as the
#   rate grows) go past stock's 64 requests (16 MiB) and stay byte-exact;
#   scp's upload sends more writes before it reads the first status; with
#   -X nrequests=64 it stays at 64.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

SSH="$HPN_BUILD/ssh"
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
STOCK_REQ=64
STOCK_BYTES=16777216
[ -x "$SCP" ] && [ -x "$SFTP" ] || die "no scp or sftp in $HPN_BUILD"
grep -q 'sftp-pipeline' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip sftppipe "the tree under test has no patch 0007"
	exit 0
}

# grown LOG: the largest "N requests of B bytes in flight" (N * B) that
# sftp_pipe_round (a download's growth) or sftp_pipe_full (an upload's
# start) logged, or 0.
grown() {
	sed -n 's/.*sftp_pipe_[a-z]*: \([0-9]*\) requests of \([0-9]*\) bytes in flight.*/\1 \2/p' \
	    "$1" | awk '$1 * $2 > m { m = $1 * $2 } END { print m + 0 }'
}

# grows NAME LOG: pass if LOG shows the pipeline past stock's 16 MiB.
grows() {
	_g=`grown "$2"`
	if [ "$_g" -gt $STOCK_BYTES ]; then
		pass "$1"
		echo "# $1: up to $_g bytes of requests in flight"
	else
		fail "$1" "the pipeline stayed at $_g bytes (stock: $STOCK_BYTES)"
	fi
}

# writes_first LOG: how many writes an upload (-vvv) sent before it read
# the first write's status.
writes_first() {
	awk '/Sent message SSH2_FXP_WRITE/ { n++ }
	    /SSH2_FXP_STATUS/ && n { print n; exit }' "$1"
}

# reads_first LOG: how many reads a download (-vvv) sent before the first
# reply came in.
reads_first() {
	awk '/Request range/ { n++ } /Received reply T:/ && n { print n; exit }' \
	    "$1"
}

# --- On loopback.
DATA=`make_data 9437441`	# 9 MiB and a bit: not a multiple of any request
start_sshd lo hpn
OUT="$TESTDIR/out"

rm -f "$OUT"
"$SCP" -vvv -S "$SSH" -F "$SSH_CONFIG" "$DATA" hpntest:"$OUT" \
    2>"$TESTDIR/scp.up.log"
check_copy lo-scp-up scp $? "$TESTDIR/scp.up.log" "$DATA" "$OUT"
grows lo-scp-up-full "$TESTDIR/scp.up.log"
rm -f "$TESTDIR/down"
"$SCP" -vvv -S "$SSH" -F "$SSH_CONFIG" hpntest:"$DATA" "$TESTDIR/down" \
    2>"$TESTDIR/scp.down.log"
check_copy lo-scp-down scp $? "$TESTDIR/scp.down.log" "$DATA" "$TESTDIR/down"
n=`reads_first "$TESTDIR/scp.down.log"`
if [ "${n:-0}" -gt 1 ]; then
	pass lo-scp-down-first-reads
	echo "# lo-scp-down-first-reads: $n reads before the first reply (stock: 1)"
else
	fail lo-scp-down-first-reads "${n:-no} reads before the first reply"
fi
rm -f "$TESTDIR/down"
"$SCP" -vvv -X nrequests=$STOCK_REQ -S "$SSH" -F "$SSH_CONFIG" \
    hpntest:"$DATA" "$TESTDIR/down" 2>"$TESTDIR/scp.fixed.down.log"
check_copy lo-scp-fixed-down scp $? "$TESTDIR/scp.fixed.down.log" "$DATA" \
    "$TESTDIR/down"
n=`reads_first "$TESTDIR/scp.fixed.down.log"`
if [ "${n:-0}" -eq 1 ]; then
	pass lo-scp-fixed-first-read
else
	fail lo-scp-fixed-first-read "${n:-no} reads before the first reply"
fi

rm -f "$OUT" "$TESTDIR/down"
printf 'put %s %s\nget %s %s\n' "$DATA" "$OUT" "$DATA" "$TESTDIR/down" \
    >"$TESTDIR/batch"
"$SFTP" -v -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" hpntest \
    >/dev/null 2>"$TESTDIR/sftp.log"
rc=$?
check_copy lo-sftp-up sftp $rc "$TESTDIR/sftp.log" "$DATA" "$OUT"
check_copy lo-sftp-down sftp $rc "$TESTDIR/sftp.log" "$DATA" "$TESTDIR/down"

rm -f "$OUT" "$TESTDIR/down"
"$SFTP" -v -R $STOCK_REQ -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" \
    hpntest >/dev/null 2>"$TESTDIR/sftp.fixed.log"
rc=$?
check_copy lo-sftp-fixed-up sftp $rc "$TESTDIR/sftp.fixed.log" "$DATA" "$OUT"
check_copy lo-sftp-fixed-down sftp $rc "$TESTDIR/sftp.fixed.log" "$DATA" \
    "$TESTDIR/down"
check_has_not lo-sftp-fixed-stays "$TESTDIR/sftp.fixed.log" 'sftp_pipe_'
rm -f "$OUT"
"$SCP" -vvv -X nrequests=$STOCK_REQ -S "$SSH" -F "$SSH_CONFIG" "$DATA" \
    hpntest:"$OUT" 2>"$TESTDIR/scp.fixed.log"
check_copy lo-scp-fixed-up scp $? "$TESTDIR/scp.fixed.log" "$DATA" "$OUT"
check_has_not lo-scp-fixed-stays "$TESTDIR/scp.fixed.log" 'sftp_pipe_'
n=`writes_first "$TESTDIR/scp.fixed.log"`
if [ "${n:-0}" -eq 1 ]; then
	pass lo-scp-fixed-first-wait
else
	fail lo-scp-fixed-first-wait "${n:-no} writes before the first status"
fi

# Writes that fail: stock's scp and ours into /dev/full, 64 MiB (258
# writes).  The same messages (without the program's path) and exit
# status; ours stops within stock's 64 requests.
if [ -c /dev/full ]; then
	FULL=`make_data 67108864`
	for who in stock hpn; do
		case $who in
		stock)	b="$STOCK_BUILD" ;;
		hpn)	b="$HPN_BUILD" ;;
		esac
		"$b/scp" -vvv -S "$SSH" -F "$SSH_CONFIG" "$FULL" \
		    hpntest:/dev/full >/dev/null 2>"$TESTDIR/full.$who.log"
		echo $? >"$TESTDIR/full.$who.rc"
		# -vvv's channel list (indented "#N ..." lines, then an
		# empty one, with a carriage return) is chatter too: ours,
		# the master of streams' control socket, lists once more.
		grep -v "^  #\|^`printf '\r'`*\$" "$TESTDIR/full.$who.log" |
		    client_messages >"$TESTDIR/full.$who.msg"
	done
	if ! [ -s "$TESTDIR/full.hpn.msg" ] ||
	    ! cmp -s "$TESTDIR/full.stock.msg" "$TESTDIR/full.hpn.msg"; then
		fail lo-scp-full-messages "`head -n 1 "$TESTDIR/full.hpn.msg"`"
	elif [ "`cat "$TESTDIR/full.hpn.rc"`" = 0 ] ||
	    ! cmp -s "$TESTDIR/full.stock.rc" "$TESTDIR/full.hpn.rc"; then
		fail lo-scp-full-messages "exit status `cat \
		    "$TESTDIR/full.hpn.rc"`, stock's `cat "$TESTDIR/full.stock.rc"`"
	else
		pass lo-scp-full-messages
	fi
	n=`grep -c 'Sent message SSH2_FXP_WRITE' "$TESTDIR/full.hpn.log"`
	if [ "$n" -lt $STOCK_REQ ]; then
		pass lo-scp-full-stops
		echo "# lo-scp-full-stops: $n writes sent (stock: 1)"
	else
		fail lo-scp-full-stops "$n writes sent before it stopped"
	fi
	rm -f "$FULL"
else
	skip lo-scp-full "no /dev/full"
fi
stop_sshd
rm -f "$OUT" "$TESTDIR/down" "$DATA"

# --- On the emulated long fat network: on the default release only (the
# loopback checks above run the release's hooks), not with
# HPN_WINDOW_LONG=no.
if [ "${HPN_WINDOW_LONG:-yes}" = no ] || default_release_only "lfn-*"; then
	exit 0
fi
if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
lfn_up 1000 600
DATA=`make_data ${HPN_SFTPPIPE_BYTES:-268435456}`
lfn_start_sshd pipe hpn

# lfn_copy NAME LOG DEST SCP-OR-SFTP-COMMAND...: run it in namespace A,
# then compare DEST with DATA.
lfn_copy() {
	_n="$1"
	_log="$2"
	_dest="$3"
	shift 3
	rm -f "$_dest"
	lfn_a "$@" >/dev/null 2>"$_log"
	check_copy "$_n" "$1" $? "$_log" "$DATA" "$_dest"
}

lfn_copy lfn-scp-up "$TESTDIR/lfn.scp.log" "$OUT" \
    "$SCP" -vvv -S "$SSH" -F "$SSH_CONFIG" "$DATA" hpntest:"$OUT"
grows lfn-scp-up-full "$TESTDIR/lfn.scp.log"
n=`writes_first "$TESTDIR/lfn.scp.log"`
if [ "${n:-0}" -gt 1 ]; then
	pass lfn-scp-up-no-first-wait
	echo "# lfn-scp-up-no-first-wait: $n writes before the first status"
else
	fail lfn-scp-up-no-first-wait "${n:-no} write(s) before the first status"
fi

printf 'get %s %s\n' "$DATA" "$TESTDIR/down" >"$TESTDIR/batch.down"
lfn_copy lfn-sftp-down "$TESTDIR/lfn.sftp.log" "$TESTDIR/down" \
    "$SFTP" -v -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch.down" hpntest
grows lfn-sftp-down-grows "$TESTDIR/lfn.sftp.log"

lfn_copy lfn-scp-fixed-up "$TESTDIR/lfn.fixed.log" "$OUT" \
    "$SCP" -v -X nrequests=$STOCK_REQ -S "$SSH" -F "$SSH_CONFIG" "$DATA" \
    hpntest:"$OUT"
check_has_not lfn-scp-fixed-stays "$TESTDIR/lfn.fixed.log" 'sftp_pipe_'
rm -f "$OUT" "$TESTDIR/down"
exit 0
