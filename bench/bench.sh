#!/bin/sh
#
# bench.sh: side-by-side throughput tables, stock twin vs patched, in one
# run on one machine with the same build flags.  Not part of make check:
# nothing here passes or fails on speed.
#
#   1. the MT-AES-CTR engine against OpenSSL's serial AES-CTR, 1/2/4
#      workers, each key size, with AES-NI and with AES-NI masked;
#   2. loopback: ssh 'cat >/dev/null' of BENCH_BYTES (default 2 GiB),
#      build/stock ssh+sshd vs build/hpn ssh+sshd, median of BENCH_RUNS
#      (default 5) alternated runs per cipher (BENCH_CIPHERS; CIPHER/MAC
#      picks the MAC too), and the ratio; from the same runs, the CPU
#      seconds per GiB of each side (client: the ssh process; server: the
#      listening sshd's children, sshd-session, sshd-auth and the remote
#      cat), medians and ratios, and the client's read(2) and write(2)
#      calls per GiB (medians);
#   3. loopback, patched only: the none cipher after authentication
#      (NoneSwitch), with and without the MAC, against patched aes256-ctr
#      (BENCH_SKIP_NONE=1 skips it).
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
		echo "== engine: MT-AES-CTR vs OpenSSL serial AES-CTR (AES-NI on)"
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

# col FILE N: column N of FILE.
col() {
	awk -v n=$2 '{ print $n }' "$1"
}

# cmp_table TITLE CIPHERS STOCK-CFG STOCK-SSHD HPN-CFG HPN-SSHD
# [HPN-SSH-ARGS]: stock against patched, alternating runs so drift hits
# both alike; medians and ratio of the throughput, then of the CPU
# seconds per GiB of each side, from the same runs.
cmp_table() {
	echo
	echo "== $1"
	printf "%-40s %12s %12s %8s\n" cipher "stock MB/s" "patched MB/s" ratio
	: >"$TESTDIR/cpu.rows"
	: >"$TESTDIR/calls.rows"
	for c in $2; do
		: >"$TESTDIR/t.stock"
		: >"$TESTDIR/t.hpn"
		r=0
		while [ $r -lt $RUNS ]; do
			SSH_CONFIG="$3"
			one_run "$STOCK_BUILD" "$c" $4 >>"$TESTDIR/t.stock"
			SSH_CONFIG="$5"
			one_run "$HPN_BUILD" "$c" $6 ${7:-} >>"$TESTDIR/t.hpn"
			r=`expr $r + 1`
		done
		ts=`col "$TESTDIR/t.stock" 1 | median`
		th=`col "$TESTDIR/t.hpn" 1 | median`
		echo "$c $ts $th" | awk -v b=$BYTES '{
			s = ($2 > 0) ? b / $2 / 1e6 : 0
			h = ($3 > 0) ? b / $3 / 1e6 : 0
			printf "%-40s %12.1f %12.1f %8.2f\n", $1, s, h,
			    (s > 0) ? h / s : 0
		}'
		echo "$c `col "$TESTDIR/t.stock" 2 | spread` \
		    `col "$TESTDIR/t.hpn" 2 | spread` \
		    `col "$TESTDIR/t.stock" 3 | spread` \
		    `col "$TESTDIR/t.hpn" 3 | spread`" >>"$TESTDIR/cpu.rows"
		echo "$c `col "$TESTDIR/t.stock" 4 | median` \
		    `col "$TESTDIR/t.stock" 5 | median` \
		    `col "$TESTDIR/t.hpn" 4 | median` \
		    `col "$TESTDIR/t.hpn" 5 | median`" >>"$TESTDIR/calls.rows"
	done
	echo
	echo "== CPU seconds per GiB, same runs: median (min-max) of each side"
	echo "   (client: the ssh process; server: sshd's children), patched/stock"
	printf "%-40s %16s %16s %5s   %16s %16s %5s\n" cipher "ssh stock" \
	    "ssh patched" ratio "sshd stock" "sshd patched" ratio
	awk -v b=$BYTES '
	function cell(m, lo, hi) {
		return sprintf("%.2f (%.2f-%.2f)", m / g, lo / g, hi / g)
	}
	{
		g = b / 1073741824
		printf "%-40s %16s %16s %5.2f   %16s %16s %5.2f\n", $1,
		    cell($2, $3, $4), cell($5, $6, $7), ($2 > 0) ? $5 / $2 : 0,
		    cell($8, $9, $10), cell($11, $12, $13),
		    ($8 > 0) ? $11 / $8 : 0
	}' "$TESTDIR/cpu.rows"
	echo
	echo "== the client's read(2) and write(2) calls per GiB, same runs: medians"
	echo "   (stdin and the socket together: fewer calls, larger packets)"
	printf "%-40s %13s %13s %14s %14s\n" cipher "stock reads" \
	    "stock writes" "patched reads" "patched writes"
	awk -v b=$BYTES '{
		g = b / 1073741824
		printf "%-40s %13d %13d %14d %14d\n", $1, $2 / g, $3 / g,
		    $4 / g, $5 / g
	}' "$TESTDIR/calls.rows"
}

mib=`expr $BYTES / 1048576`
cmp_table "loopback: ssh 'cat >/dev/null' of $mib MiB, median of $RUNS runs" \
    "$CIPHERS_BENCH" "$STOCK_CFG" $STOCK_SSHD "$HPN_CFG" $HPN_SSHD

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
	    "aes128-ctr aes256-ctr" "$STOCK_CFG" $STOCK_SSHD "$HPN_CFG" \
	    $HPN_SSHD "-o AESCTRThreads=$nt"
	export OPENSSL_ia32cap="$MASK"
	start_sshd bench-stock-masked stock "LogLevel INFO"
	M_STOCK="$SSH_CONFIG"
	M_STOCK_SSHD=$SSHD_PID
	start_sshd bench-hpn-masked hpn "LogLevel INFO"
	M_HPN="$SSH_CONFIG"
	cmp_table "loopback, AES-NI hidden in ssh and sshd (OPENSSL_ia32cap=$MASK), default AESCTRThreads, $mib MiB" \
	    "aes128-ctr aes256-ctr" "$M_STOCK" $M_STOCK_SSHD "$M_HPN" $SSHD_PID
	unset OPENSSL_ia32cap
fi
exit 0
