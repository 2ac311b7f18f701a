#!/bin/sh
#
# t-interop.sh: Debian's own OpenSSH (an independent peer) against ours,
# both directions: Debian's ssh, scp and sftp into our sshd, and our ssh,
# scp and sftp into Debian's sshd binary, started here on 127.0.0.1 with
# its own config (never the system service), and the key exchange our ssh
# guesses on the rekeys of a download from it.

. "`dirname "$0"`/lib.sh"

SIZE=${HPN_XFER_BYTES:-$XFER}

if ! have_progs "$SYS_SSH" "$SYS_SCP" "$SYS_SFTP"; then
	skip stock-client "Debian's openssh-client is not installed ($SYS_SSH)"
else
	start_sshd hpn-server hpn
	DATA=`make_data $SIZE`
	sysver=`"$SYS_SSH" -V 2>&1`
	echo "# peer: $SYS_SSH: $sysver"

	check_exit_status stock-client-exit-status "$SYS_SSH"
	# Our server's banner reaches the stock client.
	"$SYS_SSH" -v -F "$SSH_CONFIG" hpntest true >/dev/null \
	    2>"$TESTDIR/v.log"
	if grep -q "remote software version $HPN_BANNER_V" \
	    "$TESTDIR/v.log"; then
		pass stock-client-sees-hpn-banner
	else
		fail stock-client-sees-hpn-banner \
		    "`grep 'remote software' "$TESTDIR/v.log"`"
	fi
	for c in $CIPHERS; do
		xfer_ssh "stock-client-$c" "$SYS_SSH" "$c" "$DATA"
	done
	xfer_scp stock-scp "$SYS_SCP" "$SYS_SSH" "$DATA"
	xfer_sftp stock-sftp "$SYS_SFTP" "$SYS_SSH" "$DATA"
	stop_sshd
fi

if ! have_progs "$SYS_SSHD"; then
	skip stock-server "Debian's openssh-server is not installed ($SYS_SSHD)"
else
	start_sshd stock-server system
	DATA=`make_data $SIZE`
	SSH="$HPN_BUILD/ssh"
	check_exit_status stock-server-exit-status "$SSH"
	# The stock server really is the stock one.
	"$SSH" -v -F "$SSH_CONFIG" hpntest true >/dev/null 2>"$TESTDIR/v.log"
	if grep "remote software version" "$TESTDIR/v.log" | grep -q hpn; then
		fail stock-server-is-stock "peer claims to be patched"
	else
		pass stock-server-is-stock
	fi
	for c in $CIPHERS; do
		xfer_ssh "stock-server-$c" "$SSH" "$c" "$DATA"
	done
	xfer_scp stock-server-scp "$HPN_BUILD/scp" "$SSH" "$DATA"
	xfer_sftp stock-server-sftp "$HPN_BUILD/sftp" "$SSH" "$DATA"
	stop_sshd
	# Our ssh guesses the key exchange of the rekeys of a download
	# after the first (t-rekey.sh says why): 320 MiB from Debian's
	# sshd, RekeyLimit 64M on both sides (the client starts a rekey at
	# most a quarter of the limit early), byte-exact, three or more
	# rekeys started by our ssh, every guess taken.  Only where sshd lists first the KEX algorithm in
	# use: Debian's 9.2p1 lists sntrup761x25519-sha512 first, which
	# 9.2p1's ssh knows only as sntrup761x25519-sha512@openssh.com; so
	# that one must not guess.
	start_sshd stock-rekey system "LogLevel DEBUG2" "RekeyLimit 64M"
	DATA=`make_data 335544320`
	from=`log_mark`
	err="$TESTDIR/err.stock-server-rekey.down"
	xfer_down stock-server-rekey "$SSH" "$DATA" -v -o RekeyLimit=64M
	kex=`tr -d '\r' <"$err" | sed -n 's/^debug1: kex: algorithm: //p' |
	    head -n 1`
	first=`grep -A1 "local server KEXINIT proposal" "$SSHD_LOG" |
	    sed -n 's/^debug2: KEX algorithms: \([^, ]*\).*/\1/p' | head -n 1`
	if [ -n "$kex" ] && [ "$kex" = "$first" ]; then
		guessed_rekeys stock-server-rekey-guess "$err" $from 3
	elif [ -n "$kex" ] && [ -n "$first" ]; then
		check_has_not stock-server-rekey-noguess "$err" \
		    "SSH2_MSG_KEXINIT guesses"
		echo "# stock-server-rekey: no guess: sshd lists $first" \
		    "first, $kex is in use"
	else
		fail stock-server-rekey-guess "no KEX algorithm in the logs"
	fi
	rm -f "$DATA"
	stop_sshd
fi
exit 0
