#!/bin/sh
#
# bench.sh: side-by-side throughput tables, stock twin vs patched, in one
# run on one machine with the same build flags.  Not part of make check:
# nothing here passes or fails on speed.
#
#   1. the keystream engine against OpenSSL's serial ciphers, 1/2/4/8
#      workers: AES-CTR with each key size, with AES-NI and with AES-NI
#      masked, and the per-packet ChaCha20 of chacha20-poly1305;
#   2. loopback: ssh 'cat >/dev/null' of BENCH_BYTES (default 2 GiB),
#      build/stock ssh+sshd vs build/hpn ssh+sshd, and more builds in
#      BENCH_OTHERS="LABEL=DIR ..." (ssh, sshd and sshd-session in DIR,
#      e.g. links to HPN-SSH's hpnssh, hpnsshd, hpnsshd-session, and its
#      Makefile), BENCH_RUNS (default 5) alternated runs per cipher
#      (BENCH_CIPHERS; CIPHER/MAC picks the MAC too): median MB/s with
#      its range and the ratio to stock; from the same runs, the CPU
#      seconds per GiB of each side (client: the ssh process; server: the
#      listening sshd's children, sshd-session, sshd-auth and the remote
#      cat), medians with ranges and ratios, and the client's read(2) and
#      write(2) calls per GiB (medians);
#   3. loopback, patched only: the none cipher after authentication
#      (NoneSwitch), with and without the MAC, against patched aes256-ctr
#      (BENCH_SKIP_NONE=1 skips it);
#   4. AES-CTR with threads forced and with AES-NI hidden
#      (BENCH_SKIP_MASKED=1 skips it);
#   5. chacha20-poly1305 with the engine's threads on both sides
#      (AESCTRThreads=BENCH_CHACHA_THREADS, default 2) against the default
#      and stock (BENCH_SKIP_CHACHA=1 skips it).
#
# The CPU figures come from /proc (utime + stime, and cutime + cstime of
# the processes that waited for the others), so they hold on a loaded
# machine far better than the MB/s do.

. "`dirname "$0"`/../regress/lib.sh"

BYTES=${BENCH_BYTES:-2147483648}
RUNS=${BENCH_RUNS:-5}
MASK="~0x200000200000000"

machine() {
	echo "machine: `sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo |
	    head -n1`"
	echo "cores:   `getconf _NPROCESSORS_ONLN` online"
	if grep -qw aes /proc/cpuinfo; then
		echo "AES-NI:  yes"
	else
		echo "AES-NI:  no"
	fi
	echo "OpenSSH: stock `"$STOCK_BUILD/ssh" -V 2>&1`"
	echo "         patched `"$HPN_BUILD/ssh" -V 2>&1`"
}

echo "== hpn-patches benchmark, `date -u '+%Y-%m-%d %H:%M UTC'`"
machine
echo

# 1. The engine alone.
if [ -z "${BENCH_SKIP_ENGINE:-}" ]; then
	b="$TESTDIR/bench_ctr_mt"
	if unit_build "$b" >"$TESTDIR/cc.err" 2>&1; then
		# 9 rounds: the ratio is the median of 9 same-round ratios.
		echo "== engine: threads vs OpenSSL serial AES-CTR (AES-NI on) and ChaCha20"
		"$b" ${BENCH_ENGINE_MIB:-512} 32 9
		echo
		echo "== engine: AES-NI masked (OPENSSL_ia32cap=$MASK)"
		OPENSSL_ia32cap="$MASK" "$b" ${BENCH_ENGINE_MIB:-128} 32 9
		echo
	else
		echo "engine benchmark did not build: `head -n1 "$TESTDIR/cc.err"`"
	fi
fi

# 2. Loopback: stock twin against patched, per cipher.
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# spread: "median min max" of the numbers on stdin.
spread() {
	sort -n | awk '{ v[NR] = $1 }
	    END { print v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# The input: BYTES of zeros through a FIFO, from a head(1) that is not
# our child, so that its CPU does not count as the client's.  (A sparse
# file would make ssh's own reads pay for zeroing the page cache.)
ZEROS="$TESTDIR/zeros"
mkfifo "$ZEROS" || die "cannot make $ZEROS"
TCK=`getconf CLK_TCK`

# cputicks PID: the clock ticks PID has used, with those of the children
# it has waited for (utime stime cutime cstime of /proc/PID/stat).
cputicks() {
	sed 's/^.*) //' /proc/$1/stat | awk '{ print $12 + $13 + $14 + $15 }'
}

# syscalls PID: the read(2) and write(2) calls PID has made, with those of
# the children it has waited for (syscr and syscw of /proc/PID/io).
syscalls() {
	awk '$1 == "syscr:" { r = $2 } $1 == "syscw:" { w = $2 }
	    END { print r + 0, w + 0 }' /proc/$1/io
}

# one_run BUILD CIPHER[/MAC] SSHD-PID [SSH-ARGS]: "seconds client-CPU
# server-CPU client-reads client-writes" for BYTES through ssh into 'cat
# >/dev/null' on the sshd SSHD-PID.  The client's CPU and calls are what
# this shell gained from waiting for ssh; the server's CPU what the sshd
# gained from waiting for the session.
one_run() {
	_b="$1"
	_c="${2%%/*}"
	_m=
	[ "$_c" = "$2" ] || _m="-m ${2#*/}"
	_d="$3"
	shift 3
	_s0=`cputicks $_d`
	_s=`date +%s.%N`
	(head -c $BYTES /dev/zero >"$ZEROS" &)
	_c0=`cputicks $$`
	_io0=`syscalls $$`
	# shellcheck disable=SC2086
	"$_b/ssh" -F "$SSH_CONFIG" -c "$_c" $_m "$@" hpntest 'cat >/dev/null' \
	    <"$ZEROS" || { echo "ssh failed" >&2; echo "0 0 0 0 0"; return; }
	_io1=`syscalls $$`
	_c1=`cputicks $$`
	_e=`date +%s.%N`
	# The session ends just after the client: wait until sshd reaped it.
	_i=0
	while [ -n "`descendants $_d`" ] && [ $_i -lt 100 ]; do
		sleep 0.05
		_i=`expr $_i + 1`
	done
	_s1=`cputicks $_d`
	echo "$_s $_e $_c0 $_c1 $_s0 $_s1 $_io0 $_io1" | awk -v t=$TCK '{
		printf "%.3f %.2f %.2f %d %d\n", $2 - $1, ($4 - $3) / t,
		    ($6 - $5) / t, $9 - $7, $10 - $8
	}'
}

CIPHERS_BENCH=${BENCH_CIPHERS:-"aes128-ctr aes192-ctr aes256-ctr \
aes128-gcm@openssh.com aes256-gcm@openssh.com chacha20-poly1305@openssh.com \
aes128-ctr/hmac-sha2-256-etm@openssh.com"}

start_sshd bench-stock stock "LogLevel INFO"
STOCK_CFG="$SSH_CONFIG"
STOCK_SSHD=$SSHD_PID
if [ -z "${BENCH_SKIP_NONE:-}" ]; then
	start_sshd bench-hpn hpn "LogLevel INFO" "NoneEnabled yes" \
	    "NoneMacEnabled yes"
else
	# Any patched build, even one without the None switch.
	start_sshd bench-hpn hpn "LogLevel INFO"
fi
HPN_CFG="$SSH_CONFIG"
HPN_SSHD=$SSHD_PID
# BENCH_OTHERS: one sshd each; their specs for cmp_table in $TESTDIR/others.
: >"$TESTDIR/others"
for o in ${BENCH_OTHERS:-}; do
	HPN_PEER_BUILD="${o#*=}"
	start_sshd "bench-${o%%=*}" peer "LogLevel INFO"
	echo "${o%%=*} $HPN_PEER_BUILD $SSH_CONFIG $SSHD_PID" >>"$TESTDIR/others"
	echo "${o%%=*}: $HPN_PEER_BUILD: `"$HPN_PEER_BUILD/ssh" -V 2>&1`"
done

# col FILE N: column N of FILE.
col() {
	awk -v n=$2 '{ print $n }' "$1"
}

# header AWK-PROGRAM: a table's header: "cipher", then what AWK-PROGRAM
# prints for each column's label (cmp_table's $TESTDIR/labels).
header() {
	printf '%-32s' cipher
	awk "$1" "$TESTDIR/labels"
	echo
}

# cmp_table TITLE CIPHERS SPEC...: each SPEC "LABEL BUILD CFG SSHD-PID
# [SSH-ARGS...]" (one word each, the args last) is a column; runs
# alternate between the columns so drift hits all alike.  Prints the
# MB/s (median and range) and each column's ratio to the first, then
# the CPU seconds per GiB of each side from the same runs, then the
# client's read(2) and write(2) calls per GiB.
cmp_table() {
	_title="$1"
	_ciphers="$2"
	shift 2
	_ncol=$#
	_k=0
	: >"$TESTDIR/labels"
	for _spec in "$@"; do
		_k=`expr $_k + 1`
		echo "$_spec" >"$TESTDIR/spec.$_k"
		echo "${_spec%% *}" >>"$TESTDIR/labels"
	done
	echo
	echo "== $_title"
	header '{ printf " %22s", $1 " MB/s"; if (NR > 1) printf " %6s", "ratio" }'
	: >"$TESTDIR/cpu.rows"
	: >"$TESTDIR/calls.rows"
	for c in $_ciphers; do
		_k=0
		while [ $_k -lt $_ncol ]; do
			_k=`expr $_k + 1`
			: >"$TESTDIR/t.$_k"
		done
		r=0
		while [ $r -lt $RUNS ]; do
			_k=0
			while [ $_k -lt $_ncol ]; do
				_k=`expr $_k + 1`
				# shellcheck disable=SC2046
				set -- `cat "$TESTDIR/spec.$_k"`
				SSH_CONFIG="$3"
				_b="$2"
				_p=$4
				shift 4
				one_run "$_b" "$c" $_p "$@" >>"$TESTDIR/t.$_k"
			done
			r=`expr $r + 1`
		done
		_row="$c"
		_cpu="$c"
		_calls="$c"
		_k=0
		while [ $_k -lt $_ncol ]; do
			_k=`expr $_k + 1`
			_row="$_row `col "$TESTDIR/t.$_k" 1 | spread`"
			_cpu="$_cpu `col "$TESTDIR/t.$_k" 2 | spread` \
`col "$TESTDIR/t.$_k" 3 | spread`"
			_calls="$_calls `col "$TESTDIR/t.$_k" 4 | median` \
`col "$TESTDIR/t.$_k" 5 | median`"
		done
		# Seconds to MB/s: the shortest time is the highest rate.
		echo "$_row" | awk -v b=$BYTES '
		function mbs(t) { return (t > 0) ? b / t / 1e6 : 0 }
		{
			printf "%-32s", $1
			for (i = 2; i <= NF; i += 3) {
				m = mbs($i)
				lo = mbs($(i + 2))
				hi = mbs($(i + 1))
				printf " %22s", sprintf("%.0f (%.0f-%.0f)", m,
				    lo, hi)
				if (i == 2)
					first = m
				else
					printf " %6.2f", (first > 0) ? m / first : 0
			}
			printf "\n"
		}'
		echo "$_cpu" >>"$TESTDIR/cpu.rows"
		echo "$_calls" >>"$TESTDIR/calls.rows"
	done
	echo
	echo "== CPU seconds per GiB, same runs: median (min-max); ratio to the first column"
	echo "   (client: the ssh process; server: sshd's children)"
	header '{ printf " %18s %18s", "ssh " $1, "sshd " $1
	    if (NR > 1) printf " %11s", "ratios" }'
	awk -v b=$BYTES '
	function cell(m, lo, hi) {
		return sprintf("%.2f (%.2f-%.2f)", m / g, lo / g, hi / g)
	}
	{
		g = b / 1073741824
		printf "%-32s", $1
		for (i = 2; i <= NF; i += 6) {
			printf " %18s %18s", cell($i, $(i + 1), $(i + 2)),
			    cell($(i + 3), $(i + 4), $(i + 5))
			if (i > 2) {
				rc = ($2 > 0) ? $i / $2 : 0
				rs = ($5 > 0) ? $(i + 3) / $5 : 0
				printf " %5.2f/%5.2f", rc, rs
			}
		}
		printf "\n"
	}' "$TESTDIR/cpu.rows"
	echo
	echo "== the client's read(2) and write(2) calls per GiB, same runs: medians"
	echo "   (stdin and the socket together: fewer calls, larger packets)"
	header '{ printf " %14s %14s", $1 " reads", $1 " writes" }'
	awk -v b=$BYTES '{
		g = b / 1073741824
		printf "%-32s", $1
		for (i = 2; i <= NF; i++)
			printf " %14d", $i / g
		printf "\n"
	}' "$TESTDIR/calls.rows"
}

mib=`expr $BYTES / 1048576`
# The other builds' specs, one argument each.
set --
while read -r o; do
	set -- "$@" "$o"
done <"$TESTDIR/others"
cmp_table "loopback: ssh 'cat >/dev/null' of $mib MiB, $RUNS runs" \
    "$CIPHERS_BENCH" "stock $STOCK_BUILD $STOCK_CFG $STOCK_SSHD" \
    "patched $HPN_BUILD $HPN_CFG $HPN_SSHD" "$@"

# 3. The none cipher: patched only, stock cannot switch.
SSH_CONFIG="$HPN_CFG"
# median_run FILE SSH-ARGS...: the median of RUNS patched runs.
median_run() {
	_f="$1"
	shift
	: >"$_f"
	_r=0
	while [ $_r -lt $RUNS ]; do
		one_run "$HPN_BUILD" aes256-ctr $HPN_SSHD -q "$@" >>"$_f"
		_r=`expr $_r + 1`
	done
	col "$_f" 1 | median
}
if [ -z "${BENCH_SKIP_NONE:-}" ]; then
	[ -n "${T_AES256:-}" ] || T_AES256=`median_run "$TESTDIR/t.aes256"`
	NONE="-o NoneEnabled=yes -o NoneSwitch=yes"
	T_NONE=`median_run "$TESTDIR/t.none" $NONE`
	T_NONEMAC=`median_run "$TESTDIR/t.nonemac" $NONE -o NoneMacEnabled=yes`
	echo
	echo "== loopback, patched only: none cipher after authentication, $mib MiB"
	printf "%-32s %12s %12s %8s\n" mode "" "patched MB/s" "/aes256"
	for row in "aes256-ctr $T_AES256" "none $T_NONE" "none+none-MAC $T_NONEMAC"; do
		echo "$row $T_AES256" | awk -v b=$BYTES '{
			h = ($2 > 0) ? b / $2 / 1e6 : 0
			a = ($3 > 0) ? b / $3 / 1e6 : 0
			printf "%-32s %12s %12.1f %8.2f\n", $1, "-", h,
			    (a > 0) ? h / a : 0
		}'
	done
fi

# 4. Where MT-AES-CTR matters: serial AES-CTR slow, here by hiding AES-NI
# from OpenSSL in every process (ssh and both sshds), and the default
# thread choice against forced threads with AES-NI visible.
if grep -qw aes /proc/cpuinfo && [ -z "${BENCH_SKIP_MASKED:-}" ]; then
	# The count AESCTRThreads 0 picks where AES-CTR is slow.
	nt=`nproc`
	nt=`expr $nt - 1`
	[ "$nt" -ge 1 ] || nt=1
	[ "$nt" -le 4 ] || nt=4
	cmp_table "loopback, AES-NI on, patched with AESCTRThreads=$nt forced on the client, $mib MiB" \
	    "aes128-ctr aes256-ctr" "stock $STOCK_BUILD $STOCK_CFG $STOCK_SSHD" \
	    "patched $HPN_BUILD $HPN_CFG $HPN_SSHD -o AESCTRThreads=$nt"
	export OPENSSL_ia32cap="$MASK"
	start_sshd bench-stock-masked stock "LogLevel INFO"
	M_STOCK="$SSH_CONFIG"
	M_STOCK_SSHD=$SSHD_PID
	start_sshd bench-hpn-masked hpn "LogLevel INFO"
	M_HPN="$SSH_CONFIG"
	cmp_table "loopback, AES-NI hidden in ssh and sshd (OPENSSL_ia32cap=$MASK), default AESCTRThreads, $mib MiB" \
	    "aes128-ctr aes256-ctr" "stock $STOCK_BUILD $M_STOCK $M_STOCK_SSHD" \
	    "patched $HPN_BUILD $M_HPN $SSHD_PID"
	unset OPENSSL_ia32cap
fi

# 5. chacha20-poly1305 (the default cipher) with the engine's threads on
# both sides, against the patched default (no threads below 4 CPUs) and
# stock.
if [ -z "${BENCH_SKIP_CHACHA:-}" ]; then
	nt=${BENCH_CHACHA_THREADS:-2}
	start_sshd bench-hpn-chacha hpn "LogLevel INFO" "AESCTRThreads $nt"
	cmp_table "loopback, chacha20-poly1305, patched with AESCTRThreads=$nt on both sides, $mib MiB" \
	    chacha20-poly1305@openssh.com \
	    "stock $STOCK_BUILD $STOCK_CFG $STOCK_SSHD" \
	    "patched $HPN_BUILD $HPN_CFG $HPN_SSHD" \
	    "threads=$nt $HPN_BUILD $SSH_CONFIG $SSHD_PID -o AESCTRThreads=$nt"
fi
exit 0
