#!/bin/sh
#
# t-noneswitch.sh: when None switching (patch 0002) happens, and that
# every byte still arrives: only when both sides opt in and only without
# a tty; the mux clients of a switched ControlMaster are warned and get
# no tty; busy ControlMasters on a server that rekeys all the time give
# every pty session its tty; rekeys keep none; a server that does not
# allow it (ours without NoneEnabled, Debian's sshd) keeps encrypting.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-none.sh"

hpn_keys
start_sshd none hpn "NoneEnabled yes"
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
if [ "`log_count 0 'kex: client->server cipher: none'`" -eq 2 ]; then
	pass switch-each-connection
else
	fail switch-each-connection "want 2 kex with none, got `log_count 0 \
	    'kex: client->server cipher: none'`"
fi

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
