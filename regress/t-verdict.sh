#!/bin/sh
#
# t-verdict.sh: what limited a transfer (patch 0011): ssh -v and sshd
# each say it in one "Transfer verdict:" line when the connection ends.
# The options Metrics, MetricsInterval and MetricsPath in ssh -G, bad
# values refused with their line, an unwritable MetricsPath refused
# before any data moves.  Then each cause, made on purpose, and the
# verdict of the side that can see it (copies byte for byte throughout):
#
#   network             a 40 Mbit/s link (bench/lfn.sh): the sender says
#                       network, up (ssh) and down (sshd), with our sshd
#                       and with the stock twin's; the receiver, sender
#   tcp-receive-window  tcp_rmem's maximum at 64 KiB in the receiver's
#                       namespace on a 400 Mbit/s link: the sender says
#                       tcp-receive-window, and so does the receiver
#   channel-window /    a consumer that reads 2 MB/s: the sender says
#   drain               channel-window, the receiver drain
#   feeder              a program that writes 2 MB/s into ssh: ssh says
#                       feeder, sshd sender
#   send-buffer         tcp_wmem's maximum at 64 KiB in the sender's
#                       namespace: ssh says send-buffer
#   cpu                 ssh -C on random data over loopback: ssh says
#                       cpu; pinned beside a busy loop on its CPU it
#                       still says cpu, with the wait (taskset); on the
#                       default release only (they hog the CPUs)
#
# Plus the raw series: Metrics with MetricsInterval 1 writes a header and
# a line a second.  The link needs root; without it only the option and
# cpu checks run.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

SSH="$HPN_BUILD/ssh"
hpn_keys

# --- The options.
"$SSH" -G -F /dev/null host.example >"$TESTDIR/G.default" 2>&1
check_has metrics-default-no "$TESTDIR/G.default" "^metrics no$"
check_has interval-default "$TESTDIR/G.default" "^metricsinterval 5$"
check_has path-default "$TESTDIR/G.default" \
    "^metricspath ssh-metrics.tsv$"
"$SSH" -G -F /dev/null -o Metrics=yes -o MetricsInterval=1m \
    -o MetricsPath=/tmp/m.tsv host.example >"$TESTDIR/G.set" 2>&1
check_has metrics-yes "$TESTDIR/G.set" "^metrics yes$"
check_has interval-1m "$TESTDIR/G.set" "^metricsinterval 60$"
check_has path-set "$TESTDIR/G.set" "^metricspath /tmp/m.tsv$"
n=0
for bad in "Metrics maybe" "MetricsInterval 0" "MetricsInterval soon" \
    "MetricsInterval" "MetricsPath"; do
	n=`expr $n + 1`
	printf 'Host *\n\t%s\n' "$bad" >"$TESTDIR/ssh_config.bad$n"
	check_rejected bad-$n 2 "'$bad' accepted" \
	    "$SSH" -G -F "$TESTDIR/ssh_config.bad$n" host.example
done

# verdict_of FILE: the cause in the last "Transfer verdict:" line of FILE.
verdict_of() {
	sed -n 's/.*Transfer verdict: \([a-z-]*\):.*/\1/p' "$1" | tail -n 1
}

# check_verdict NAME FILE CAUSE: FILE's verdict is CAUSE.
check_verdict() {
	_v=`verdict_of "$2"`
	if [ "x$_v" = "x$3" ]; then
		pass "$1"
	else
		fail "$1" "verdict '${_v:-none}', want $3: `grep 'Transfer verdict' "$2" | tail -n 1`"
	fi
	grep 'Transfer verdict' "$2" | tail -n 1 | sed "s/^/# $1: /"
}

# sshd_verdict MARK FILE: waits (10 s) for sshd's verdict after MARK and
# puts it in FILE.
sshd_verdict() {
	wait_until 10 log_has $1 "Transfer verdict"
	log_since $1 | grep 'Transfer verdict' >"$2"
}

# judged NAME STATUS WANT GOT SSH-CAUSE [SSHD-CAUSE]: a copy into GOT by
# ssh (its stderr in $TESTDIR/NAME.err) that exited with STATUS: GOT has
# WANT's bytes (NAME-bytes), ssh's verdict is SSH-CAUSE (NAME-ssh) and
# the verdict sshd logged after the mark FROM is SSHD-CAUSE (NAME-sshd).
judged() {
	if [ "$2" -ne 0 ]; then
		fail "$1" "ssh failed: `tail -n 1 "$TESTDIR/$1.err"`"
	else
		check_same "$1-bytes" "$3" "$4"
		check_verdict "$1-ssh" "$TESTDIR/$1.err" "$5"
		if [ -n "${6:-}" ]; then
			sshd_verdict $FROM "$TESTDIR/$1.sshd"
			check_verdict "$1-sshd" "$TESTDIR/$1.sshd" "$6"
		fi
	fi
	rm -f "$4"
}

# up NAME SSH-CAUSE [SSHD-CAUSE] [SSH-ARG...]: ssh -v uploads $DATA
# (from namespace A where there is one) into sshd's `cat`; judged.
up() {
	_n=$1
	_c=$2
	_sc=$3
	shift 3
	FROM=`log_mark`
	${LFN_A:+lfn_a} "$SSH" -F "$SSH_CONFIG" -v "$@" hpntest \
	    "cat > $TESTDIR/$_n.up" <"$DATA" 2>"$TESTDIR/$_n.err"
	judged $_n $? "$DATA" "$TESTDIR/$_n.up" $_c $_sc
}

# --- cpu: over loopback, ssh -C compresses random data, a core's work.
# Pinned to one CPU beside a busy loop there: half the CPU, half waiting.
# Both hog the CPUs: other releases' suites run at once (check-releases),
# and would starve each other's timing checks (t-rekey's).
DATA=`make_data 33554432`
start_sshd verdict hpn "LogLevel INFO"
if ! default_release_only "cpu-*, starved-*"; then
	up cpu cpu sender -C -o Ciphers=aes128-gcm@openssh.com
	if command -v taskset >/dev/null 2>&1 &&
	    taskset -c 0 true 2>/dev/null; then
		taskset -c 0 sh -c 'while :; do :; done' &
		BUSY=$!
		hpn_track_pid $BUSY
		taskset -c 0 "$SSH" -F "$SSH_CONFIG" -v -C \
		    -o Ciphers=aes128-gcm@openssh.com hpntest \
		    "cat > $TESTDIR/starved.up" <"$DATA" \
		    2>"$TESTDIR/starved.err"
		judged starved $? "$DATA" "$TESTDIR/starved.up" cpu
		check_has starved-wait "$TESTDIR/starved.err" \
		    "cpu wait [1-9][0-9]*%"
		kill $BUSY
		wait $BUSY 2>/dev/null
		hpn_untrack_pid $BUSY
	else
		skip starved "no taskset(1)"
	fi
fi

# An unwritable MetricsPath ends ssh before any data moves.
if "$SSH" -F "$SSH_CONFIG" -o Metrics=yes \
    -o MetricsPath=$TESTDIR/no/such/dir/m.tsv hpntest true \
    >"$TESTDIR/mpath.out" 2>&1; then
	fail metrics-unwritable "ssh went on without its metrics file"
else
	check_has metrics-unwritable "$TESTDIR/mpath.out" \
	    "Cannot open metrics file"
fi
stop_sshd

if ! why=`lfn_usable`; then
	skip link "$why"
	exit 0
fi

# --- network: a slow link, both ways, our sshd and then stock's.
lfn_up 40 40
DATA=`make_data 16777216`
lfn_start_sshd verdict-lfn hpn "LogLevel INFO"
up network-up network sender -o Metrics=yes -o MetricsInterval=1 \
    -o MetricsPath="$TESTDIR/metrics.tsv"

# The series: two header lines, then one line a second (the copy takes
# more than 3 s at 40 Mbit/s), each with all columns, the bytes sent
# never falling and the last line counting the whole copy.
if awk -F'\t' -v want=`wc -c <"$DATA"` '
    NR == 1 { if ($0 !~ /^# ssh transfer metrics, every 1 s/) bad = "header " $0; next }
    NR == 2 { cols = NF; if ($3 != "sent") bad = "columns " $0; next }
    { n++; if (NF != cols) bad = "line " NR " has " NF " columns"
      if ($3 < last) bad = "sent fell at line " NR; last = $3 }
    END { if (bad == "" && n < 4) bad = n " lines"
	if (bad == "" && last < want) bad = "last line sent " last
	if (bad != "") { print bad; exit 1 } }' "$TESTDIR/metrics.tsv" \
    >"$TESTDIR/metrics.why"; then
	pass metrics-series
else
	fail metrics-series "`cat "$TESTDIR/metrics.why"`"
fi

FROM=`log_mark`
lfn_a "$SSH" -F "$SSH_CONFIG" -v hpntest "cat $DATA" \
    >"$TESTDIR/network-down.got" 2>"$TESTDIR/network-down.err"
judged network-down $? "$DATA" "$TESTDIR/network-down.got" sender network
stop_sshd

# Against the stock twin: the sending side's judgement needs nothing of
# the peer.
lfn_start_sshd verdict-stock stock "LogLevel INFO"
up network-stock network ""
stop_sshd
lfn_down

# --- A small TCP receive buffer at the receiver (sshd, in B).
lfn_up 400 40
lfn_start_sshd verdict-rmem hpn "LogLevel INFO"
lfn_b sysctl -q -w net.ipv4.tcp_rmem="4096 65536 65536" ||
    die "cannot set tcp_rmem in $LFN_B"
up rmem tcp-receive-window tcp-receive-window
_lfn_tune "$LFN_B"

# --- A consumer that takes 2 MB/s: 8 MiB in about 4 s.
head -c 8388608 "$DATA" >"$TESTDIR/data.8m"
FROM=`log_mark`
lfn_a "$SSH" -F "$SSH_CONFIG" -v hpntest "python3 -c 'import sys, time
o = open(\"$TESTDIR/drain.up\", \"wb\")
while True:
    b = sys.stdin.buffer.read(131072)
    if not b: break
    o.write(b); time.sleep(0.0625)'" <"$TESTDIR/data.8m" \
    2>"$TESTDIR/drain.err"
judged drain $? "$TESTDIR/data.8m" "$TESTDIR/drain.up" channel-window drain

# --- A program that feeds ssh 2 MB/s.
FROM=`log_mark`
python3 -c 'import sys, time
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 131072):
    sys.stdout.buffer.write(d[i:i + 131072]); sys.stdout.flush()
    time.sleep(0.0625)' "$TESTDIR/data.8m" |
    lfn_a "$SSH" -F "$SSH_CONFIG" -v hpntest "cat > $TESTDIR/feeder.up" \
    2>"$TESTDIR/feeder.err"
judged feeder $? "$TESTDIR/data.8m" "$TESTDIR/feeder.up" feeder sender

# --- A small TCP send buffer at the sender (ssh, in A).
lfn_a sysctl -q -w net.ipv4.tcp_wmem="4096 16384 65536" ||
    die "cannot set tcp_wmem in $LFN_A"
up wmem send-buffer ""
_lfn_tune "$LFN_A"
stop_sshd
