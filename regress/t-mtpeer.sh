#!/bin/sh
#
# t-mtpeer.sh: MT-AES-CTR on our side, Debian's stock OpenSSH on the
# other: our ssh into Debian's sshd and Debian's ssh into our sshd, up and
# down with SHA-256 checked at both ends, then packets larger than 35,000
# bytes (a 60 KiB command, a 40 KiB environment value, a 40 KiB subsystem
# name) through a ControlMaster once the engine runs, with no packet
# error in sshd's log.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-mt.sh"

BP_CIPHER=aes256-ctr
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
exit 0
