#!/bin/sh
#
# t-resume.sh: verified resume (patch 0010: sftp-check.c, sftp-resume.c)
# ends byte for byte the source and moves only what differs: sftp's
# reget, reput, get -a and put -a, and scp -Z, against hashing servers
# good and bad.  Cut short is t-resumecut.sh's, over ssh t-resumessh.sh's.
#
#   Our sftp-server's check-file-handle and check-file-name, request by
#   request, against Python's hashlib (regress/sftp-checkfile.py): whole
#   files, ranges, blocks, the first known algorithm, the range cut at the
#   file's end, and the errors (a block under 256 bytes, no known
#   algorithm, too many blocks, a missing file, a directory, a file open
#   for writing).
#   Against regress/sftp-adversary.py hashing as the draft says
#   (checkfile=ok), also with short reads, replies in any order and
#   delays: a destination tree half copied (files absent, true starts of
#   their sources, starts with a byte changed, complete files, a file
#   of the full size with a run of zeros, as an interrupted download
#   leaves, and files of 70 and 60 MB with a good or bad second 32 MiB
#   range) resumed by each mode (sftp get -a -r, put -a -r, reget,
#   reput, scp -Z -r both ways, with -p, several arguments, a glob) ends
#   byte for byte its source, exits 0, names each file it found
#   different, and moves only what was missing: the server's log of READ
#   and WRITE data shows the 70 MB file sent from byte 50000000 and the
#   60 MB one from 32 MiB, no more.
#   A server that hashes other bytes (bad), fails (fail) or answers with
#   an algorithm not asked for (md5): the file is sent whole, exact.  One
#   that advertises hashing but cannot (unsup), or the adversary without
#   it: stock's resume, with a warning per file (the rest of stock's
#   behaviour is t-sftpadv's resume modes).
#   A file's data past its part flows while the part is compared.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"
. "$HPN_TOP/regress/lib-resume.sh"

# --- Our sftp-server's answers, request by request.
/usr/bin/python3 "$HPN_TOP/regress/sftp-checkfile.py" \
    "$HPN_BUILD/sftp-server" "$TESTDIR/cf" >"$TESTDIR/cf.out" 2>&1
while read -r _r _n _why; do
	case $_r in
	ok)	pass "server-${_n%:}" ;;
	fail)	fail "server-${_n%:}" "$_why" ;;
	*)	fail server-checkfile "$_r $_n $_why" ;;
	esac
done <"$TESTDIR/cf.out"
check server-checkfile-cases test `grep -c '^ok ' "$TESTDIR/cf.out"` -ge 25

# --- The source tree and a half-copied destination (partial).
make_src "$TESTDIR/src" 11 24 big

resume_checks() {
	check "$1-status" test "`cat "$TESTDIR/rc"`" -eq 0
	case $2 in
	sftp-reget|sftp-reput)
		check_same "$1-exact" "$SRC/big1" "$TESTDIR/dst/src/big1"
		;;
	scp-up-Zargs|scp-down-Zglob)
		# Top-level files only.
		mkdir -p "$TESTDIR/want"
		rm -rf "$TESTDIR/want/src" "$TESTDIR/got"
		mkdir "$TESTDIR/want/src" "$TESTDIR/got"
		cp "$SRC"/f* "$SRC"/big* "$TESTDIR/want/src/"
		cp "$TESTDIR/dst/src"/f* "$TESTDIR/dst/src"/big* \
		    "$TESTDIR/got/"
		same_tree "$1-exact" "$TESTDIR/want/src" "$TESTDIR/got"
		;;
	*-rap|*-Zp)
		same_tree "$1-exact" "$SRC" "$TESTDIR/dst/src" -p ;;
	*)
		same_tree "$1-exact" "$SRC" "$TESTDIR/dst/src" ;;
	esac
	case $2 in
	*-get-*|*-down-*|sftp-reget)	_p="$SRC" ;;
	*)				_p="$TESTDIR/dst/src" ;;
	esac
	check_moved "$1-big1-moved" "$TESTDIR/adv.log" "$_p/big1" \
	    50000000 20000000
	case $2 in
	sftp-reget|sftp-reput)	return ;;
	esac
	[ ! -f "$SRC/big2" ] ||
	    check_moved "$1-big2-moved" "$TESTDIR/adv.log" "$_p/big2" \
	    $R $(( 60000000 - R ))
	check_moved "$1-big3-moved" "$TESTDIR/adv.log" "$_p/big3" \
	    0 20000000
	check_has "$1-names-big3" "$TESTDIR/err" \
	    'big3": differs from the source: copying it whole'
	[ ! -f "$SRC/big2" ] ||
	    check_has "$1-names-big2" "$TESTDIR/err" \
	    "big2\": differs from the source after $R bytes"
	check_has_not "$1-no-warning" "$TESTDIR/err" "$UNVERIFIED"
}

MODES="sftp-get-ra sftp-put-ra sftp-get-rap sftp-reget sftp-reput
	scp-down-Z scp-up-Z scp-up-Zp scp-up-Zargs scp-down-Zglob"
SWITCHES="checkfile=ok checkfile=ok,reorder=16,short=8192,chunk=5
	checkfile=ok,delay=3,reorder=4"
if other_release; then
	MODES="sftp-get-ra sftp-put-ra scp-down-Z scp-up-Zp"
	SWITCHES="checkfile=ok,reorder=16,short=8192,chunk=5"
	echo "# $SUITE: one mix of switches, four modes on this release"
fi
for sw in $SWITCHES; do
	for m in $MODES; do
		resume_copy $m "$sw"
		resume_checks "$m/$sw" $m
	done
done

# Servers that hash wrongly: the file goes whole, exact.
for how in bad fail md5; do
	for m in sftp-reget scp-up-Z; do
		other_release && [ $m = scp-up-Z ] && continue
		resume_copy $m "checkfile=$how,reorder=8"
		n="$m/checkfile=$how"
		check "$n-status" test "`cat "$TESTDIR/rc"`" -eq 0
		case $m in
		sftp-reget)
			check_same "$n-exact" "$SRC/big1" \
			    "$TESTDIR/dst/src/big1"
			check_moved "$n-whole" "$TESTDIR/adv.log" "$SRC/big1" \
			    0 70000000
			;;
		*)
			same_tree "$n-exact" "$SRC" "$TESTDIR/dst/src" ;;
		esac
	done
done

# Servers that cannot hash: stock's resume and a warning per file.
for sw in checkfile=unsup seed=1; do
	resume_copy sftp-reget "$sw"
	check "unverified/$sw-status" test "`cat "$TESTDIR/rc"`" -eq 0
	check_same "unverified/$sw-exact" "$SRC/big1" "$TESTDIR/dst/src/big1"
	check_moved "unverified/$sw-moved" "$TESTDIR/adv.log" "$SRC/big1" \
	    50000000 20000000
	check_has "unverified/$sw-warns" "$TESTDIR/err" \
	    "big1\": $UNVERIFIED"
done

# A server that cannot hash the first range of a file but hashes the
# others (checkfile=unsupfirst): big2's part differs in its second
# range, and that difference wins: copied again from there, exact,
# where trusting the part left its changed byte.
if [ -f "$SRC/big2" ]; then
	resume_copy scp-down-Z checkfile=unsupfirst
	check_same "unsupfirst/big2-exact" "$SRC/big2" "$TESTDIR/dst/src/big2"
	check_has "unsupfirst/big2-said" "$TESTDIR/err" \
	    "big2\": differs from the source after $R bytes"
fi


# A file's data past its part flows while the part is compared: one
# file (big1, its first 50000000 bytes at the target) resumed by get -a
# -r and put -a -r; in sftp -vvv's lines, the first read or write from
# 50000000 is sent before the last reply to the part's hashes (two
# ranges) is in.
T1="$TESTDIR/t1"
for v in get put; do
	case $v in
	get)	first='Request range 50000000 ->' ;;
	put)	first='Sent message SSH2_FXP_WRITE I:[0-9]* O:50000000 ' ;;
	esac
	rm -rf "$T1"
	mkdir -p "$T1/src" "$T1/dst/src"
	ln "$SRC/big1" "$T1/src/big1"
	head -c 50000000 "$SRC/big1" >"$T1/dst/src/big1"
	echo "$v -a -r $T1/src $T1/dst" >"$TESTDIR/batch"
	HPN_ADVERSARY=checkfile=ok timeout -s INT -k 5 $ADV_TIMEOUT \
	    "$SFTP" -vvv -D "$ADV" -b "$TESTDIR/batch" >/dev/null \
	    2>"$TESTDIR/err"
	check "tail-first-$v-status" test $? -eq 0
	check_same "tail-first-$v-exact" "$SRC/big1" "$T1/dst/src/big1"
	_first=`grep -n "$first" "$TESTDIR/err" | head -n 1 | cut -d: -f1`
	_last=`grep -n 'Received reply T:201 ' "$TESTDIR/err" | tail -n 1 |
	    cut -d: -f1`
	if [ -n "$_first" ] && [ -n "$_last" ] &&
	    [ "$_first" -lt "$_last" ]; then
		pass "tail-first-$v-order"
	else
		fail "tail-first-$v-order" "its first data at line \
${_first:-none}, the last hash reply at line ${_last:-none}"
	fi
done
exit 0
