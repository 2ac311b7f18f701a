#!/bin/sh
#
# t-kexguess.sh: the client's guessed key exchange on a rekey (patch
# 0008, kex-guess.c), between two in-memory endpoints
# (regress/unit/test_kex_guess.c, linked with the patched libssh): the
# client guesses, a KEX_ECDH_REPLY that comes before the server's KEXINIT
# is a protocol error (not a reply to the guess), and the guessed
# exchange and the next one complete; a message the server sends after
# its NEWKEYS, before the client's, goes out at once and reaches the
# client (patch 0003's ssh_packet_kex_holds_output()); the client does
# not guess on the first rekey, and stops guessing for good once the
# server drops a guess or its first algorithms change.
#
# Then real processes against a server that says it is OpenSSH but is not
# (regress/kex-paramiko.py, paramiko's, which like asyncssh's takes a
# guess RFC 4253 says to drop when the method it chooses is the client's
# first): our ssh and the stock twin download 16 MiB at RekeyLimit 1M,
# byte-exact, exit status 0 both.  Where the server's first method stays
# (steady), ours guesses and the server takes each guess; where it
# changes after the first KEXINIT (changed: the asyncssh case, where a
# guess made from the first KEXINIT failed the exchange with "incorrect
# signature"), ours never guesses; where only the KEXINIT that answers
# the first guess differs and the server drops that guess as the RFC says
# (drop), ours guesses once and not after it.
# The other real processes' guesses are t-rekey's and t-interop's.

. "`dirname "$0"`/lib.sh"

[ -f "$HPN_BUILD/libssh.a" ] || die "no libssh.a in $HPN_BUILD: run make first"
unit_libssh test_kex_guess "" 5

SSH="$HPN_BUILD/ssh"
if ! /usr/bin/python3 -c "import paramiko" 2>/dev/null; then
	skip kexpeer "no python3-paramiko"
	exit 0
fi
hpn_keys
DATA=`make_data 16777216`

# kexpeer MODE: start kex-paramiko.py in MODE; then our ssh and the stock
# twin download DATA from it (xfer_down), their stderr (-v) in
# $TESTDIR/err.MODE-hpn.down and err.MODE-stock.down, the server's log
# of its KEXINITs in $TESTDIR/kexpeer.MODE.log.
kexpeer() {
	rm -f "$TESTDIR/kexpeer.port"
	/usr/bin/python3 "$HPN_TOP/regress/kex-paramiko.py" $1 \
	    "$TESTDIR/kexpeer.port" "$TESTDIR/host_ed25519" \
	    "$TESTDIR/id_ed25519.pub" 2>"$TESTDIR/kexpeer.$1.log" &
	_py=$!
	hpn_track_pid $_py
	wait_until 20 test -s "$TESTDIR/kexpeer.port" ||
	    die "kex-paramiko.py did not start: `tail -n 1 "$TESTDIR/kexpeer.$1.log"`"
	SSHD_PORT=`cat "$TESTDIR/kexpeer.port"`
	_write_ssh_config kexpeer
	xfer_down $1-hpn "$SSH" "$DATA" -v -o RekeyLimit=1M
	xfer_down $1-stock "$STOCK_BUILD/ssh" "$DATA" -v -o RekeyLimit=1M
	kill $_py
	wait $_py 2>/dev/null
	hpn_untrack_pid $_py
}

# kexpeer_count MODE WHAT: how many lines of our ssh's log (-v) in MODE
# say WHAT.
kexpeer_count() {
	grep -c -- "$2" "$TESTDIR/err.$1-hpn.down"
}

# kexpeer_want NAME GOT WANT: pass if GOT is WANT ("N" or "N+": N or
# more).
kexpeer_want() {
	case "$3" in
	*+)	[ "$2" -ge "${3%+}" ] ;;
	*)	[ "$2" -eq "$3" ] ;;
	esac && pass "$1" || fail "$1" "$2, not $3"
}

GUESS="SSH2_MSG_KEXINIT guesses the key exchange"
NEWKEYS="SSH2_MSG_NEWKEYS received"

kexpeer steady
kexpeer_want steady-guesses `kexpeer_count steady "$GUESS"` 5+
kexpeer_want steady-taken `grep -c 'guess taken' \
    "$TESTDIR/kexpeer.steady.log"` `kexpeer_count steady "$GUESS"`

kexpeer changed
kexpeer_want changed-no-guess `kexpeer_count changed "$GUESS"` 0
check_has changed-noticed "$TESTDIR/err.changed-hpn.down" \
    "the server's first algorithms changed; no more guesses"
kexpeer_want changed-rekeys `kexpeer_count changed "$NEWKEYS"` 8+

kexpeer drop
kexpeer_want drop-one-guess `kexpeer_count drop "$GUESS"` 1
kexpeer_want drop-dropped `grep -c 'guess dropped' \
    "$TESTDIR/kexpeer.drop.log"` 1
check_has drop-noticed "$TESTDIR/err.drop-hpn.down" \
    "the server drops our guess; no more guesses"
kexpeer_want drop-rekeys `kexpeer_count drop "$NEWKEYS"` 8+
exit 0
