#!/bin/sh
#
# t-cross.sh: patched programs of two supported releases together: our
# ssh (HPN_BUILD) with the patched sshd of another release
# (HPN_PEER_BUILD), and that release's ssh with our sshd.  Each way:
# 32 MiB up and down byte for byte with aes128-ctr and chacha20-poly1305;
# the None switch accepted, the data exact, both sides logging the none
# cipher; each side sees the other's banner as patched and caps the
# window it grants at the patched-peer base (8 MiB), past stock's 2 MiB.
# make check-releases runs it; without HPN_PEER_BUILD it is skipped.

. "`dirname "$0"`/lib.sh"

if [ -z "${HPN_PEER_BUILD:-}" ] || [ ! -x "$HPN_PEER_BUILD/sshd" ]; then
	skip cross "HPN_PEER_BUILD names no patched build (make check-releases sets it)"
	exit 0
fi
DATA=`make_data ${HPN_XFER_BYTES:-33554432}`
OURS=`"$HPN_BUILD/ssh" -V 2>&1 | sed 's/,.*//'`
PEER=`"$HPN_PEER_BUILD/ssh" -V 2>&1 | sed 's/,.*//'`
echo "# $OURS with $PEER"
PATCHED_BASE=8388608

# patched_cap NAME LOG MARK: LOG, after MARK (log_mark), says the peer is
# patched and logs a patched-peer window budget with at least 8 MiB of
# headroom.
patched_cap() {
	if ! log_has $3 'peer SSH-2.0-OpenSSH_[0-9.p]*-hpn1 is patched' "$2"; then
		fail "$1" "no 'peer ... is patched' line: `log_since $3 "$2" |
		    grep 'peer_is_patched' | head -n 1`"
		return
	fi
	_b=`budget_lines "$2" $3 patched | head -n 1`
	if [ -z "$_b" ]; then
		fail "$1" "no patched-peer window budget logged"
	elif [ "`echo $_b | cut -d' ' -f6`" -lt $PATCHED_BASE ]; then
		fail "$1" "budget headroom `echo $_b | cut -d' ' -f6`, below $PATCHED_BASE"
	else
		pass "$1"
	fi
}

# cross NAME SSHD-FLAVOUR SSH (lib.sh's helpers use _n and _ssh)
cross() {
	_x="$1"
	_xs="$3"
	start_sshd "$_x" "$2" "NoneEnabled yes" "LogLevel DEBUG2"
	for _c in aes128-ctr chacha20-poly1305@openssh.com; do
		xfer_ssh "$_x-$_c" "$_xs" "$_c" "$DATA"
	done
	_from=`log_mark`
	_err="$TESTDIR/err.none.$_x"
	"$_xs" -vv -F "$SSH_CONFIG" -o NoneEnabled=yes -o NoneSwitch=yes \
	    hpntest "cat $DATA" >"$TESTDIR/none.$_x" 2>"$_err"
	check_copy "$_x-none-download" ssh $? "$_err" "$DATA" \
	    "$TESTDIR/none.$_x"
	check "$_x-none-client" grep -q 'server->client cipher: none' "$_err"
	check "$_x-none-warning" grep -q 'WARNING: ENABLED NONE CIPHER' "$_err"
	# The session process logs its transfer line when it ends.
	wait_until 5 log_has $_from 'Transfer stats:'
	check "$_x-none-server" log_has $_from \
	    'Transfer stats: .*cipher_in=none cipher_out=none'
	patched_cap "$_x-client-window" "$_err" 0
	patched_cap "$_x-server-window" "$SSHD_LOG" $_from
	stop_sshd
	rm -f "$TESTDIR/none.$_x"
}

cross ours-to-peer peer "$HPN_BUILD/ssh"
cross peer-to-ours hpn "$HPN_PEER_BUILD/ssh"
exit 0
