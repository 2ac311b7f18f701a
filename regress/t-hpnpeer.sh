#!/bin/sh
#
# t-hpnpeer.sh: HPN-SSH 18.8.0 (build/hpnssh, make hpnssh-peer) as a peer
# on the default cipher, whose threaded ChaCha20 garbles packets past
# 32,896 bytes and tags the garbled bytes: compat.c must give it stock's
# 32 KiB packets, whichever side it is (SSH_BUG_BIGPACKET).
#   Our ssh and sshd name the rule for it (debug: "pat OpenSSH*_hpn*"),
#   and not for each other.
#   Our scp and sftp download from and upload to hpnsshd, and HPN-SSH's
#   scp and sftp do so with our sshd: 48 MiB, ZOO-style three times each,
#   byte for byte, exit status 0; stock's client beside ours once.
# Skipped, saying why, where HPN-SSH is not built.

. "`dirname "$0"`/lib.sh"

HPNSSH="${HPNSSH_BUILD:-$HPN_TOP/build/hpnssh/links}"
if [ ! -x "$HPNSSH/sshd" ] || [ ! -x "$HPNSSH/scp" ]; then
	skip hpnpeer "no HPN-SSH build in $HPNSSH (make hpnssh-peer)"
	exit 0
fi
if [ "`id -u`" = 0 ] && ! id hpnsshd >/dev/null 2>&1; then
	skip hpnpeer "HPN-SSH's sshd wants the system user hpnsshd"
	exit 0
fi
ROUNDS=3
! other_release || ROUNDS=1
DATA=`make_data 50331649`

# Our client against hpnsshd.
HPN_PEER_BUILD="$HPNSSH" start_sshd hpnssh peer
"$HPN_BUILD/ssh" -v -F "$SSH_CONFIG" hpntest true 2>"$TESTDIR/err.banner"
check_has client-names-hpnssh "$TESTDIR/err.banner" \
    'pat OpenSSH\*_hpn\* compat 0x0400000[89]'
r=1
while [ $r -le $ROUNDS ]; do
	xfer_scp ours-to-hpnsshd-$r "$HPN_BUILD/scp" "$HPN_BUILD/ssh" "$DATA"
	xfer_sftp ours-sftp-to-hpnsshd-$r "$HPN_BUILD/sftp" "$HPN_BUILD/ssh" \
	    "$DATA"
	r=`expr $r + 1`
done
xfer_scp stock-to-hpnsshd "$STOCK_BUILD/scp" "$STOCK_BUILD/ssh" "$DATA"
stop_sshd

# HPN-SSH's client against our sshd.
start_sshd ours hpn
m=`log_mark`
"$HPNSSH/ssh" -F "$SSH_CONFIG" hpntest true 2>/dev/null
check "server-names-hpnssh" sh -c "sed -n '$((m + 1)),\$p' '$SSHD_LOG' |
    grep -q 'pat OpenSSH\*_hpn\* compat 0x0400000[89]'"
m=`log_mark`
"$HPN_BUILD/ssh" -F "$SSH_CONFIG" hpntest true 2>/dev/null
check "ours-not-hpnssh" sh -c "! sed -n '$((m + 1)),\$p' '$SSHD_LOG' |
    grep -q 'pat OpenSSH\*_hpn\*'"
r=1
while [ $r -le $ROUNDS ]; do
	xfer_scp hpnscp-to-ours-$r "$HPNSSH/scp" "$HPNSSH/ssh" "$DATA"
	xfer_sftp hpnsftp-to-ours-$r "$HPNSSH/sftp" "$HPNSSH/ssh" "$DATA"
	r=`expr $r + 1`
done
stop_sshd
