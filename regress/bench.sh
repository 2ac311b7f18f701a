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
#      (default 3) per cipher, and the ratio;
#   3. loopback, patched only: the none cipher after authentication
#      (NoneSwitch), with and without the MAC, against patched aes256-ctr.

. "`dirname "$0"`/lib.sh"

BYTES=${BENCH_BYTES:-2147483648}
RUNS=${BENCH_RUNS:-3}
CC="${CC:-cc}"
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
	if $CC -O2 -g -I"$HPN_BUILD" -I"$HPN_BUILD/openbsd-compat" \
	    -I"$HPN_TOP" -o "$b" "$HPN_TOP/regress/unit/bench_ctr_mt.c" \
	    "$HPN_TOP/cipher-ctr-mt.c" -L"$HPN_BUILD/openbsd-compat" \
	    -lopenbsd-compat -lcrypto -lpthread 2>"$TESTDIR/cc.err"; then
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

# one_run BUILD CIPHER [SSH-ARGS]: seconds for BYTES through ssh.
one_run() {
	_b="$1"
	_c="$2"
	shift 2
	_s=`date +%s.%N`
	head -c $BYTES /dev/zero |
	    "$_b/ssh" -F "$SSH_CONFIG" -c "$_c" "$@" hpntest 'cat >/dev/null' ||
	    { echo "ssh failed" >&2; echo 0; return; }
	_e=`date +%s.%N`
	echo "$_s $_e" | awk '{ printf "%.3f\n", $2 - $1 }'
}

CIPHERS_BENCH=${BENCH_CIPHERS:-"aes128-ctr aes192-ctr aes256-ctr \
aes128-gcm@openssh.com aes256-gcm@openssh.com chacha20-poly1305@openssh.com"}

start_sshd bench-stock stock
STOCK_CFG="$SSH_CONFIG"
STOCK_SSHD=$SSHD_PID
start_sshd bench-hpn hpn "LogLevel INFO" "NoneEnabled yes" "NoneMacEnabled yes"
HPN_CFG="$SSH_CONFIG"

# cmp_table TITLE CIPHERS STOCK-CFG HPN-CFG [HPN-SSH-ARGS]: stock against
# patched, alternating runs so drift hits both alike; medians and ratio.
cmp_table() {
	echo
	echo "== $1"
	printf "%-32s %12s %12s %8s\n" cipher "stock MB/s" "patched MB/s" ratio
	for c in $2; do
		: >"$TESTDIR/t.stock"
		: >"$TESTDIR/t.hpn"
		r=0
		while [ $r -lt $RUNS ]; do
			SSH_CONFIG="$3"
			one_run "$STOCK_BUILD" "$c" >>"$TESTDIR/t.stock"
			SSH_CONFIG="$4"
			one_run "$HPN_BUILD" "$c" ${5:-} >>"$TESTDIR/t.hpn"
			r=`expr $r + 1`
		done
		ts=`median <"$TESTDIR/t.stock"`
		th=`median <"$TESTDIR/t.hpn"`
		echo "$c $ts $th" | awk -v b=$BYTES '{
			s = ($2 > 0) ? b / $2 / 1e6 : 0
			h = ($3 > 0) ? b / $3 / 1e6 : 0
			printf "%-32s %12.1f %12.1f %8.2f\n", $1, s, h,
			    (s > 0) ? h / s : 0
		}'
	done
}

mib=`expr $BYTES / 1048576`
cmp_table "loopback: ssh 'cat >/dev/null' of $mib MiB, median of $RUNS runs" \
    "$CIPHERS_BENCH" "$STOCK_CFG" "$HPN_CFG"

# 3. The none cipher: patched only, stock cannot switch.
SSH_CONFIG="$HPN_CFG"
# median_run FILE SSH-ARGS...: the median of RUNS patched runs.
median_run() {
	_f="$1"
	shift
	: >"$_f"
	_r=0
	while [ $_r -lt $RUNS ]; do
		one_run "$HPN_BUILD" aes256-ctr -q "$@" >>"$_f"
		_r=`expr $_r + 1`
	done
	median <"$_f"
}
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
	    "aes128-ctr aes256-ctr" "$STOCK_CFG" "$HPN_CFG" "-o AESCTRThreads=$nt"
	export OPENSSL_ia32cap="$MASK"
	start_sshd bench-stock-masked stock
	M_STOCK="$SSH_CONFIG"
	start_sshd bench-hpn-masked hpn "LogLevel INFO"
	M_HPN="$SSH_CONFIG"
	cmp_table "loopback, AES-NI hidden in ssh and sshd (OPENSSL_ia32cap=$MASK), default AESCTRThreads, $mib MiB" \
	    "aes128-ctr aes256-ctr" "$M_STOCK" "$M_HPN"
	unset OPENSSL_ia32cap
fi
exit 0
