#!/bin/sh
#
# t-mtaes.sh: MT-AES-CTR in our ssh and sshd.  Bulk data is checked by
# SHA-256 at both ends; that the engine really ran is checked from the
# debug logs of both ends and from the thread counts of the processes.
# Also: over a hundred rekeys mid-transfer, ssh -f, ControlMaster, sshd as a
# daemon, scp, sftp, the options, and Debian's stock ssh and sshd as peers
# with packets larger than 35,000 bytes once MT is running.  Then the same
# engine with chacha20-poly1305@openssh.com (MT-ChaCha20): both
# directions, rekeys, ssh -f, scp, and the stock peers with large packets.

. "`dirname "$0"`/lib.sh"

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

SSH_PROG="$SSH"
start_sshd mt hpn "AESCTRThreads $NT"
SERVER_PID=$SSHD_PID
PLAIN_CONFIG="$SSH_CONFIG"

# 0. The default (AESCTRThreads 0): threads where serial AES-CTR is slow
# (AES-NI hidden from OpenSSL), the serial cipher, with the reason, where
# AES instructions make it fast.
"$SSH" -F "$PLAIN_CONFIG" -c aes128-ctr -E "$TESTDIR/default.log" -v \
    hpntest true
if grep -qw aes /proc/cpuinfo; then
	if grep -q "MT-AES-CTR: not used: serial AES-CTR is faster here" \
	    "$TESTDIR/default.log" &&
	    ! grep -q "MT-AES-CTR: aes" "$TESTDIR/default.log"; then
		pass default-serial-with-aes-ni
	else
		fail default-serial-with-aes-ni "no 'serial AES-CTR is faster' \
reason with AES-NI and AESCTRThreads 0"
	fi
else
	skip default-serial-with-aes-ni "this CPU has no AES-NI"
fi
OPENSSL_ia32cap="$MASK" "$SSH" -F "$PLAIN_CONFIG" -c aes128-ctr \
    -E "$TESTDIR/default-masked.log" -v hpntest true
if grep -q "MT-AES-CTR: rekeying to start [0-9]* threads" \
    "$TESTDIR/default-masked.log"; then
	mt_active default-threads-without-aes-ni "$TESTDIR/default-masked.log" \
	    aes128-ctr
else
	fail default-threads-without-aes-ni "no threads by default with \
AES-NI masked: `grep 'MT-AES-CTR' "$TESTDIR/default-masked.log" | head -n1`"
fi
our_client_threads

# 1. 256 MiB with each AES-CTR key size, MT on both ends (each of the
# workers' keystream queues is refilled hundreds of times).
for c in $CTR; do
	m=`log_mark`
	stream_up "bulk-$c" $c $BIG
	mt_active "bulk-$c-client-mt" "$TESTDIR/bulk-$c.log" $c
	log_since $m >"$TESTDIR/srv.log"
	mt_active "bulk-$c-server-mt" "$TESTDIR/srv.log" $c
done
stream_down "bulk-download-aes256-ctr" aes256-ctr $MID
mt_active "bulk-download-client-mt" "$TESTDIR/bulk-download-aes256-ctr.log" \
    aes256-ctr

# 2. The worker threads exist in both processes: 2 x threads + main.
"$SSH" -n -F "$SSH_CONFIG" -c aes128-ctr hpntest 'sleep 6' &
cpid=$!
hpn_track_pid $cpid
want=`expr 2 \* $NT + 1`
ct=0
st=0
# threads_up: ct and st, the threads of ssh and of the busiest sshd
# session process, are both at least $want.
threads_up() {
	ct=`nthreads $cpid`
	st=0
	for p in `descendants $SERVER_PID`; do
		t=`nthreads $p`
		[ "$t" -gt "$st" ] && st=$t
	done
	[ "$ct" -ge $want ] && [ "$st" -ge $want ]
}
wait_until 5 threads_up
if [ "$ct" -ge $want ]; then
	pass client-threads
else
	fail client-threads "ssh has $ct threads, want >= $want"
fi
if [ "$st" -ge $want ]; then
	pass server-threads
else
	fail server-threads "no sshd session process with >= $want threads \
(most: $st)"
fi
wait $cpid

# 3. RekeyLimit 1M: over a hundred rekeys mid-transfer (a dozen on
# other releases), each restarting MT (at least 25 in 32 of the
# MiBs sent).  (Not more: on 9.2p1 rekeys on loopback are a hundred
# times slower than on 10.5p1, in the unpatched twin as well.)
stream_up rekey-1M aes256-ctr $REKEY -o RekeyLimit=1M
n=`grep -c "MT-AES-CTR: aes256-ctr out with" "$TESTDIR/rekey-1M.log"`
if [ "$n" -ge `expr $REKEY / 1048576 \* 25 / 32` ]; then
	pass rekey-1M-mt-every-rekey
else
	fail rekey-1M-mt-every-rekey "only $n MT-AES-CTR rekeys in `expr \
	    $REKEY / 1048576` MiB"
fi

# 4. ssh -f: the connection moves to a background process after
# authentication; MT starts there.
rm -f "$TESTDIR/f.out" "$TESTDIR/f.src"
"$SSH" -f -F "$SSH_CONFIG" -c aes256-ctr -E "$TESTDIR/fork.log" -v \
    hpntest "head -c $MID /dev/urandom | tee $TESTDIR/f.src" \
    >"$TESTDIR/f.out"
wait_until 60 grep -q "Exit status" "$TESTDIR/fork.log"
check_same fork-after-auth "$TESTDIR/f.src" "$TESTDIR/f.out"
if grep -q "forking to background" "$TESTDIR/fork.log"; then
	mt_active fork-after-auth-mt "$TESTDIR/fork.log" aes256-ctr
else
	fail fork-after-auth-mt "ssh -f did not fork"
fi

# 4b. ssh -f with ExitOnForwardFailure and a remote forward: the fork is
# deferred until the forward is confirmed, inside the connection loop,
# after MT-AES-CTR may already run.  The child goes on with the same keys
# (the engine continues serially there) and then rekeys to its own threads.
rm -f "$TESTDIR/f.out" "$TESTDIR/f.src"
"$SSH" -f -F "$SSH_CONFIG" -c aes128-ctr -E "$TESTDIR/fork2.log" -v \
    -o ExitOnForwardFailure=yes -R 0:127.0.0.1:9 \
    hpntest "sleep 1; head -c $MID /dev/urandom | tee $TESTDIR/f.src" \
    >"$TESTDIR/f.out"
wait_until 60 grep -q "Exit status" "$TESTDIR/fork2.log"
check_same deferred-fork "$TESTDIR/f.src" "$TESTDIR/f.out"
sed -n '/forking to background/,$p' "$TESTDIR/fork2.log" >"$TESTDIR/fork2.after"
if grep -q "deferring postauth fork" "$TESTDIR/fork2.log" &&
    [ -s "$TESTDIR/fork2.after" ]; then
	mt_active deferred-fork-mt-in-child "$TESTDIR/fork2.after" aes128-ctr
else
	fail deferred-fork-mt-in-child "ssh did not defer its fork"
fi

# 5. ControlMaster (backgrounded with -f) and two sessions at once.
CTL="$TESTDIR/ctl"
"$SSH" -F "$SSH_CONFIG" -c aes192-ctr -E "$TESTDIR/master.log" -v \
    -o ControlMaster=yes -o ControlPath="$CTL" -f -N hpntest
D1=`make_data $MID`
D2=`make_data 33554432`
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest \
    "cat > $TESTDIR/m1" <"$D1" &
p1=$!
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" hpntest \
    "cat > $TESTDIR/m2" <"$D2" &
p2=$!
wait $p1
wait $p2
if w1=`same_file "$D1" "$TESTDIR/m1"` && w2=`same_file "$D2" "$TESTDIR/m2"`
then
	pass controlmaster-two-sessions
else
	fail controlmaster-two-sessions "$w1 $w2"
fi
mt_active controlmaster-mt "$TESTDIR/master.log" aes192-ctr
"$SSH" -F "$SSH_CONFIG" -o ControlPath="$CTL" -O exit hpntest 2>/dev/null

# 6. scp and sftp, with a CTR cipher and MT on both ends.
sed 's/^Host hpntest$/Host hpntest\n\tCiphers aes128-ctr/' "$SSH_CONFIG" \
    >"$TESTDIR/ssh_config.ctr"
SAVED="$SSH_CONFIG"
SSH_CONFIG="$TESTDIR/ssh_config.ctr"
DATA=`make_data $MID`
m=`log_mark`
xfer_scp scp "$HPN_BUILD/scp" "$SSH" "$DATA"
xfer_sftp sftp "$HPN_BUILD/sftp" "$SSH" "$DATA"
log_since $m >"$TESTDIR/srv.log"
n=`grep -c "MT-AES-CTR: aes128-ctr out with" "$TESTDIR/srv.log"`
if [ "$n" -ge 3 ]; then
	pass scp-sftp-server-mt
else
	fail scp-sftp-server-mt "MT started in $n of 3 scp/sftp connections"
fi
SSH_CONFIG="$SAVED"

# 7. The switches.  DisableMTAES on the client: serial there, the server
# still uses MT (each side decides for itself).
m=`log_mark`
stream_up disable-client aes256-ctr $MID -o DisableMTAES=yes
log_since $m >"$TESTDIR/srv.log"
if grep -q "MT-AES-CTR: not used: disabled by DisableMTAES" \
    "$TESTDIR/disable-client.log" &&
    ! grep -q "MT-AES-CTR: aes" "$TESTDIR/disable-client.log"; then
	pass disable-client-serial
else
	fail disable-client-serial "client did not stay serial"
fi
mt_active disable-client-server-still-mt "$TESTDIR/srv.log" aes256-ctr

stream_up threads-3 aes128-ctr $MID -o AESCTRThreads=3
check_has threads-option "$TESTDIR/threads-3.log" \
    "MT-AES-CTR: aes128-ctr out with 3 threads"

stream_up gcm aes128-gcm@openssh.com $MID
if grep -q "MT-AES-CTR: not used: cipher aes128-gcm@openssh.com is not \
AES-CTR or chacha20-poly1305" "$TESTDIR/gcm.log" &&
    ! grep -q "rekeying to start" "$TESTDIR/gcm.log"
then
	pass gcm-not-threaded
else
	fail gcm-not-threaded "no 'not AES-CTR' reason, or a needless rekey"
fi
stop_sshd

# DisableMTAES on the server, and sshd started as a real daemon (no -D).
SSHD_DAEMON=1 start_sshd mt-daemon hpn "DisableMTAES yes"
our_client_threads
stream_up disable-server aes192-ctr $MID
if grep -q "MT-AES-CTR: not used: disabled by DisableMTAES" "$SSHD_LOG" &&
    ! grep -q "MT-AES-CTR: aes" "$SSHD_LOG"; then
	pass disable-server-serial
else
	fail disable-server-serial "sshd did not stay serial"
fi
mt_active disable-server-client-still-mt "$TESTDIR/disable-server.log" \
    aes192-ctr
stop_sshd
SSHD_DAEMON=1 start_sshd mt-daemon2 hpn "AESCTRThreads $NT"
our_client_threads
stream_up daemon aes256-ctr $MID
mt_active daemon-sshd-mt "$SSHD_LOG" aes256-ctr
stop_sshd

# 8. Options: printed by ssh -G and sshd -T, bad values refused with the
# line number.
G=`"$SSH" -G -F /dev/null hpntest 2>/dev/null`
if echo "$G" | grep -qx "disablemtaes no" &&
    echo "$G" | grep -qx "aesctrthreads 0"; then
	pass ssh-G-defaults
else
	fail ssh-G-defaults "ssh -G lacks disablemtaes/aesctrthreads"
fi
G=`"$SSH" -G -F "$SSH_CONFIG" -o DisableMTAES=yes -o AESCTRThreads=3 hpntest \
    2>/dev/null`
if echo "$G" | grep -qx "disablemtaes yes" &&
    echo "$G" | grep -qx "aesctrthreads 3"; then
	pass ssh-G-set
else
	fail ssh-G-set "ssh -G does not show the values set"
fi
# sshd -T prints mixed-case keywords since 10.5p1.
T=`"$HPN_BUILD/sshd" -T -f "$TESTDIR/sshd_config.mt" 2>&1`
if echo "$T" | grep -qix "disablemtaes no" &&
    echo "$T" | grep -qix "aesctrthreads $NT"; then
	pass sshd-T-values
else
	fail sshd-T-values "sshd -T lacks disablemtaes/aesctrthreads"
fi
for bad in "AESCTRThreads 17" "AESCTRThreads -1" "AESCTRThreads lots" \
    "AESCTRThreads" "DisableMTAES maybe"; do
	name=`echo "$bad" | tr ' ' '-'`
	printf 'Host *\n\tUser nobody\n%s\n' "$bad" >"$TESTDIR/bad_config"
	check_rejected "ssh-rejects-$name" 3 "accepted '$bad'" \
	    "$SSH" -G -F "$TESTDIR/bad_config" hpntest
	cp "$TESTDIR/sshd_config.mt" "$TESTDIR/bad_sshd_config"
	echo "$bad" >>"$TESTDIR/bad_sshd_config"
	l=`wc -l <"$TESTDIR/bad_sshd_config" | tr -d ' '`
	check_rejected "sshd-rejects-$name" $l "accepted '$bad'" \
	    "$HPN_BUILD/sshd" -t -f "$TESTDIR/bad_sshd_config"
done

# 9. Interop with Debian's stock OpenSSH, MT on our side.  Packets larger
# than 35,000 bytes (RFC 4253's minimum) go through a ControlMaster
# connection once MT runs: a 60 KiB command line, a 40 KiB environment
# variable and a 40 KiB subsystem name.
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

if have_progs "$SYS_SSHD"; then
	start_sshd stock-peer system
	our_client_threads
	stream_up stock-sshd-up aes256-ctr $BIG
	mt_active stock-sshd-up-mt "$TESTDIR/stock-sshd-up.log" aes256-ctr
	stream_down stock-sshd-down aes128-ctr $MID
	mt_active stock-sshd-down-mt "$TESTDIR/stock-sshd-down.log" aes128-ctr
	"$SSH" -F "$SSH_CONFIG" -c aes256-ctr -E "$TESTDIR/smaster.log" -v \
	    -o SendEnv=HPN_BIG -o ControlMaster=yes -o ControlPath="$CTL" \
	    -f -N hpntest
	big_packets stock-sshd "$SSH" "$TESTDIR/smaster.log"
	stop_sshd
else
	skip stock-sshd "Debian's openssh-server is not installed"
fi

if have_progs "$SYS_SSH"; then
	start_sshd stock-client hpn "AESCTRThreads $NT"
	SSH_PROG="$SYS_SSH"
	stream_up stock-ssh-up aes256-ctr $BIG
	mt_active stock-ssh-up-server-mt "$SSHD_LOG" aes256-ctr
	m=`log_mark`
	stream_down stock-ssh-down aes192-ctr $MID
	log_since $m >"$TESTDIR/srv.log"
	mt_active stock-ssh-down-server-mt "$TESTDIR/srv.log" aes192-ctr
	SSH_PROG="$SSH"
	stop_sshd
	# A fresh sshd, so its log speaks only of the master's connection.
	start_sshd stock-client-mux hpn "AESCTRThreads $NT"
	"$SYS_SSH" -F "$SSH_CONFIG" -c aes256-ctr -o ControlMaster=yes \
	    -o SendEnv=HPN_BIG -o ControlPath="$CTL" -f -N hpntest
	big_packets stock-ssh "$SYS_SSH" "$SSHD_LOG"
	stop_sshd
else
	skip stock-ssh "Debian's openssh-client is not installed"
fi

# 10. chacha20-poly1305@openssh.com, the default cipher, through the same
# engine (MT-ChaCha20): each packet's ChaCha20 keystream from the workers,
# Poly1305 in the connection's thread.  The engine's unit test checks
# every packet length; here the hooks: both directions and both ends,
# rekeys, ssh -f, scp, and stock peers (serial ChaCha20) at both ends with
# packets larger than 35,000 bytes.
CHACHA=chacha20-poly1305@openssh.com
start_sshd mt-chacha hpn "AESCTRThreads $NT"
"$SSH" -F "$SSH_CONFIG" -c $CHACHA -E "$TESTDIR/chacha-default.log" -v \
    hpntest true
if [ "$NCPU" -ge 4 ]; then
	check_has chacha-default-threads "$TESTDIR/chacha-default.log" \
	    "MT-ChaCha20: rekeying to start 2 threads"
else
	check_has chacha-default-serial "$TESTDIR/chacha-default.log" \
	    "MT-ChaCha20: not used: fewer than 4 CPUs online"
fi
our_client_threads
m=`log_mark`
stream_up chacha-up $CHACHA $MID
mt_active chacha-up-client-mt "$TESTDIR/chacha-up.log" $CHACHA
log_since $m >"$TESTDIR/srv.log"
mt_active chacha-up-server-mt "$TESTDIR/srv.log" $CHACHA
stream_down chacha-down $CHACHA $MID
mt_active chacha-down-client-mt "$TESTDIR/chacha-down.log" $CHACHA
stream_up chacha-rekey-1M $CHACHA 16777216 -o RekeyLimit=1M
n=`grep -c "MT-ChaCha20: $CHACHA out with" "$TESTDIR/chacha-rekey-1M.log"`
if [ "$n" -ge 12 ]; then
	pass chacha-rekey-1M-mt-every-rekey
else
	fail chacha-rekey-1M-mt-every-rekey "only $n MT-ChaCha20 rekeys in \
16 MiB"
fi
rm -f "$TESTDIR/f.out" "$TESTDIR/f.src"
"$SSH" -f -F "$SSH_CONFIG" -c $CHACHA -E "$TESTDIR/chacha-fork.log" -v \
    -o ExitOnForwardFailure=yes -R 0:127.0.0.1:9 \
    hpntest "sleep 1; head -c $MID /dev/urandom | tee $TESTDIR/f.src" \
    >"$TESTDIR/f.out"
wait_until 60 grep -q "Exit status" "$TESTDIR/chacha-fork.log"
check_same chacha-deferred-fork "$TESTDIR/f.src" "$TESTDIR/f.out"
sed -n '/forking to background/,$p' "$TESTDIR/chacha-fork.log" \
    >"$TESTDIR/fork2.after"
mt_active chacha-deferred-fork-mt-in-child "$TESTDIR/fork2.after" $CHACHA
sed "s/^Host hpntest\$/Host hpntest\n\tCiphers $CHACHA/" "$SSH_CONFIG" \
    >"$TESTDIR/ssh_config.chacha"
SAVED="$SSH_CONFIG"
SSH_CONFIG="$TESTDIR/ssh_config.chacha"
m=`log_mark`
xfer_scp chacha-scp "$HPN_BUILD/scp" "$SSH" "`make_data $MID`"
log_since $m >"$TESTDIR/srv.log"
mt_active chacha-scp-server-mt "$TESTDIR/srv.log" $CHACHA
SSH_CONFIG="$SAVED"
stop_sshd

BP_CIPHER=$CHACHA
if have_progs "$SYS_SSHD"; then
	start_sshd stock-peer-chacha system
	our_client_threads
	stream_up chacha-stock-sshd-up $CHACHA $MID
	mt_active chacha-stock-sshd-up-mt "$TESTDIR/chacha-stock-sshd-up.log" \
	    $CHACHA
	stream_down chacha-stock-sshd-down $CHACHA $MID
	"$SSH" -F "$SSH_CONFIG" -c $CHACHA -E "$TESTDIR/cmaster.log" -v \
	    -o SendEnv=HPN_BIG -o ControlMaster=yes -o ControlPath="$CTL" \
	    -f -N hpntest
	big_packets chacha-stock-sshd "$SSH" "$TESTDIR/cmaster.log"
	stop_sshd
else
	skip chacha-stock-sshd "Debian's openssh-server is not installed"
fi
if have_progs "$SYS_SSH"; then
	start_sshd stock-client-chacha hpn "AESCTRThreads $NT"
	SSH_PROG="$SYS_SSH"
	stream_up chacha-stock-ssh-up $CHACHA $MID
	mt_active chacha-stock-ssh-up-server-mt "$SSHD_LOG" $CHACHA
	stream_down chacha-stock-ssh-down $CHACHA $MID
	SSH_PROG="$SSH"
	stop_sshd
	start_sshd stock-client-mux-chacha hpn "AESCTRThreads $NT"
	"$SYS_SSH" -F "$SSH_CONFIG" -c $CHACHA -o ControlMaster=yes \
	    -o SendEnv=HPN_BIG -o ControlPath="$CTL" -f -N hpntest
	big_packets chacha-stock-ssh "$SYS_SSH" "$SSHD_LOG"
	stop_sshd
else
	skip chacha-stock-ssh "Debian's openssh-client is not installed"
fi
exit 0
