#!/bin/sh
#
# t-stats.sh: scp/sftp's progress meter (patch 0004) shows the current
# rate and, when a file completes, the peak rate; with no terminal the
# output is stock's byte for byte.  sshd's transfer log line (patch
# 0005) is t-translog's.

. "`dirname "$0"`/lib.sh"

SSH="$HPN_BUILD/ssh"
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
COLS=100
# scp/sftp -l is in Kbit/s (1024 bits): 4096 is 512 KiB/s, so 3 MiB
# takes about six seconds: several refreshes of the meter.
LIMIT=4096
LIMIT_BPS=`expr $LIMIT \* 128`
MSIZE=3145728

start_sshd stats hpn

# to_bytes "512.3KB": the meter's figure in bytes (integer).
to_bytes() {
	echo "$1" | awk '{
		v = $0; u = substr(v, length(v) - 1, 1); sub(/[KMGT]?B$/, "", v)
		m = 1
		if (u == "K") m = 1024; else if (u == "M") m = 1048576
		else if (u == "G") m = 1073741824
		printf "%d\n", v * m
	}'
}

# check_meter NAME OUTPUT: the refreshes show "RATE/s now", the final line
# "100% ... AVG/s PEAK/s peak" with AVG <= PEAK, every line fits COLS.
check_meter() {
	_n="$1"
	tr '\r' '\n' <"$2" | grep '%' | sed 's/ *$//' >"$2.lines"
	_now=`grep -c '/s now ' "$2.lines"`
	_last=`grep ' 100% ' "$2.lines" | tail -n 1`
	_wide=`awk -v c=$COLS 'length($0) > c' "$2.lines" | head -n 1`
	if [ -n "$_wide" ]; then
		fail "$_n-width" "line wider than $COLS: '$_wide'"
	else
		pass "$_n-width"
	fi
	if [ "$_now" -lt 2 ]; then
		fail "$_n-current" "$_now refreshes with a current rate: \
`head -n 3 "$2.lines"`"
	else
		# Current rates must parse and stay under twice the limit.
		_bad=`sed -n 's/.* \([0-9.]*[KMGT]B\)\/s now .*/\1/p' \
		    "$2.lines" | while read -r r; do
			b=\`to_bytes "$r"\`
			[ "$b" -le \`expr $LIMIT_BPS \* 2\` ] || echo "$r"
		done`
		if [ -n "$_bad" ]; then
			fail "$_n-current" "implausible current rate $_bad"
		else
			pass "$_n-current"
		fi
	fi
	_rates=`echo "$_last" |
	    sed -n 's/.* \([0-9.]*[KMGT]B\)\/s *\([0-9.]*[KMGT]B\)\/s peak .*/\1 \2/p'`
	if [ -z "$_rates" ]; then
		fail "$_n-peak" "no peak on the final line: '$_last'"
		return
	fi
	set -- $_rates
	_avg=`to_bytes $1`
	_peak=`to_bytes $2`
	# The peak is never below the average, and a transfer limited to
	# LIMIT cannot peak (over at least half a second) at 3 times it.
	if [ "$_avg" -le 0 ] || [ "$_peak" -lt "$_avg" ] ||
	    [ "$_peak" -gt `expr $LIMIT_BPS \* 3` ]; then
		fail "$_n-peak" "avg $1 peak $2 (limit $LIMIT_BPS B/s): '$_last'"
	else
		pass "$_n-peak"
	fi
	echo "# $_n final line: $_last"
}

if ! command -v script >/dev/null 2>&1; then
	skip meter "no script(1) (bsdutils) for a pseudo-terminal"
else
	D=`make_data $MSIZE`
	in_pty "$TESTDIR/pty.scp-up" "$SCP -O -l $LIMIT -S $SSH \
	    -F $SSH_CONFIG $D hpntest:$TESTDIR/m.up"
	check_meter scp-legacy-upload "$TESTDIR/pty.scp-up"
	# The meter is progressmeter.c's, whoever calls it: other releases
	# check it once (six seconds each way).
	if ! default_release_only "scp-download-*, sftp-get-*"; then
		in_pty "$TESTDIR/pty.scp-down" "$SCP -l $LIMIT -S $SSH \
		    -F $SSH_CONFIG hpntest:$D $TESTDIR/m.down"
		check_meter scp-download "$TESTDIR/pty.scp-down"
		in_pty "$TESTDIR/pty.sftp" "echo 'get $D $TESTDIR/m.sftp' | \
		    $SFTP -l $LIMIT -S $SSH -F $SSH_CONFIG hpntest"
		# sftp's prompt echo goes to the terminal too; the meter is
		# the same.
		check_meter sftp-get "$TESTDIR/pty.sftp"
		check meter-data sh -c "cmp '$D' '$TESTDIR/m.up' &&
		    cmp '$D' '$TESTDIR/m.down' && cmp '$D' '$TESTDIR/m.sftp'"
	else
		check meter-data cmp "$D" "$TESTDIR/m.up"
	fi

	# A narrow terminal keeps the stock columns rather than the name.
	COLS=45
	in_pty "$TESTDIR/pty.narrow" "$SCP -O -S $SSH -F $SSH_CONFIG \
	    $D hpntest:$TESTDIR/m.narrow"
	if tr '\r' '\n' <"$TESTDIR/pty.narrow" | grep -q '/s \(now\|peak\)'; then
		fail meter-narrow "rate column on a $COLS-column terminal"
	elif tr '\r' '\n' <"$TESTDIR/pty.narrow" | sed 's/ *$//' |
	    awk -v c=$COLS 'length($0) > c { bad = 1 } END { exit !bad }'; then
		fail meter-narrow "line wider than $COLS"
	elif ! grep -q ' 100% ' "$TESTDIR/pty.narrow"; then
		fail meter-narrow "no meter at all"
	else
		pass meter-narrow
	fi
	COLS=100
fi

# No terminal: the same commands print exactly what stock prints.
D=`make_data 1048576`
printf 'put %s %s\nget %s %s\nls -l %s\n' "$D" "$TESTDIR/nt.sftp" \
    "$D" "$TESTDIR/nt.sftp.down" "$D" >"$TESTDIR/nt.batch"
for flavour in hpn stock; do
	[ $flavour = hpn ] && b="$HPN_BUILD" || b="$STOCK_BUILD"
	o="$TESTDIR/nt.$flavour"
	"$b/scp" -S "$b/ssh" -F "$SSH_CONFIG" "$D" "hpntest:$TESTDIR/nt.scp" \
	    >"$o.scp" 2>&1
	"$b/scp" -O -S "$b/ssh" -F "$SSH_CONFIG" "hpntest:$D" \
	    "$TESTDIR/nt.scp.down" >"$o.scp-legacy" 2>&1
	"$b/sftp" -S "$b/ssh" -F "$SSH_CONFIG" -b "$TESTDIR/nt.batch" \
	    hpntest >"$o.sftp" 2>&1
	"$b/sftp" -S "$b/ssh" -F "$SSH_CONFIG" hpntest <"$TESTDIR/nt.batch" \
	    >"$o.sftp-stdin" 2>&1
	# Under a terminal, but stdout is a pipe: still no meter.
	if command -v script >/dev/null 2>&1; then
		in_pty "$o.scp-pipe" "$b/scp -S $b/ssh -F $SSH_CONFIG \
		    $D hpntest:$TESTDIR/nt.pipe | cat"
	fi
done
for t in scp scp-legacy sftp sftp-stdin scp-pipe; do
	[ -f "$TESTDIR/nt.hpn.$t" ] || continue
	if cmp -s "$TESTDIR/nt.hpn.$t" "$TESTDIR/nt.stock.$t"; then
		pass "notty-$t"
	else
		fail "notty-$t" "output differs from stock: \
`diff "$TESTDIR/nt.stock.$t" "$TESTDIR/nt.hpn.$t" | head -n 3 | tr '\n' ' '`"
	fi
done
# The sftp outputs are not trivially empty: the comparison means something.
check notty-sftp-nonempty grep -q 'sftp> get' "$TESTDIR/nt.hpn.sftp"
stop_sshd
exit 0
