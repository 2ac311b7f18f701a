#!/bin/sh
#
# t-none.sh: None cipher switching (patch 0003).  The switch happens only
# after authentication, only when both sides opt in and only without a
# tty; a server that does not allow it (ours without NoneEnabled, Debian's
# stock sshd) keeps encrypting and the transfer still succeeds.

. "`dirname "$0"`/lib.sh"

SIZE=${HPN_XFER_BYTES:-67108864}
SSH="$HPN_BUILD/ssh"
NONE="-o NoneEnabled=yes -o NoneSwitch=yes"
WARN="WARNING: ENABLED NONE CIPHER"
WARNMAC="WARNING: ENABLED NONE MAC"
DATA=`make_data $SIZE`

# nlines PATTERN FILE: how many lines of FILE match PATTERN.
nlines() {
	grep -c -- "$1" "$2" 2>/dev/null || true
}

# upload NAME [SSH-ARGS...]: send $DATA with "cat >", check it byte for
# byte; the client's stderr is left in $TESTDIR/err.NAME.
upload() {
	_n="$1"
	shift
	rm -f "$TESTDIR/up.$_n"
	if ! "$SSH" -F "$SSH_CONFIG" "$@" hpntest "cat > $TESTDIR/up.$_n" \
	    <"$DATA" 2>"$TESTDIR/err.$_n"; then
		fail "$_n-upload" "ssh failed: `tail -n1 "$TESTDIR/err.$_n"`"
	elif _why=`same_file "$DATA" "$TESTDIR/up.$_n"`; then
		pass "$_n-upload"
	else
		fail "$_n-upload" "$_why"
	fi
	rm -f "$TESTDIR/up.$_n"
}

# download NAME [SSH-ARGS...]: the other way.
download() {
	_n="$1"
	shift
	rm -f "$TESTDIR/down.$_n"
	if ! "$SSH" -F "$SSH_CONFIG" "$@" hpntest "cat $DATA" \
	    >"$TESTDIR/down.$_n" 2>"$TESTDIR/err.$_n.down"; then
		fail "$_n-download" \
		    "ssh failed: `tail -n1 "$TESTDIR/err.$_n.down"`"
	elif _why=`same_file "$DATA" "$TESTDIR/down.$_n"`; then
		pass "$_n-download"
	else
		fail "$_n-download" "$_why"
	fi
	rm -f "$TESTDIR/down.$_n"
}

# expect NAME FILE PATTERN / refute NAME FILE PATTERN
expect() {
	if grep -q -- "$3" "$2"; then
		pass "$1"
	else
		fail "$1" "no '$3' in `basename "$2"`"
	fi
}
refute() {
	if grep -q -- "$3" "$2"; then
		fail "$1" "'`grep -- "$3" "$2" | head -n1`' in `basename "$2"`"
	else
		pass "$1"
	fi
}

# --- Hand-written KEXINIT proposals between two in-memory endpoints
# (regress/unit/test_none_kex.c, linked with the patched libssh): none is
# refused before authentication even when both sides ask for it.  The
# PKCS#11 client left libssh in 10.1p1: link its object like the SK one.
B="$HPN_BUILD"
if ${CC:-cc} -O2 -g -I"$B" -I"$B/openbsd-compat" -o "$TESTDIR/test_none_kex" \
    "$HPN_TOP/regress/unit/test_none_kex.c" "$B/ssh-sk-client.o" \
    "$B/ssh-pkcs11-client.o" \
    -L"$B" -L"$B/openbsd-compat" -lssh -lopenbsd-compat -lssh \
    -lopenbsd-compat -lcrypto -lz -lpthread >"$TESTDIR/cc.kex" 2>&1; then
	"$TESTDIR/test_none_kex" >"$TESTDIR/out.kex" 2>"$TESTDIR/err.kex"
	sed -n 's/^ok - \(.*\)/\1/p' "$TESTDIR/out.kex" | while read -r t; do
		pass "kex/$t"
	done
	sed -n 's/^not ok - \([^:]*\): \(.*\)/\1 \2/p' "$TESTDIR/out.kex" |
	    while read -r t why; do
		fail "kex/$t" "$why"
	done
	check kex-summary grep -q "^8 passed, 0 failed" "$TESTDIR/out.kex"
else
	fail kex-build "`grep -m1 error "$TESTDIR/cc.kex"`"
fi

# --- Options: ssh -G, sshd -T, bad values with their line number.
"$SSH" -G -F /dev/null host >"$TESTDIR/G.default" 2>/dev/null
if grep -qx "noneenabled no" "$TESTDIR/G.default" &&
    grep -qx "noneswitch no" "$TESTDIR/G.default" &&
    grep -qx "nonemacenabled no" "$TESTDIR/G.default"; then
	pass ssh-G-defaults
else
	fail ssh-G-defaults "`grep '^none' "$TESTDIR/G.default" | tr '\n' ' '`"
fi
printf 'Host other\n\tNoneSwitch no\nMatch host h1\n\tNoneEnabled yes\n\tNoneSwitch yes\n\tNoneMacEnabled yes\n' \
    >"$TESTDIR/ssh_config.opts"
"$SSH" -G -F "$TESTDIR/ssh_config.opts" h1 >"$TESTDIR/G.match" 2>/dev/null
if grep -qx "noneenabled yes" "$TESTDIR/G.match" &&
    grep -qx "noneswitch yes" "$TESTDIR/G.match" &&
    grep -qx "nonemacenabled yes" "$TESTDIR/G.match"; then
	pass ssh-G-match
else
	fail ssh-G-match "`grep '^none' "$TESTDIR/G.match" | tr '\n' ' '`"
fi
"$SSH" -G -F /dev/null -o NoneSwitch=yes host >"$TESTDIR/G.cmdline" 2>/dev/null
check ssh-G-cmdline grep -qx "noneswitch yes" "$TESTDIR/G.cmdline"
printf 'Host *\n\tNoneEnabled maybe\n' >"$TESTDIR/ssh_config.bad"
if "$SSH" -G -F "$TESTDIR/ssh_config.bad" host >/dev/null \
    2>"$TESTDIR/err.bad"; then
	fail ssh-bad-value "NoneEnabled maybe accepted"
else
	expect ssh-bad-value "$TESTDIR/err.bad" "line 2"
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
SshdSessionPath $_b/sshd-session
SshdAuthPath $_b/sshd-auth
EOF
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
	expect sshd-bad-value "$TESTDIR/err.sbad" "line 2"
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
	expect preauth-config-ciphers "$TESTDIR/err.cnone" "line 2"
fi
for kw in Ciphers MACs; do
	sed "s/^NoneEnabled yes/$kw none/" "$TESTDIR/sshd_config.T" \
	    >"$TESTDIR/sshd_config.$kw"
	if "$HPN_BUILD/sshd" -t -f "$TESTDIR/sshd_config.$kw" \
	    >/dev/null 2>"$TESTDIR/err.s$kw"; then
		fail "preauth-sshd-$kw" "sshd accepted $kw none"
	else
		expect "preauth-sshd-$kw" "$TESTDIR/err.s$kw" "line 2"
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
proposals "peer server" >"$TESTDIR/props.server"
proposals "local client" >"$TESTDIR/props.client"
if [ "`wc -l <"$TESTDIR/props.server"`" -eq 2 ] &&
    ! head -n1 "$TESTDIR/props.server" | grep -q "none" &&
    tail -n1 "$TESTDIR/props.server" | grep -q ",none$"; then
	pass proposal-server
else
	fail proposal-server "`tr '\n' ' ' <"$TESTDIR/props.server"`"
fi
if [ "`wc -l <"$TESTDIR/props.client"`" -eq 2 ] &&
    ! head -n1 "$TESTDIR/props.client" | grep -q "none" &&
    tail -n1 "$TESTDIR/props.client" | grep -q "^none,."; then
	pass proposal-client
else
	fail proposal-client "`tr '\n' ' ' <"$TESTDIR/props.client"`"
fi

# --- The switch: our client and server both opted in.
upload switch $NONE
download switch $NONE
expect switch-client-warning "$TESTDIR/err.switch" "$WARN"
refute switch-mac-kept "$TESTDIR/err.switch" "$WARNMAC"
expect switch-server-log "$SSHD_LOG" \
    "None cipher enabled for 127.0.0.1 port [0-9]*: data is not encrypted"
expect switch-server-kex "$SSHD_LOG" \
    "kex: client->server cipher: none MAC: [a-z]"
refute switch-server-mac "$SSHD_LOG" "cipher: none MAC: none"
refute switch-not-preauth "$SSHD_LOG" "cipher: none .*\[preauth\]"
if [ "`nlines 'kex: client->server cipher: none' "$SSHD_LOG"`" -eq 3 ]; then
	pass switch-each-connection
else
	fail switch-each-connection "want 3 kex with none, got `nlines \
	    'kex: client->server cipher: none' "$SSHD_LOG"`"
fi

# Only the client asked for the none MAC: the MAC stays.
upload mac-client-only $NONE -o NoneMacEnabled=yes
refute mac-client-only-kept "$TESTDIR/err.mac-client-only" "$WARNMAC"
expect mac-client-only-cipher "$TESTDIR/err.mac-client-only" "$WARN"
refute mac-client-only-server "$SSHD_LOG" "cipher: none MAC: none"

# A tty: the client does not switch, and says so.
nbefore=`nlines "None cipher enabled" "$SSHD_LOG"`
"$SSH" -F "$SSH_CONFIG" $NONE -tt hpntest 'tty; exit 0' \
    </dev/null >"$TESTDIR/out.tty" 2>"$TESTDIR/err.tty"
if grep -q "^/dev/" "$TESTDIR/out.tty"; then
	pass tty-session
else
	fail tty-session "no tty: `head -n1 "$TESTDIR/out.tty"`"
fi
expect tty-message "$TESTDIR/err.tty" "NoneSwitch: the session has a tty"
refute tty-no-warning "$TESTDIR/err.tty" "$WARN"
sleep 0.5
if [ "`nlines "None cipher enabled" "$SSHD_LOG"`" -eq $nbefore ]; then
	pass tty-no-switch
else
	fail tty-no-switch "server switched a tty session"
fi

# A ControlMaster that switched, then a mux client asking for a pty: the
# server refuses the pty; the session still runs and data still flows.
CTL="$TESTDIR/ctl"
"$SSH" -F "$SSH_CONFIG" $NONE -M -S "$CTL" -N hpntest </dev/null \
    2>"$TESTDIR/err.master" &
MASTER=$!
hpn_track_pid $MASTER
i=0
while [ $i -lt 100 ] && ! grep -q "$WARN" "$TESTDIR/err.master" 2>/dev/null; do
	sleep 0.1
	i=`expr $i + 1`
done
expect mux-master-switched "$TESTDIR/err.master" "$WARN"
"$SSH" -F "$SSH_CONFIG" -S "$CTL" -tt hpntest 'tty; exit 0' </dev/null \
    >"$TESTDIR/out.muxtty" 2>"$TESTDIR/err.muxtty"
expect mux-pty-refused "$SSHD_LOG" \
    "Refusing pty request from 127.0.0.1 port [0-9]*: the connection uses the none cipher"
if grep -q "^/dev/" "$TESTDIR/out.muxtty"; then
	fail mux-no-tty "got a tty over the none cipher"
else
	pass mux-no-tty
fi
upload mux -S "$CTL"
"$SSH" -F "$SSH_CONFIG" -S "$CTL" -O exit hpntest 2>/dev/null
wait $MASTER 2>/dev/null
stop_sshd

# Only the server allows the none MAC: the MAC stays.
start_sshd nonemac hpn "NoneEnabled yes" "NoneMacEnabled yes"
upload mac-server-only $NONE
expect mac-server-only-cipher "$TESTDIR/err.mac-server-only" "$WARN"
refute mac-server-only-kept "$TESTDIR/err.mac-server-only" "$WARNMAC"
refute mac-server-only-server "$SSHD_LOG" "cipher: none MAC: none"

# Both sides enabled the none MAC.
upload nonemac $NONE -o NoneMacEnabled=yes
expect nonemac-client-warning "$TESTDIR/err.nonemac" "$WARNMAC"
expect nonemac-server-kex "$SSHD_LOG" "kex: client->server cipher: none MAC: none"
expect nonemac-server-log "$SSHD_LOG" \
    "None MAC enabled for 127.0.0.1 port [0-9]*: data is not authenticated"

# scp and sftp over the switched connection, options from a config file
# (Host block and Match).
{
	printf 'Match originalhost hpntest\n\tNoneSwitch yes\n'
	sed 's/^Host hpntest/Host hpntest\n\tNoneEnabled yes/' "$SSH_CONFIG"
} >"$TESTDIR/ssh_config.files"
SSH_CONFIG="$TESTDIR/ssh_config.files"
n0=`nlines "None cipher enabled" "$SSHD_LOG"`
xfer_scp scp "$HPN_BUILD/scp" "$SSH" "$DATA"
xfer_sftp sftp "$HPN_BUILD/sftp" "$SSH" "$DATA"
n1=`nlines "None cipher enabled" "$SSHD_LOG"`
if [ $n1 -eq `expr $n0 + 3` ]; then
	pass scp-sftp-switched
else
	fail scp-sftp-switched "want 3 more switches, got `expr $n1 - $n0`"
fi
stop_sshd

# Rekeys after the switch keep the none cipher.
start_sshd rekey hpn "NoneEnabled yes"
upload rekey $NONE -o RekeyLimit=1M
download rekey $NONE -o RekeyLimit=1M
nk=`nlines 'kex: client->server cipher: none' "$SSHD_LOG"`
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
if [ "`nlines "None cipher enabled" "$SSHD_LOG"`" -eq 2 ]; then
	pass rekey-logged-once
else
	fail rekey-logged-once "the switch was logged more than once per connection"
fi
stop_sshd

# A server without NoneEnabled keeps encrypting.
start_sshd off hpn
upload off $NONE
download off $NONE
refute off-no-warning "$TESTDIR/err.off" "$WARN"
refute off-encrypted "$SSHD_LOG" "cipher: none"
if [ "`nlines 'kex: client->server cipher:' "$SSHD_LOG"`" -eq 4 ]; then
	pass off-rekeyed
else
	fail off-rekeyed "want 2 key exchanges per connection"
fi
stop_sshd

# Debian's stock sshd: same.
if have_progs "$SYS_SSHD"; then
	start_sshd system system
	upload system $NONE -v
	download system $NONE
	refute system-no-warning "$TESTDIR/err.system" "$WARN"
	expect system-offered "$TESTDIR/err.system" \
	    "NoneSwitch: rekeying to offer the none cipher"
	refute system-encrypted "$TESTDIR/err.system" "kex: server->client cipher: none"
	if [ "`nlines 'kex: client->server cipher:' "$TESTDIR/err.system"`" -ge 2 ]; then
		pass system-rekeyed
	else
		fail system-rekeyed "no key exchange after authentication"
	fi
	stop_sshd
else
	skip system "no $SYS_SSHD"
fi
exit 0
