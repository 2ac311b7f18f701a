#!/bin/sh
#
# t-mtlife.sh: MT-AES-CTR through a connection's life, every byte
# checked: RekeyLimit 1M (over a hundred rekeys mid-transfer, a dozen on
# other releases, the engine restarted at each), ssh -f (the fork after
# authentication, and the fork deferred until a remote forward is
# confirmed, after the engine may already run), a ControlMaster with two
# sessions at once, scp and sftp.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-mt.sh"

start_sshd mt hpn "AESCTRThreads $NT"
our_client_threads

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
stop_sshd
exit 0
