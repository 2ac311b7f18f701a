#!/bin/sh
#
# t-none.sh: None switching (patch 0002) can never happen before
# authentication.  Hand-written KEXINIT proposals between in-memory
# endpoints; the options in ssh -G and sshd -T and their bad values;
# none refused in every form before authentication, by ssh and sshd;
# the proposals of both sides offer none only after it.  When the switch
# happens is t-noneswitch.sh's, the none MAC t-nonemac.sh's.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-none.sh"

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
stop_sshd
exit 0
