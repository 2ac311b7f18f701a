#!/bin/sh
#
# t-docs.sh: every keyword our patches add to the readconf.c and
# servconf.c tables (servconf.h's since 10.4p1) is documented where a user
# looks for it: its own entry in ssh_config(5) / sshd_config(5), with its
# default; the -o list of ssh(1) (up to 10.3p1), scp(1) and sftp(1) for
# client keywords; README.hpn; and it is printed by ssh -G / sshd -T.
# The None cipher and MAC entries carry their security note.  README.hpn
# has at most 300 lines and names every note in docs/.  The other
# releases' series are in step with the default's (carry-series.sh -c).

. "`dirname "$0"`/lib.sh"

PATCHES=`sed -e 's/#.*//' "$HPN_PATCHDIR/series" |
    sed "s|^|$HPN_PATCHDIR/|"`

# Keywords from the added table lines: { "name", oName } is ssh_config,
# { "name", sName, SSHCFG_... } is sshd_config, or since 10.4p1 a line
# SSHCONF_INT(field, Name, SSHCFG_...) of servconf.h (also _INTFLAG, ...).
CLIENT=`cat $PATCHES | sed -n 's/^+[ 	]*{ "\([a-z0-9]*\)", o[A-Za-z0-9]* },*$/\1/p' |
    sort -u`
SERVER=`cat $PATCHES | {
    sed -n -e 's/^+[ 	]*{ "\([a-z0-9]*\)", s[A-Za-z0-9]*, SSHCFG_.*/\1/p' \
    -e 's/^+SSHCONF_[A-Z]*([a-z0-9_]*, \([A-Za-z0-9]*\), SSHCFG_.*/\1/p'; } |
    tr 'A-Z' 'a-z' | sort -u`
if [ -n "$CLIENT" ] && [ -n "$SERVER" ]; then
	pass "keywords-found-`echo $CLIENT | wc -w`-client-`echo $SERVER | wc -w`-server"
else
	fail keywords-found "no keywords found in the readconf/servconf hunks"
fi

# entry MANPAGE KEYWORD: the text of KEYWORD's ".It Cm" entry, one line.
entry() {
	awk -v k="$2" 'tolower($0) == ".it cm " k { p = 1; print; next }
		p && /^\.It Cm / { exit } p' "$1" | tr '\n' ' '
}

hpn_keys
"$HPN_BUILD/ssh" -G -F /dev/null host.example >"$TESTDIR/G" 2>&1 ||
    fail ssh-G "ssh -G failed: `tail -n 1 "$TESTDIR/G"`"
cat >"$TESTDIR/sshd_config" <<EOF
HostKey $TESTDIR/host_ed25519
EOF
# sshd -T prints lower-case keywords before 10.5p1, mixed case since.
"$HPN_BUILD/sshd" -T -f "$TESTDIR/sshd_config" >"$TESTDIR/T.raw" 2>&1 ||
    fail sshd-T "sshd -T failed: `tail -n 1 "$TESTDIR/T.raw"`"
awk '{ $1 = tolower($1); print }' "$TESTDIR/T.raw" >"$TESTDIR/T"

# check_keyword SIDE KEYWORD MANPAGE DUMPFILE DUMPNAME
check_keyword() {
	_k="$2"
	_e=`entry "$HPN_BUILD/$3" "$_k"`
	if [ -z "$_e" ]; then
		fail "$1-$_k-manpage" "no .It Cm entry in $3"
		return
	fi
	_name=`printf "%s\n" "$_e" | sed 's/^\.It Cm \([A-Za-z0-9]*\).*/\1/'`
	pass "$1-$_k-manpage"
	case "$_e" in
	*default*) pass "$1-$_k-default-documented" ;;
	*) fail "$1-$_k-default-documented" "$3 entry for $_name gives no default" ;;
	esac
	check_has "$1-$_k-$5" "$4" "^$_k "
	check_has "$1-$_k-readme" "$HPN_TOP/README.hpn" "\<$_name\>"
	case "$_k" in
	none*)
		case "$_e" in
		*"anyone on the path"*) pass "$1-$_k-security-note" ;;
		*) fail "$1-$_k-security-note" "$3 entry for $_name does not say who can read or alter the data" ;;
		esac ;;
	esac
}

for k in $CLIENT; do
	check_keyword client "$k" ssh_config.5 "$TESTDIR/G" ssh-G
	name=`entry "$HPN_BUILD/ssh_config.5" "$k" |
	    sed 's/^\.It Cm \([A-Za-z0-9]*\).*/\1/'`
	for m in ssh.1 scp.1 sftp.1; do
		# ssh(1) lost its -o list in 10.5p1.
		if ! grep -qx '\.It AddressFamily' "$STOCK_BUILD/$m"; then
			skip "client-$k-o-list-$m" "$m of this release has no -o list"
		elif [ -n "$name" ] && grep -qx "\.It $name" "$HPN_BUILD/$m"; then
			pass "client-$k-o-list-$m"
		else
			fail "client-$k-o-list-$m" "$m's -o list lacks ${name:-$k}"
		fi
	done
done
for k in $SERVER; do
	check_keyword server "$k" sshd_config.5 "$TESTDIR/T" sshd-T
done

# README.hpn has a security section for the None cipher and MAC.
if awk '/^Security/ { p = 1 } p' "$HPN_TOP/README.hpn" | head -n 40 |
    grep -q 'NoneMacEnabled'; then
	pass readme-security-notes
else
	fail readme-security-notes "README.hpn has no Security section on the none cipher and MAC"
fi

# README.hpn stays short, and names every note in docs/ (and no other).
n=`wc -l <"$HPN_TOP/README.hpn"`
if [ "$n" -le 300 ]; then
	pass readme-short
else
	fail readme-short "README.hpn has $n lines, more than 300"
fi
named=`sed -n 's/^    \([a-z0-9-]*\.md\)  .*/\1/p' "$HPN_TOP/README.hpn" | sort`
there=`cd "$HPN_TOP/docs" && ls *.md | sort`
if [ -n "$named" ] && [ "x$named" = "x$there" ]; then
	pass readme-names-docs
else
	fail readme-names-docs "README.hpn names `echo $named`; docs/ has `echo $there`"
fi

# Groff finds nothing wrong in the pages we touched.
if command -v groff >/dev/null 2>&1; then
	for m in ssh_config.5 sshd_config.5 ssh.1 scp.1 sftp.1; do
		w=`groff -mandoc -ww -z "$HPN_BUILD/$m" 2>&1 | head -n 3`
		if [ -z "$w" ]; then
			pass "groff-$m"
		else
			fail "groff-$m" "$w"
		fi
	done
else
	skip groff "groff is not installed"
fi

# The series in step: each other release's patches/R/carried names the
# default series' patches as they are (build-aux/carry-series.sh -c).
default_release_only "the series in step" ||
	check series-in-step sh "$HPN_TOP/build-aux/carry-series.sh" -c

exit 0
