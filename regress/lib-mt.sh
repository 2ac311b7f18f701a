#!/bin/sh
#
# lib-mt.sh: what the MT engine's suites share (t-mtaes.sh, t-mtlife.sh,
# t-mtpeer.sh, t-mtchacha.sh), sourced after lib.sh.  A host with one
# CPU skips the suite here: the engine stays serial there by design.
#
#   our_client_threads   our ssh (only) uses NT threads with SSH_CONFIG
#   mt_active            both directions of a log's connection started it
#   stream_up/down       random bytes one way, SHA-256 checked at both ends
#   big_packets          packets over 35,000 bytes through a ControlMaster


BIG=${HPN_MT_BYTES:-268435456}		# per CTR key size
MID=${HPN_XFER_BYTES:-$XFER}
REKEY=${HPN_MT_REKEY_BYTES:-134217728}	# at RekeyLimit 1M
# On other releases the engine (our own file) needs neither as much data nor a
# hundred rekeys: the hooks run with each key size, and on every rekey.
if other_release; then
	BIG=${HPN_MT_BYTES:-67108864}
	REKEY=${HPN_MT_REKEY_BYTES:-16777216}
fi
SSH="$HPN_BUILD/ssh"
CTR="aes128-ctr aes192-ctr aes256-ctr"
NCPU=`getconf _NPROCESSORS_ONLN 2>/dev/null || nproc`

if [ "$NCPU" -lt 2 ]; then
	skip all "one CPU online: MT-AES-CTR uses the serial cipher by design"
	exit 0
fi
# By default the engine stays serial where AES instructions make serial
# AES-CTR faster than threads (checked in section 0); everything else
# here forces NT threads per direction with AESCTRThreads on our side.
NT=2
MASK="~0x200000200000000"	# OPENSSL_ia32cap: hide AES-NI

# our_client_threads: our ssh (only) uses NT threads with $SSH_CONFIG.
our_client_threads() {
	sed "s/^Host hpntest\$/Host hpntest\n\tAESCTRThreads $NT/" \
	    "$SSH_CONFIG" >"$SSH_CONFIG.mt" && SSH_CONFIG="$SSH_CONFIG.mt"
}

# mt_active NAME LOGFILE CIPHER: both directions of LOGFILE's connection
# started the engine for CIPHER (MT-AES-CTR or MT-ChaCha20).
mt_active() {
	if grep -q "MT-[-A-Za-z0-9]*: $3 out with [0-9]* threads" "$2" &&
	    grep -q "MT-[-A-Za-z0-9]*: $3 in with [0-9]* threads" "$2"; then
		pass "$1"
	else
		fail "$1" "no 'MT-...: $3 in/out with N threads' in $2"
	fi
}

# stream_up NAME CIPHER BYTES [SSH-ARGS...]: random bytes through
# 'sha256sum' on the server; the digests of what was sent and what
# arrived must match.  The client logs to $TESTDIR/NAME.log.
stream_up() {
	_n="$1"
	_c="$2"
	_bytes="$3"
	shift 3
	rm -f "$TESTDIR/fifo"
	mkfifo "$TESTDIR/fifo" || die "mkfifo failed"
	sha256sum <"$TESTDIR/fifo" | cut -d' ' -f1 >"$TESTDIR/sent.sum" &
	_hp=$!
	head -c "$_bytes" /dev/urandom | tee "$TESTDIR/fifo" |
	    "$SSH_PROG" -F "$SSH_CONFIG" -c "$_c" -E "$TESTDIR/$_n.log" -v \
	    "$@" hpntest 'sha256sum | cut -d" " -f1' >"$TESTDIR/recv.sum"
	wait $_hp
	if [ -s "$TESTDIR/sent.sum" ] &&
	    cmp -s "$TESTDIR/sent.sum" "$TESTDIR/recv.sum"; then
		pass "$_n"
	else
		fail "$_n" "sent `cat "$TESTDIR/sent.sum"`, server got `cat \
		    "$TESTDIR/recv.sum"`: `tail -n1 "$TESTDIR/$_n.log"`"
	fi
}

# stream_down NAME CIPHER BYTES [SSH-ARGS...]: the server sends random
# bytes and records their digest; ours of what arrived must match.
stream_down() {
	_n="$1"
	_c="$2"
	_bytes="$3"
	shift 3
	rm -f "$TESTDIR/rsum"
	"$SSH_PROG" -F "$SSH_CONFIG" -c "$_c" -E "$TESTDIR/$_n.log" -v "$@" \
	    hpntest "rm -f $TESTDIR/rfifo; mkfifo $TESTDIR/rfifo;
	    sha256sum <$TESTDIR/rfifo | cut -d' ' -f1 >$TESTDIR/rsum &
	    head -c $_bytes /dev/urandom | tee $TESTDIR/rfifo; wait" |
	    sha256sum | cut -d' ' -f1 >"$TESTDIR/got.sum"
	if [ -s "$TESTDIR/rsum" ] &&
	    cmp -s "$TESTDIR/rsum" "$TESTDIR/got.sum"; then
		pass "$_n"
	else
		fail "$_n" "server sent `cat "$TESTDIR/rsum" 2>/dev/null`, \
got `cat "$TESTDIR/got.sum"`: `tail -n1 "$TESTDIR/$_n.log"`"
	fi
}

# Packets larger than 35,000 bytes (RFC 4253's minimum), for big_packets:
# a 60 KiB command line, a 40 KiB environment variable and a 40 KiB
# subsystem name.
A60K=`head -c 61440 /dev/zero | tr '\0' a`
E40K=`head -c 40960 /dev/zero | tr '\0' e`
S40K=`head -c 40960 /dev/zero | tr '\0' s`

# mt_in_or_traffic SSH-PROG WAIT-LOG: true once WAIT-LOG says MT runs
# inbound for $BP_CIPHER; else some traffic through the master at $CTL,
# which lets the loop run and the rekey finish.
BP_CIPHER=aes256-ctr
mt_in_or_traffic() {
	grep -q "MT-[-A-Za-z0-9]*: $BP_CIPHER in with" "$2" && return 0
	"$1" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest true
	return 1
}

# big_packets NAME SSH-PROG WAIT-LOG: via the master at $CTL, which uses
# $BP_CIPHER.
big_packets() {
	_n="$1"
	_p="$2"
	wait_until 10 mt_in_or_traffic "$_p" "$3"
	mt_active "$_n-mt-before-big-packets" "$3" $BP_CIPHER
	_out=`"$_p" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest \
	    "echo $A60K" | wc -c | tr -d ' '`
	if [ "$_out" = 61441 ]; then
		pass "$_n-60k-command"
	else
		fail "$_n-60k-command" "got $_out bytes back, want 61441"
	fi
	_out=`HPN_BIG="$E40K" "$_p" -F "$SSH_CONFIG" -o ControlPath="$CTL" \
	    -o SendEnv=HPN_BIG hpntest 'printf %s "$HPN_BIG" | wc -c' |
	    tr -d ' '`
	if [ "$_out" = 40960 ]; then
		pass "$_n-40k-env"
	else
		fail "$_n-40k-env" "server saw $_out bytes of HPN_BIG"
	fi
	# The server parses the request and refuses the unknown subsystem;
	# the connection carries on.
	"$_p" -F "$SSH_CONFIG" -o ControlPath="$CTL" -s hpntest "$S40K" \
	    </dev/null >/dev/null 2>"$TESTDIR/sub.err"
	if grep -q "subsystem request for s\{100\}.*subsystem not found" \
	    "$SSHD_LOG" &&
	    "$_p" -F "$SSH_CONFIG" -o ControlPath="$CTL" -O check hpntest \
	    2>/dev/null; then
		pass "$_n-40k-subsystem"
	else
		fail "$_n-40k-subsystem" "sshd did not refuse it cleanly: \
`tail -n1 "$TESTDIR/sub.err"`"
	fi
	if grep -qi "corrupt\|incorrect\|bad packet" "$SSHD_LOG"; then
		fail "$_n-no-packet-errors" "`grep -i 'corrupt\|incorrect\|bad \
packet' "$SSHD_LOG" | head -n1`"
	else
		pass "$_n-no-packet-errors"
	fi
	"$_p" -F "$SSH_CONFIG" -o ControlPath="$CTL" -O exit hpntest 2>/dev/null
}
SSH_PROG="$SSH"
CTL="$TESTDIR/ctl"
