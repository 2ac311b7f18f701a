#!/bin/sh
#
# t-none.sh: None cipher switching (patch 0002).  The switch happens only
# after authentication, only when both sides opt in and only without a
# tty; a server that does not allow it (ours without NoneEnabled, Debian's
# stock sshd) keeps encrypting and the transfer still succeeds.  With the
# none MAC, neither side lets the peer open anything new.

. "`dirname "$0"`/lib.sh"

SIZE=${HPN_XFER_BYTES:-$XFER}
SSH="$HPN_BUILD/ssh"
NONE="-o NoneEnabled=yes -o NoneSwitch=yes"
WARN="WARNING: ENABLED NONE CIPHER"
WARNMAC="WARNING: ENABLED NONE MAC"
DATA=`make_data $SIZE`

# --- Hand-written KEXINIT proposals between two in-memory endpoints
# (regress/unit/test_none_kex.c, linked with the patched libssh): none is
# refused before authentication even when both sides ask for it; sshd's
# pty guard decides on the exchange's choice (a pty request that meets a
# rekey is granted when the client does not propose none, and then sshd
# never agrees to none); the none MAC freezes the connection.
unit_libssh test_none_kex kex/ 15

# --- Options: ssh -G, sshd -T, bad values with their line number.

# none_G NAME FILE LINE...: every LINE is a line of FILE (ssh -G's output),
# else fail NAME with its none* lines.
none_G() {
	_n="$1"
	_f="$2"
	shift 2
	for _l in "$@"; do
		if ! grep -qx "$_l" "$_f"; then
			fail "$_n" "`grep '^none' "$_f" | tr '\n' ' '`"
			return
		fi
	done
	pass "$_n"
}

"$SSH" -G -F /dev/null host >"$TESTDIR/G.default" 2>/dev/null
none_G ssh-G-defaults "$TESTDIR/G.default" "noneenabled no" "noneswitch no" \
    "nonemacenabled no"
printf 'Host other\n\tNoneSwitch no\nMatch host h1\n\tNoneEnabled yes\n\tNoneSwitch yes\n\tNoneMacEnabled yes\n' \
    >"$TESTDIR/ssh_config.opts"
"$SSH" -G -F "$TESTDIR/ssh_config.opts" h1 >"$TESTDIR/G.match" 2>/dev/null
none_G ssh-G-match "$TESTDIR/G.match" "noneenabled yes" "noneswitch yes" \
    "nonemacenabled yes"
"$SSH" -G -F /dev/null -o NoneSwitch=yes host >"$TESTDIR/G.cmdline" 2>/dev/null
check ssh-G-cmdline grep -qx "noneswitch yes" "$TESTDIR/G.cmdline"
printf 'Host *\n\tNoneEnabled maybe\n' >"$TESTDIR/ssh_config.bad"
if "$SSH" -G -F "$TESTDIR/ssh_config.bad" host >/dev/null \
    2>"$TESTDIR/err.bad"; then
	fail ssh-bad-value "NoneEnabled maybe accepted"
else
	check_has ssh-bad-value "$TESTDIR/err.bad" "line 2"
fi
if "$SSH" -G -F /dev/null -o NoneMacEnabled=sometimes host >/dev/null \
    2>"$TESTDIR/err.bad2"; then
	fail ssh-bad-value-cmdline "NoneMacEnabled sometimes accepted"
else
	pass ssh-bad-value-cmdline
fi

hpn_keys
_b="$HPN_BUILD"
cat >"$TESTDIR/sshd_config.T" <<EOF
HostKey $TESTDIR/host_ed25519
NoneEnabled yes
NoneMacEnabled yes
EOF
sshd_helper_paths "$_b" >>"$TESTDIR/sshd_config.T"
if "$HPN_BUILD/sshd" -T -f "$TESTDIR/sshd_config.T" >"$TESTDIR/T.out" \
    2>"$TESTDIR/T.err"; then
	# Mixed-case keywords since 10.5p1.
	if grep -qix "noneenabled yes" "$TESTDIR/T.out" &&
	    grep -qix "nonemacenabled yes" "$TESTDIR/T.out"; then
		pass sshd-T
	else
		fail sshd-T "`grep -i '^none' "$TESTDIR/T.out" | tr '\n' ' '`"
	fi
else
	fail sshd-T "sshd -T failed: `tail -n1 "$TESTDIR/T.err"`"
fi
printf 'HostKey %s\nNoneMacEnabled perhaps\n' "$TESTDIR/host_ed25519" \
    >"$TESTDIR/sshd_config.bad"
if "$HPN_BUILD/sshd" -t -f "$TESTDIR/sshd_config.bad" \
    >/dev/null 2>"$TESTDIR/err.sbad"; then
	fail sshd-bad-value "NoneMacEnabled perhaps accepted"
else
	check_has sshd-bad-value "$TESTDIR/err.sbad" "line 2"
fi

# none is never listed among the usable algorithms.
if "$SSH" -Q cipher | grep -qx none || "$SSH" -Q mac | grep -qx none; then
	fail query-not-listed "ssh -Q lists none"
else
	pass query-not-listed
fi

# --- none is never possible before authentication, whatever the server.
start_sshd none hpn "NoneEnabled yes"
for a in "-c none" "-c +none" "-m none" "-o Ciphers=none" "-o MACs=none"; do
	n=`echo "preauth$a" | tr -d ' =+-'`
	if "$SSH" -F "$SSH_CONFIG" $a hpntest true 2>"$TESTDIR/err.$n"; then
		fail "$n" "ssh $a connected"
	elif grep -qi "unknown\|bad" "$TESTDIR/err.$n"; then
		pass "$n"
	else
		fail "$n" "unclear error: `tail -n1 "$TESTDIR/err.$n"`"
	fi
done
printf 'Host hpntest\n\tCiphers none\n' >"$TESTDIR/ssh_config.cnone"
cat "$SSH_CONFIG" >>"$TESTDIR/ssh_config.cnone"
if "$SSH" -F "$TESTDIR/ssh_config.cnone" hpntest true \
    2>"$TESTDIR/err.cnone"; then
	fail preauth-config-ciphers "Ciphers none in a config connected"
else
	check_has preauth-config-ciphers "$TESTDIR/err.cnone" "line 2"
fi
for kw in Ciphers MACs; do
	sed "s/^NoneEnabled yes/$kw none/" "$TESTDIR/sshd_config.T" \
	    >"$TESTDIR/sshd_config.$kw"
	if "$HPN_BUILD/sshd" -t -f "$TESTDIR/sshd_config.$kw" \
	    >/dev/null 2>"$TESTDIR/err.s$kw"; then
		fail "preauth-sshd-$kw" "sshd accepted $kw none"
	else
		check_has "preauth-sshd-$kw" "$TESTDIR/err.s$kw" "line 2"
	fi
done

# The proposals themselves: sshd offers none only after authentication,
# the client prefers it only then (ssh -vv prints every KEXINIT proposal).
"$SSH" -vv -F "$SSH_CONFIG" $NONE hpntest true 2>"$TESTDIR/err.props"
# proposals WHO: the "ciphers ctos" line of each KEXINIT proposal of WHO.
proposals() {
	awk -v who="$1" '/KEXINIT proposal/ { p = ($0 ~ who) }
	    p && /ciphers ctos:/ { sub(/.*ciphers ctos: /, ""); sub(/\r$/, "")
		print; p = 0 }' \
	    "$TESTDIR/err.props"
}
# two_proposals NAME FILE LAST: FILE has two proposals, the first without
# none, the second matching LAST.
two_proposals() {
	if [ "`wc -l <"$2"`" -eq 2 ] && ! head -n1 "$2" | grep -q "none" &&
	    tail -n1 "$2" | grep -q "$3"; then
		pass "$1"
	else
		fail "$1" "`tr '\n' ' ' <"$2"`"
	fi
}
proposals "peer server" >"$TESTDIR/props.server"
proposals "local client" >"$TESTDIR/props.client"
two_proposals proposal-server "$TESTDIR/props.server" ",none$"
two_proposals proposal-client "$TESTDIR/props.client" "^none,."

# --- The switch: our client and server both opted in.
xfer_up switch "$SSH" "$DATA" $NONE
xfer_down switch "$SSH" "$DATA" $NONE
check_has switch-client-warning "$TESTDIR/err.switch" "$WARN"
check_has_not switch-mac-kept "$TESTDIR/err.switch" "$WARNMAC"
check_has switch-server-log "$SSHD_LOG" \
    "None cipher enabled for 127.0.0.1 port [0-9]*: data is not encrypted"
check_has switch-server-kex "$SSHD_LOG" \
    "kex: client->server cipher: none MAC: [a-z]"
check_has_not switch-server-mac "$SSHD_LOG" "cipher: none MAC: none"
check_has_not switch-not-preauth "$SSHD_LOG" "cipher: none .*\[preauth\]"
if [ "`log_count 0 'kex: client->server cipher: none'`" -eq 3 ]; then
	pass switch-each-connection
else
	fail switch-each-connection "want 3 kex with none, got `log_count 0 \
	    'kex: client->server cipher: none'`"
fi

# Only the client asked for the none MAC: the MAC stays.
xfer_up mac-client-only "$SSH" "$DATA" $NONE -o NoneMacEnabled=yes
check_has_not mac-client-only-kept "$TESTDIR/err.mac-client-only" "$WARNMAC"
check_has mac-client-only-cipher "$TESTDIR/err.mac-client-only" "$WARN"
check_has_not mac-client-only-server "$SSHD_LOG" "cipher: none MAC: none"

# A tty: the client does not switch, and says so.
mk=`log_mark`
"$SSH" -F "$SSH_CONFIG" $NONE -tt hpntest 'tty; exit 0' \
    </dev/null >"$TESTDIR/out.tty" 2>"$TESTDIR/err.tty"
if grep -q "^/dev/" "$TESTDIR/out.tty"; then
	pass tty-session
else
	fail tty-session "no tty: `head -n1 "$TESTDIR/out.tty"`"
fi
check_has tty-message "$TESTDIR/err.tty" "NoneSwitch: the session has a tty"
check_has_not tty-no-warning "$TESTDIR/err.tty" "$WARN"
sleep 0.5
if ! log_has $mk "None cipher enabled"; then
	pass tty-no-switch
else
	fail tty-no-switch "server switched a tty session"
fi

# A ControlMaster that switched, then mux clients: each gets the warning
# on its own stderr; one asking for a pty gets none (the master does not
# even ask sshd) and is told why; the session still runs and data still
# flows.
CTL="$TESTDIR/ctl"
"$SSH" -F "$SSH_CONFIG" $NONE -M -S "$CTL" -N hpntest </dev/null \
    2>"$TESTDIR/err.master" &
MASTER=$!
hpn_track_pid $MASTER
wait_until 10 grep -q "$WARN" "$TESTDIR/err.master"
check_has mux-master-switched "$TESTDIR/err.master" "$WARN"
if "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest 'echo mux-ok' </dev/null \
    >"$TESTDIR/out.muxwarn" 2>"$TESTDIR/err.muxwarn" &&
    grep -qx mux-ok "$TESTDIR/out.muxwarn"; then
	pass mux-session
else
	fail mux-session "`tail -n1 "$TESTDIR/err.muxwarn"`"
fi
check_has mux-client-warning "$TESTDIR/err.muxwarn" "^$WARN"
mk=`log_mark`
if "$SSH" -F "$SSH_CONFIG" -S "$CTL" -tt hpntest 'tty; exit 0' </dev/null \
    >"$TESTDIR/out.muxtty" 2>"$TESTDIR/err.muxtty"; then
	pass mux-tty-session-runs
else
	fail mux-tty-session-runs "`tail -n1 "$TESTDIR/err.muxtty"`"
fi
if grep -q "^/dev/" "$TESTDIR/out.muxtty"; then
	fail mux-no-tty "got a tty over the none cipher"
else
	pass mux-no-tty
fi
check_has mux-tty-warning "$TESTDIR/err.muxtty" "$WARN"
check_has mux-tty-told "$TESTDIR/err.muxtty" \
    "NoneSwitch: the connection uses the none cipher, no tty for this session"
if ! log_has $mk "Refusing pty request"; then
	pass mux-tty-not-asked
else
	fail mux-tty-not-asked "the master asked sshd for a pty"
fi
xfer_up mux "$SSH" "$DATA" -S "$CTL"
"$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER 2>/dev/null
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

# A busy ControlMaster that did not switch, on a server with NoneEnabled
# whose RekeyLimit makes it rekey all the time: mux clients asking for a
# pty meet its key exchanges, which cannot pick none (the master does not
# propose it), so every one gets its tty.  Only the first pty request of
# a connection could meet the old refusal, hence several masters.
start_sshd ptyrekey hpn "NoneEnabled yes" "RekeyLimit 256K"
nok=0
nbad=0
for round in 1 2 3 4 5 6; do
	CTL="$TESTDIR/ctl.$round"
	"$SSH" -F "$SSH_CONFIG" -M -S "$CTL" -N hpntest </dev/null \
	    2>"$TESTDIR/err.ptymaster" &
	MASTER=$!
	hpn_track_pid $MASTER
	wait_until 10 test -S "$CTL"
	head -c 4000000000 /dev/zero |
	    "$SSH" -F "$SSH_CONFIG" -S "$CTL" hpntest 'cat >/dev/null' \
	    2>/dev/null &
	BUSY=$!
	hpn_track_pid $BUSY
	sleep 0.3
	for n in 1 2 3; do
		"$SSH" -F "$SSH_CONFIG" -S "$CTL" -tt hpntest 'tty; exit 0' \
		    </dev/null >"$TESTDIR/out.ptyrekey" 2>/dev/null
		if grep -q "^/dev/" "$TESTDIR/out.ptyrekey"; then
			nok=`expr $nok + 1`
		else
			nbad=`expr $nbad + 1`
		fi
	done
	kill $BUSY 2>/dev/null
	wait $BUSY 2>/dev/null
	hpn_untrack_pid $BUSY
	"$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
	wait $MASTER 2>/dev/null
	hpn_untrack_pid $MASTER
done
if [ $nbad -eq 0 ] && [ $nok -eq 18 ]; then
	pass ptyrekey-ttys
else
	fail ptyrekey-ttys "$nbad of 18 pty sessions got no tty"
fi
check_has_not ptyrekey-no-refusal "$SSHD_LOG" "Refusing pty"
nk=`log_count 0 'kex: client->server cipher:'`
if [ "$nk" -gt 30 ]; then
	pass ptyrekey-rekeyed
else
	fail ptyrekey-rekeyed "only $nk key exchanges"
fi
check_has_not ptyrekey-encrypted "$SSHD_LOG" "cipher: none"
stop_sshd

# Rekeys after the switch keep the none cipher.
start_sshd rekey hpn "NoneEnabled yes"
xfer_up rekey "$SSH" "$DATA" $NONE -o RekeyLimit=1M
xfer_down rekey "$SSH" "$DATA" $NONE -o RekeyLimit=1M
nk=`log_count 0 'kex: client->server cipher: none'`
if [ "$nk" -gt `expr $SIZE / 1048576` ]; then
	pass rekey-count
else
	fail rekey-count "only $nk key exchanges with none"
fi
grep "kex: client->server cipher:" "$SSHD_LOG" | grep -v "preauth" |
    grep -v "cipher: none MAC" >"$TESTDIR/rekey.other"
if [ -s "$TESTDIR/rekey.other" ]; then
	fail rekey-still-none "`head -n1 "$TESTDIR/rekey.other"`"
else
	pass rekey-still-none
fi
if [ "`log_count 0 "None cipher enabled"`" -eq 2 ]; then
	pass rekey-logged-once
else
	fail rekey-logged-once "the switch was logged more than once per connection"
fi
stop_sshd

# A server without NoneEnabled keeps encrypting.
start_sshd off hpn
xfer_up off "$SSH" "$DATA" $NONE
xfer_down off "$SSH" "$DATA" $NONE
check_has_not off-no-warning "$TESTDIR/err.off" "$WARN"
check_has_not off-encrypted "$SSHD_LOG" "cipher: none"
if [ "`log_count 0 'kex: client->server cipher:'`" -eq 4 ]; then
	pass off-rekeyed
else
	fail off-rekeyed "want 2 key exchanges per connection"
fi
stop_sshd

# Debian's stock sshd: same.
if have_progs "$SYS_SSHD"; then
	start_sshd system system
	xfer_up system "$SSH" "$DATA" $NONE -v
	xfer_down system "$SSH" "$DATA" $NONE
	check_has_not system-no-warning "$TESTDIR/err.system" "$WARN"
	check_has system-offered "$TESTDIR/err.system" \
	    "NoneSwitch: rekeying to offer the none cipher"
	check_has_not system-encrypted "$TESTDIR/err.system" "kex: server->client cipher: none"
	if [ "`log_count 0 'kex: client->server cipher:' "$TESTDIR/err.system"`" -ge 2 ]; then
		pass system-rekeyed
	else
		fail system-rekeyed "no key exchange after authentication"
	fi
	stop_sshd
else
	skip system "no $SYS_SSHD"
fi
exit 0
