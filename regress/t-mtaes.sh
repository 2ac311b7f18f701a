#!/bin/sh
#
# t-mtaes.sh: when MT-AES-CTR (patch 0001) runs and with how many
# threads, and that every byte through it arrives: the default choice
# (serial with AES-NI, threads with AES-NI hidden), 256 MiB per CTR key
# size checked by SHA-256 at both ends with the engine running on both
# (debug logs), the worker threads in both processes, DisableMTAES on
# either side, AESCTRThreads, GCM untouched, sshd as a daemon, and the
# options in ssh -G / sshd -T with their bad values.  A connection's life
# (rekeys, fork, multiplexing, scp, sftp) is t-mtlife.sh's, stock peers
# t-mtpeer.sh's, ChaCha20 t-mtchacha.sh's.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-mt.sh"

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
exit 0
