#!/bin/sh
#
# t-nonemac.sh: the none MAC (patch 0002's NoneMacEnabled): only when
# both sides enable it, and only once the session's command was
# requested; then neither side lets the peer open anything new: an
# attacker on the path (regress/none-relay.py) injecting a session, an
# exec and a signal towards sshd and an agent channel towards ssh is
# refused, the command does not run and the upload arrives intact.  A
# ControlMaster without a session of its own keeps the MAC; scp and sftp
# switch cipher and MAC from a config file's Host and Match blocks.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-none.sh"

hpn_keys
CTL="$TESTDIR/ctl"
start_sshd none hpn "NoneEnabled yes"
# Only the client asked for the none MAC: the MAC stays.
xfer_up mac-client-only "$SSH" "$DATA" $NONE -o NoneMacEnabled=yes
check_has_not mac-client-only-kept "$TESTDIR/err.mac-client-only" "$WARNMAC"
check_has mac-client-only-cipher "$TESTDIR/err.mac-client-only" "$WARN"
check_has_not mac-client-only-server "$SSHD_LOG" "cipher: none MAC: none"
stop_sshd

# Only the server allows the none MAC: the MAC stays.
start_sshd nonemac hpn "NoneEnabled yes" "NoneMacEnabled yes"
xfer_up mac-server-only "$SSH" "$DATA" $NONE
check_has mac-server-only-cipher "$TESTDIR/err.mac-server-only" "$WARN"
check_has_not mac-server-only-kept "$TESTDIR/err.mac-server-only" "$WARNMAC"
check_has_not mac-server-only-server "$SSHD_LOG" "cipher: none MAC: none"

# Both sides enabled the none MAC.  It goes in a second key exchange,
# once the session's command was requested.
xfer_up nonemac "$SSH" "$DATA" $NONE -o NoneMacEnabled=yes -v
check_has nonemac-client-warning "$TESTDIR/err.nonemac" "$WARNMAC"
check_has nonemac-server-kex "$SSHD_LOG" "kex: client->server cipher: none MAC: none"
check_has nonemac-server-log "$SSHD_LOG" \
    "None MAC enabled for 127.0.0.1 port [0-9]*: data is not authenticated"
grep "kex: client->server cipher: none\|Sending command\|rekeying to offer" \
    "$TESTDIR/err.nonemac" | sed "s/^debug1: //" | tr -d "\r" \
    >"$TESTDIR/nonemac.order"
if sed -n 1p "$TESTDIR/nonemac.order" | grep -q "offer the none cipher$" &&
    sed -n 2p "$TESTDIR/nonemac.order" | grep -q "cipher: none MAC: [a-z]" &&
    ! sed -n 2p "$TESTDIR/nonemac.order" | grep -q "MAC: none" &&
    sed -n 3p "$TESTDIR/nonemac.order" | grep -q "^Sending command" &&
    sed -n 4p "$TESTDIR/nonemac.order" | grep -q "offer the none MAC$" &&
    sed -n 5p "$TESTDIR/nonemac.order" | grep -q "cipher: none MAC: none"; then
	pass nonemac-after-session
else
	fail nonemac-after-session "`tr '\n' '|' <"$TESTDIR/nonemac.order"`"
fi

# An attacker on the path of a connection with the none MAC
# (regress/none-relay.py as ProxyCommand): after the switch it injects,
# in clear, a CHANNEL_OPEN "session" (and an "exec" of "touch pwned" if
# sshd confirms it) and a "signal" KILL for the upload's command towards
# sshd, and an agent CHANNEL_OPEN towards ssh,
# which forwards an agent.  A ControlMaster sends no
# no-more-sessions@openssh.com, so only the none MAC guard stops the
# session.  The injected command must not run, both sides must refuse,
# and the real upload must arrive intact.
if [ -x /usr/bin/python3 ]; then
	"$HPN_BUILD/ssh-agent" -D -a "$TESTDIR/agent.sock" >/dev/null 2>&1 &
	hpn_track_pid $!
	wait_until 5 test -S "$TESTDIR/agent.sock"
	PWNED="$TESTDIR/pwned"
	RLOG="$TESTDIR/relay.log"
	: >"$RLOG"
	(
		SSH_AUTH_SOCK="$TESTDIR/agent.sock"
		export SSH_AUTH_SOCK
		xfer_up relay "$SSH" "$DATA" $NONE -o NoneMacEnabled=yes \
		    -c aes128-ctr -m hmac-sha2-256-etm@openssh.com \
		    -o ForwardAgent=yes \
		    -o ControlMaster=yes -o ControlPath="$TESTDIR/relay.ctl" \
		    -o ProxyCommand="/usr/bin/python3 $HPN_TOP/regress/none-relay.py %h %p $RLOG $PWNED"
	)
	# Give an injected command (on unpatched code) time to run.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "$PWNED" ] && break
		sleep 0.2
	done
	check_has relay-injected "$RLOG" "^open sent to server"
	if [ -e "$PWNED" ]; then
		fail relay-no-exec "the injected command ran"
	else
		pass relay-no-exec
	fi
	check_has relay-server-refused "$RLOG" "^server open-failure"
	check_has_not relay-server-no-confirm "$RLOG" "^server open-confirmation"
	check_has relay-server-log "$SSHD_LOG" "Refusing channel open \"session\" from 127.0.0.1 port [0-9]*: the connection uses the none MAC"
	# The KILL for the upload's command: refused (the upload is intact).
	check_has relay-signal-injected "$RLOG" "^signal sent to server"
	check_has relay-signal-refused "$SSHD_LOG" "Refusing session request \"signal\" from 127.0.0.1 port [0-9]*: the connection uses the none MAC"
	check_has relay-client-injected "$RLOG" "^open sent to client"
	check_has relay-client-refused "$RLOG" "^client open-failure"
	check_has_not relay-client-no-confirm "$RLOG" "^client open-confirmation"
	check_has relay-client-log "$TESTDIR/err.relay" "Refusing channel open \"auth-agent@openssh.com\" from [A-Z0-9.]* port [0-9]*: the connection uses the none MAC"
else
	skip relay "no /usr/bin/python3"
fi

# A ControlMaster without a session of its own (-N) keeps the MAC: its
# mux clients' sessions come later, and sshd would refuse them.
"$SSH" -F "$SSH_CONFIG" $NONE -o NoneMacEnabled=yes -M -S "$CTL" -N \
    hpntest </dev/null 2>"$TESTDIR/err.macmaster" &
MASTER=$!
hpn_track_pid $MASTER
wait_until 10 grep -q "$WARN" "$TESTDIR/err.macmaster"
mk=`log_mark`
xfer_up macmux "$SSH" "$DATA" -S "$CTL"
check_has_not macmux-mac-kept "$TESTDIR/err.macmaster" "$WARNMAC"
if ! log_has $mk "None MAC enabled"; then
	pass macmux-server-mac-kept
else
	fail macmux-server-mac-kept "the master dropped the MAC"
fi
"$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER 2>/dev/null
hpn_untrack_pid $MASTER

# scp and sftp over the switched connection, options from a config file
# (Host block and Match).
{
	printf 'Match originalhost hpntest\n\tNoneSwitch yes\n'
	sed 's/^Host hpntest/Host hpntest\n\tNoneEnabled yes\n\tNoneMacEnabled yes/' \
	    "$SSH_CONFIG"
} >"$TESTDIR/ssh_config.files"
SSH_CONFIG="$TESTDIR/ssh_config.files"
mk=`log_mark`
xfer_scp scp "$HPN_BUILD/scp" "$SSH" "$DATA"
xfer_sftp sftp "$HPN_BUILD/sftp" "$SSH" "$DATA"
n1=`log_count $mk "None cipher enabled"`
m1=`log_count $mk "None MAC enabled"`
if [ $n1 -eq 3 ] && [ $m1 -eq 3 ]; then
	pass scp-sftp-switched
else
	fail scp-sftp-switched "want 3 more switches of cipher and MAC, got \
$n1 and $m1"
fi
stop_sshd
exit 0
