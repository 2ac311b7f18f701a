#!/bin/sh
#
# t-basic.sh: our ssh against our sshd on 127.0.0.1: commands and exit
# status, the version tag, 64 MiB both ways for every cipher, scp and sftp.

. "`dirname "$0"`/lib.sh"

SIZE=${HPN_XFER_BYTES:-$XFER}

start_sshd basic hpn
SSH="$HPN_BUILD/ssh"

# ssh -V names the release under test and carries our tag; so does the
# banner.
check version-tag sh -c "'$SSH' -V 2>&1 | grep -q '^$HPN_SSH_V,'"
check version-release sh -c "'$SSH' -V 2>&1 | grep -q '^OpenSSH_${HPN_OPENSSH%%p*}p'"
"$SSH" -v -F "$SSH_CONFIG" hpntest true >/dev/null 2>"$TESTDIR/v.log"
if grep -q "remote software version $HPN_BANNER_V" "$TESTDIR/v.log"; then
	pass banner-tag
else
	fail banner-tag "server banner lacks -hpn1: `grep 'remote software' \
	    "$TESTDIR/v.log"`"
fi

# A command runs, its output and exit status come back.
check_exit_status exit-status "$SSH"
"$SSH" -F "$SSH_CONFIG" hpntest true
check exit-status-zero test $? -eq 0

DATA=`make_data $SIZE`
for c in $CIPHERS; do
	xfer_ssh "ssh-$c" "$SSH" "$c" "$DATA"
done
xfer_scp scp "$HPN_BUILD/scp" "$SSH" "$DATA"
xfer_scp scp-legacy "$HPN_BUILD/scp" "$SSH" "$DATA" -O
xfer_sftp sftp "$HPN_BUILD/sftp" "$SSH" "$DATA"
exit 0
