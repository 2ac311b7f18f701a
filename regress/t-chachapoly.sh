#!/bin/sh
#
# t-chachapoly.sh: chacha20-poly1305@openssh.com with Poly1305 from
# libcrypto (poly1305-evp.c) against Debian's stock OpenSSH, both ways:
# Debian's ssh into our sshd and our ssh into Debian's sshd.  The tags must
# be the same bytes as the portable code's, so every check is byte-exact:
#
#   - bulk transfers up and down, with rekeys forced from both sides
#     (RekeyLimit), each rekey a fresh pair of contexts;
#   - a packet of about 255 KiB each way, near the 256 KiB the protocol
#     allows, before authentication (under the first key exchange's keys):
#     client to server a user authentication request for a 255 KiB user
#     name, server to client a 250 KiB banner;
#   - our side says at debug3 that it uses libcrypto's Poly1305, sshd in
#     its pre-authentication child too (the seccomp sandbox);
#   - session channels: our sshd and our ssh offer 64 KiB packets, which
#     our pair uses byte-exact both ways; against Debian's sshd, which
#     takes 32 KiB, our ssh sends nothing larger (its log has no "rcvd big
#     packet", the line with which OpenSSH drops such data).

. "`dirname "$0"`/lib.sh"

SIZE=${HPN_XFER_BYTES:-33554432}
C=chacha20-poly1305@openssh.com

# The 250 KiB banner: printable lines, which the client prints unchanged.
BANNER="$TESTDIR/banner"
i=0
while [ $i -lt 2000 ]; do
	printf '%05d %s\n' $i \
	    "banner line of chacha20-poly1305 interop, 128 bytes long ........................................................."
	i=`expr $i + 1`
done | head -c 256000 >"$BANNER"

# more_config NAME LINE...: $SSH_CONFIG with LINEs added to its host, in
# $TESTDIR/ssh_config.more-NAME.
more_config() {
	_f="$TESTDIR/ssh_config.more-$1"
	shift
	cat "$SSH_CONFIG" >"$_f"
	for _l in "$@"; do
		printf '\t%s\n' "$_l" >>"$_f"
	done
	echo "$_f"
}

# rekeys NAME FILE: pass if FILE logs at least 4 key exchanges.  With
# RekeyLimit 1M a 32 MiB download could take 32, but what the server sent
# before it read the client's KEXINIT still arrives under the old keys, up
# to a whole window, so the count depends on the scheduling: 19 on an idle
# machine, 9 on a CI machine running three releases' suites at once.  Four
# still shows the keys renewed again and again under a running transfer.
rekeys() {
	_k=`grep -c "SSH2_MSG_NEWKEYS received" "$2"`
	if [ "$_k" -ge 4 ]; then
		pass "$1"
	else
		fail "$1" "$_k key exchanges in `basename "$2"`, want >= 4"
	fi
}

# big_packets NAME SSH: the banner arrives whole, and the server reads a
# request for a 255 KiB user name (an invalid user, refused politely).
big_packets() {
	"$2" -F "$SSH_CONFIG" -c $C -o LogLevel=INFO hpntest true \
	    </dev/null >/dev/null 2>"$TESTDIR/banner.$1"
	_bn=`wc -c <"$BANNER"`
	_got=`wc -c <"$TESTDIR/banner.$1"`
	if cmp -s "$BANNER" "$TESTDIR/banner.$1"; then
		pass "$1-250k-banner-to-client"
	elif [ "$_got" -gt "$_bn" ] &&
	    head -c "$_bn" "$TESTDIR/banner.$1" | cmp -s "$BANNER" -; then
		# The banner arrived whole; ssh said more after it (seen once,
		# 137 bytes, 10.0p1 against Debian's sshd on a loaded CI
		# machine): shown, so that it can be traced.
		pass "$1-250k-banner-to-client"
		_more=`tail -c "\`expr $_got - $_bn\`" "$TESTDIR/banner.$1" |
		    tr '\n\r' '  '`
		echo "# $1-250k-banner-to-client: ssh also said: $_more"
	else
		fail "$1-250k-banner-to-client" "got $_got bytes, `cmp "$BANNER" "$TESTDIR/banner.$1" 2>&1 | head -n 1`"
	fi
	_l=`log_mark`
	_cfg="$TESTDIR/ssh_config.big-$1"
	{
		grep -v '^[[:space:]]*User ' "$SSH_CONFIG"
		printf '\tUser '
		head -c 261120 /dev/zero | tr '\0' s
		echo
	} >"$_cfg"
	"$2" -F "$_cfg" -c $C -o LogLevel=ERROR hpntest true </dev/null \
	    >/dev/null 2>"$TESTDIR/err.big-$1"
	wait_until 5 log_has $_l 'Invalid user s\{100\}'
	# The name is read only once the whole packet's tag checked out.
	if log_has $_l "Invalid user s\{100\}" &&
	    ! grep -qi "MAC\|corrupt" "$TESTDIR/err.big-$1"; then
		pass "$1-255k-request-to-server"
	else
		fail "$1-255k-request-to-server" "no 'Invalid user' in the server's log, or the client says: `grep -i 'MAC\|corrupt' "$TESTDIR/err.big-$1" | cut -c 1-100`"
	fi
}

# big_data NAME CLIENT-LOG MAX: the session channel's server took packets
# of MAX bytes (the client's debug2 "open confirm" line), and neither the
# server nor the client logged "rcvd big packet" (data larger than it
# offered, which OpenSSH drops).
big_data() {
	check_has "$1-max-packet-$3" "$2" \
	    "open confirm rwindow [0-9]* rmax $3[[:space:]]*\$"
	check_has_not "$1-server-no-big-packet" "$SSHD_LOG" "rcvd big packet"
	check_has_not "$1-client-no-big-packet" "$2" "rcvd big packet"
}

# rekey_xfer PEER SSH: xfer_ssh PEER-rekey with SSH and RekeyLimit 1M,
# and SSH's log shows at least 4 key exchanges (PEER-rekeys-client).
rekey_xfer() {
	_saved="$SSH_CONFIG"
	SSH_CONFIG=`more_config rekey "RekeyLimit 1M" "LogLevel DEBUG2"`
	xfer_ssh "$1-rekey" "$2" $C "$DATA"
	SSH_CONFIG="$_saved"
	rekeys "$1-rekeys-client" "$TESTDIR/err.$1-rekey"
}

DATA=`make_data $SIZE`

# 1. Debian's ssh into our sshd.
if ! have_progs "$SYS_SSH"; then
	skip stock-client "Debian's openssh-client is not installed ($SYS_SSH)"
else
	start_sshd hpn-server hpn "Ciphers $C" "RekeyLimit 2M" \
	    "Banner $BANNER" "LogLevel DEBUG3"
	echo "# peer: $SYS_SSH: `"$SYS_SSH" -V 2>&1`"
	big_packets stock-client "$SYS_SSH"
	rekey_xfer stock-client "$SYS_SSH"
	if grep -q "poly1305_evp_new: Poly1305 from libcrypto \[preauth\]" \
	    "$SSHD_LOG"; then
		pass hpn-server-libcrypto-preauth
	else
		fail hpn-server-libcrypto-preauth "`grep -m1 'Poly1305 from' "$SSHD_LOG"`"
	fi
	if grep "Poly1305 from" "$SSHD_LOG" | grep -qv "from libcrypto"; then
		fail hpn-server-libcrypto-always "`grep 'Poly1305 from' "$SSHD_LOG" | grep -v libcrypto | head -n 1`"
	else
		pass hpn-server-libcrypto-always
	fi
	stop_sshd
fi

# 2. Our ssh into Debian's sshd.
if ! have_progs "$SYS_SSHD"; then
	skip stock-server "Debian's openssh-server is not installed ($SYS_SSHD)"
else
	start_sshd stock-server system "Ciphers $C" "RekeyLimit 2M" \
	    "Banner $BANNER"
	SSH="$HPN_BUILD/ssh"
	big_packets stock-server "$SSH"
	rekey_xfer stock-server "$SSH"
	big_data stock-server "$TESTDIR/err.stock-server-rekey" 32768
	"$SSH" -vvv -F "$SSH_CONFIG" -c $C hpntest true </dev/null \
	    >/dev/null 2>"$TESTDIR/vvv.log"
	_n=`grep -c "poly1305_evp_new: Poly1305 from libcrypto" "$TESTDIR/vvv.log"`
	if [ "$_n" -ge 2 ] && ! grep "Poly1305 from" "$TESTDIR/vvv.log" |
	    grep -qv libcrypto; then
		pass hpn-client-libcrypto
	else
		fail hpn-client-libcrypto "$_n contexts with libcrypto's Poly1305, want 2"
	fi
	stop_sshd
fi

# 3. Our ssh into our sshd: session channels of 64 KiB packets both ways
# (the server logs what the client offered, the client what the server did).
start_sshd hpn-pair hpn "Ciphers $C" "RekeyLimit 2M" "LogLevel DEBUG1"
rekey_xfer hpn-pair "$HPN_BUILD/ssh"
big_data hpn-pair "$TESTDIR/err.hpn-pair-rekey" 65536
check_has hpn-pair-client-max-packet-65536 "$SSHD_LOG" \
    "ctype session rchan [0-9]* win [0-9]* max 65536[[:space:]]*\$"
stop_sshd
exit 0
