#!/bin/sh
#
# t-mtchacha.sh: chacha20-poly1305@openssh.com, the default cipher,
# through the MT engine (MT-ChaCha20: each packet's ChaCha20 keystream
# from the workers, Poly1305 in the connection's thread).  The engine's
# unit test checks every packet length; here the hooks: the default
# choice (no threads below 4 CPUs), both directions and both ends,
# rekeys, a deferred ssh -f, scp, and stock peers (serial ChaCha20) at
# both ends with packets larger than 35,000 bytes.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-mt.sh"

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
