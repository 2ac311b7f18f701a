#!/bin/sh
#
# t-resume.sh: verified resume (patch 0010: sftp-check.c, sftp-resume.c):
# sftp's reget, reput, get -a and put -a, and scp -Z.
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
#   Over ssh to our sshd (sftp-server and internal-sftp), a 64 MiB file:
#   reget and reput of a true 48 MiB start move about 16 MiB (ssh -v's
#   byte count), of a start bad in its second range about 32 MiB; scp
#   -Z both ways the same; an scp download killed in mid-copy (SIGKILL:
#   its file may have holes) and resumed with -Z ends exact.  Against
#   Debian's sshd (its sftp-server cannot hash): the warning, and stock's
#   result.  scp -Z with -O, or between two local files: an error.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"

grep -q 'sftp-resume' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip resume "the tree under test has no patch 0010"
	exit 0
}
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
SSH="$HPN_BUILD/ssh"
UNVERIFIED='resuming unverified, from its size: the server cannot hash'

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

# --- The source tree and a half-copied destination.
R=33554432	# SFTP_RESUME_RANGE
SRC="$TESTDIR/src"
rm -rf "$SRC"
/usr/bin/python3 "$ADV" tree "$SRC" 11 24 || die "cannot make the test tree"
head -c 70000000 /dev/urandom >"$SRC/big1"
head -c 60000000 /dev/urandom >"$SRC/big2"
head -c 20000000 /dev/urandom >"$SRC/big3"
other_release && rm -f "$SRC/big2"

# flip FILE OFFSET: one byte of FILE at OFFSET changed.
flip() {
	_b=`dd if="$1" bs=1 skip=$2 count=1 status=none | od -An -tu1 |
	    tr -d ' '`
	printf "\\$(printf %03o $(( (${_b:-0} + 1) % 256 )))" |
	    dd of="$1" bs=1 seek=$2 conv=notrunc status=none
}

# partial DIR: DIR/src, what an interrupted copy of $SRC left.  Of the
# small files, in order: absent, a true start (half), a start with its
# first byte changed, complete.  big1: its first 50000000 bytes; big2:
# 40000000 bytes, one changed at 35000000 (in the second range); big3:
# its full size with 1 MB of zeros at 5000000 (where $SRC has them).
partial() {
	rm -rf "$1"
	mkdir -p "$1/src"
	(cd "$SRC" && find . -type d) | (cd "$1/src" && xargs mkdir -p)
	_i=0
	(cd "$SRC" && find . -type f ! -name 'big*' | LC_ALL=C sort) |
	    while read -r _f; do
		_s=`wc -c <"$SRC/$_f"`
		case $(( _i % 4 )) in
		1)	head -c $(( _s / 2 )) "$SRC/$_f" >"$1/src/$_f" ;;
		2)	head -c $(( _s / 2 )) "$SRC/$_f" >"$1/src/$_f"
			[ "$_s" -lt 2 ] || flip "$1/src/$_f" 0 ;;
		3)	cp "$SRC/$_f" "$1/src/$_f" ;;
		esac
		_i=$(( _i + 1 ))
	done
	[ -f "$SRC/big1" ] || return 0
	head -c 50000000 "$SRC/big1" >"$1/src/big1"
	if [ -f "$SRC/big2" ]; then
		head -c 40000000 "$SRC/big2" >"$1/src/big2"
		flip "$1/src/big2" 35000000
	fi
	cp "$SRC/big3" "$1/src/big3"
	dd if=/dev/zero of="$1/src/big3" bs=1000000 seek=5 count=1 \
	    conv=notrunc status=none
}

# moved LOG PATH: "FIRST SUM" of the data lines of the adversary's LOG
# for PATH: the lowest offset and the bytes read or written.
moved() {
	awk -v p="$2" '$1 == "data" && $2 == p {
		if (!n || $3 < m) m = $3; s += $4; n++ }
	    END { print (n ? m : "none"), s + 0 }' "$1"
}

# check_moved NAME LOG PATH FIRST SUM
check_moved() {
	_m=`moved "$2" "$3"`
	if [ "$_m" = "$4 $5" ]; then
		pass "$1"
	else
		fail "$1" "moved (first offset, bytes) $_m, want $4 $5"
	fi
}

# same_tree NAME A B [-p]: the files of A and B the same (with -p, their
# modes and modification times too).
same_tree() {
	if ! _d=`diff -r "$2" "$3" 2>&1`; then
		fail "$1" "`echo "$_d" | head -n 2 | tr '\n' ' '`"
		return
	fi
	if [ "${4:-}" = -p ]; then
		(cd "$2" && find . -type f -exec stat -c '%n %a %Y' {} + |
		    LC_ALL=C sort) >"$TESTDIR/st.a"
		(cd "$3" && find . -type f -exec stat -c '%n %a %Y' {} + |
		    LC_ALL=C sort) >"$TESTDIR/st.b"
		if ! cmp -s "$TESTDIR/st.a" "$TESTDIR/st.b"; then
			fail "$1" "modes or times: `diff "$TESTDIR/st.a" \
			    "$TESTDIR/st.b" | grep '^[<>]' | head -n 2 |
			    tr '\n' ' '`"
			return
		fi
	fi
	pass "$1"
}

# resume_copy MODE SWITCHES: the patched client resumes into
# $TESTDIR/dst (made by partial, unless KEEP_DST is set) in MODE
# against the adversary with SWITCHES; exit status in rc, messages in
# err, the server's log in adv.log.
resume_copy() {
	_d="$TESTDIR/dst"
	[ -n "${KEEP_DST:-}" ] || partial "$_d"
	: >"$TESTDIR/adv.log"
	_sftp=""
	set -- "$1" "$2,log=$TESTDIR/adv.log" "$SCP" -q -D "$ADV"
	case $1 in
	sftp-get-ra)	_sftp="get -a -r $SRC $_d" ;;
	sftp-put-ra)	_sftp="put -a -r $SRC $_d" ;;
	sftp-get-rap)	_sftp="get -a -r -p $SRC $_d" ;;
	sftp-reget)	_sftp="reget $SRC/big1 $_d/src/big1" ;;
	sftp-reput)	_sftp="reput $SRC/big1 $_d/src/big1" ;;
	scp-down-Z)	set -- "$@" -Z -r "x:$SRC" "$_d" ;;
	scp-up-Z)	set -- "$@" -Z -r "$SRC" "x:$_d" ;;
	scp-up-Zp)	set -- "$@" -Z -r -p "$SRC" "x:$_d" ;;
	scp-up-Zargs)	set -- "$@" -Z "$SRC"/f* "$SRC"/big* "x:$_d/src/" ;;
	scp-down-Zglob)	set -- "$@" -Z "x:$SRC/[fb]*" "$_d/src/" ;;
	*)		die "resume_copy: no mode $1" ;;
	esac
	if [ -n "$_sftp" ]; then
		echo "$_sftp" >"$TESTDIR/batch"
		HPN_ADVERSARY="$2" timeout -s INT -k 5 $ADV_TIMEOUT \
		    "$SFTP" -D "$ADV" -b "$TESTDIR/batch" \
		    >"$TESTDIR/out" 2>"$TESTDIR/err"
	else
		_sw="$2"
		shift 2
		HPN_ADVERSARY="$_sw" timeout -s INT -k 5 $ADV_TIMEOUT \
		    "$@" >"$TESTDIR/out" 2>"$TESTDIR/err"
	fi
	echo $? >"$TESTDIR/rc"
}

# resume_checks NAME MODE: after resume_copy with checkfile=ok.
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

# --- Many files at once (0007's engine), cut short, then resumed again.
# Each resumed file is compared while other files' data flows; a
# connection lost or an interrupt at any point (the listing, the hashes,
# the opens, the data) must leave each complete file complete, a
# downloaded file with no byte that is neither its source's nor its own
# before and never at full size unless whole, and an uploaded one as it
# was, a true start of its source, or named in an error line
# (regress/resume-lossless.py); the same command once more then ends
# byte for byte the source, exit status 0 (after some of the drops).
# The tree is a small one ($TESTDIR/c/src: 16 files in 5 directories,
# 3 MB), so that the drops sweep every phase in seconds: the listing
# takes the first 70-odd requests (READDIRs go ahead), each file's open,
# hashes and reads the rest.  Two faults show only in a window, each
# checked by putting it in: a complete file cut by a drop during its
# hashes at drops 76-86 (the guard that keeps its size taken out: the
# lost connection truncated it at 0), a full-size file with a changed
# byte at 86-118 (the cut back to the differing range taken out); hence
# the drops 6, 22 ... 118.

# resume_cut NAME MODE SWITCHES [INT|AGAIN]: resume_copy in MODE with
# SWITCHES (a drop=, or with INT a delay and SIGINT to sftp once data
# flows), the checks above, then (INT or AGAIN) MODE again.
resume_cut() {
	partial "$TESTDIR/cutbefore"
	if [ "${4:-}" = INT ]; then
		resume_copy "$2" "$3" &
		_pid=$!
		hpn_track_pid $_pid
		wait_until 30 grep -qs '^data ' "$TESTDIR/adv.log"
		sleep 0.3
		sftp_interrupt $_pid
		wait $_pid
		hpn_untrack_pid $_pid
	else
		resume_copy "$2" "$3"
	fi
	echo "# $1: exit status `cat "$TESTDIR/rc"`"
	check_has_not "$1-no-fatal" "$TESTDIR/err" 'fatal\|left unfinished'
	# resume_copy made dst/ as partial made cutbefore/.
	case $2 in
	*-get-*|*-down-*)	_way=down ;;
	*)			_way=up ;;
	esac
	if _why=`/usr/bin/python3 "$HPN_TOP/regress/resume-lossless.py" \
	    $_way "$SRC" "$TESTDIR/cutbefore/src" "$TESTDIR/dst/src" \
	    "$TESTDIR/err"`; then
		pass "$1-lossless"
	else
		fail "$1-lossless" "$_why"
	fi
	[ -n "${4:-}" ] || return 0
	KEEP_DST=1 resume_copy "$2" checkfile=ok,short=20000
	check "$1-again-status" test "`cat "$TESTDIR/rc"`" -eq 0
	same_tree "$1-again-exact" "$SRC" "$TESTDIR/dst/src"
}

CUT_MODES="sftp-get-ra sftp-put-ra scp-down-Z scp-up-Z"
CUT_DROPS=`seq 6 16 118`
if other_release; then
	CUT_MODES="sftp-get-ra scp-up-Z"
fi
SRC_ALL="$SRC"
SRC="$TESTDIR/c/src"
/usr/bin/python3 "$ADV" tree "$SRC" 5 16 || die "cannot make the test tree"
for m in $CUT_MODES; do
	for n in $CUT_DROPS; do
		a=""
		[ $(( n % 32 )) -ne 6 ] || a=AGAIN
		resume_cut "cut/$m/drop=$n" $m \
		    "checkfile=ok,reorder=8,short=20000,drop=$n" $a
	done
done
for m in sftp-get-ra sftp-put-ra; do
	other_release && [ $m = sftp-put-ra ] && continue
	resume_cut "cut/$m/interrupt" $m "checkfile=ok,delay=40,short=30000" \
	    INT
done
SRC="$SRC_ALL"

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

# --- Over ssh.
if default_release_only "resume over ssh"; then
	:
else
	DATA=`make_data 67108864`
	# received LOG / sent LOG: ssh -v's byte counts.
	received() {
		sed -n 's/.*Transferred: sent [0-9]*, received \([0-9]*\) bytes.*/\1/p' \
		    "$1" | tail -n 1
	}
	sent() {
		sed -n 's/.*Transferred: sent \([0-9]*\), received.*/\1/p' \
		    "$1" | tail -n 1
	}
	# check_bytes NAME COUNT LOW HIGH
	check_bytes() {
		if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
			pass "$1"
			echo "# $1: $2 bytes"
		else
			fail "$1" "${2:-no} bytes on the wire, want $3 to $4"
		fi
	}
	M=1048576
	T="$TESTDIR/t"
	for sub in sftp-server internal-sftp; do
		case $sub in
		sftp-server)	start_sshd lo hpn ;;
		*)		start_sshd lo hpn "Subsystem sftp internal-sftp" ;;
		esac
		# sftp reget and reput: a true 48 MiB start, then one bad in
		# its second range.
		for how in good bad; do
			head -c $(( 48 * M )) "$DATA" >"$T.down"
			head -c $(( 48 * M )) "$DATA" >"$T.up"
			if [ $how = bad ]; then
				flip "$T.down" $(( 40 * M ))
				flip "$T.up" $(( 40 * M ))
				lo=$(( 32 * M )); hi=$(( 34 * M ))
			else
				lo=$(( 16 * M )); hi=$(( 18 * M ))
			fi
			n="ssh-$sub-$how"
			for c in "reget down received" "reput up sent"; do
				set -- $c
				echo "$1 $DATA $T.$2" >"$TESTDIR/batch"
				"$SFTP" -v -S "$SSH" -F "$SSH_CONFIG" -b \
				    "$TESTDIR/batch" hpntest >/dev/null \
				    2>"$TESTDIR/e"
				check_copy "$n-$1" sftp $? "$TESTDIR/e" \
				    "$DATA" "$T.$2"
				check_bytes "$n-$1-bytes" \
				    "`$3 "$TESTDIR/e"`" $lo $hi
			done
			[ $how = good ] || check_has "$n-named" "$TESTDIR/e" \
			    "t.up\": differs from the source after $(( 32 * M ))"
		done
		stop_sshd
	done

	# scp -Z both ways, then an scp download killed in mid-copy.
	start_sshd lo hpn
	head -c $(( 48 * M )) "$DATA" >"$T.down"
	head -c $(( 48 * M )) "$DATA" >"$T.up"
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "hpntest:$DATA" "$T.down" \
	    2>"$TESTDIR/e"
	check_copy scp-Z-down scp $? "$TESTDIR/e" "$DATA" "$T.down"
	check_bytes scp-Z-down-bytes "`received "$TESTDIR/e"`" \
	    $(( 16 * M )) $(( 18 * M ))
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "$DATA" "hpntest:$T.up" \
	    2>"$TESTDIR/e"
	check_copy scp-Z-up scp $? "$TESTDIR/e" "$DATA" "$T.up"
	check_bytes scp-Z-up-bytes "`sent "$TESTDIR/e"`" \
	    $(( 16 * M )) $(( 18 * M ))

	# size_at_least FILE N: FILE has N bytes or more.
	size_at_least() {
		[ "`stat -c %s "$1" 2>/dev/null || echo 0`" -ge "$2" ]
	}
	rm -f "$T.killed"
	"$SCP" -q -l 80000 -S "$SSH" -F "$SSH_CONFIG" "hpntest:$DATA" \
	    "$T.killed" 2>/dev/null &
	kpid=$!
	hpn_track_pid $kpid
	wait_until 30 size_at_least "$T.killed" $(( 8 * M ))
	for p in `descendants $kpid` $kpid; do
		kill -KILL $p 2>/dev/null
	done
	wait $kpid 2>/dev/null
	hpn_untrack_pid $kpid
	got=`stat -c %s "$T.killed" 2>/dev/null || echo 0`
	if [ "$got" -ge $(( 8 * M )) ] && [ "$got" -lt $(( 64 * M )) ]; then
		pass scp-killed-partial
		echo "# scp-killed-partial: $got bytes left"
	else
		fail scp-killed-partial "$got bytes left by the killed scp"
	fi
	"$SCP" -v -Z -S "$SSH" -F "$SSH_CONFIG" "hpntest:$DATA" "$T.killed" \
	    2>"$TESTDIR/e"
	check_copy scp-killed-resumed scp $? "$TESTDIR/e" "$DATA" "$T.killed"
	check_bytes scp-killed-resumed-bytes "`received "$TESTDIR/e"`" \
	    $(( 64 * M - got )) $(( 64 * M - got + 34 * M ))
	stop_sshd

	# Debian's sshd: its sftp-server cannot hash.
	if [ -x "${SYS_SSHD:-/nonexistent}" ]; then
		start_sshd sys system
		head -c $(( 48 * M )) "$DATA" >"$T.down"
		echo "reget $DATA $T.down" >"$TESTDIR/batch"
		"$SFTP" -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" \
		    hpntest >/dev/null 2>"$TESTDIR/e"
		check_copy system-reget sftp $? "$TESTDIR/e" "$DATA" "$T.down"
		check_has system-reget-warns "$TESTDIR/e" "$UNVERIFIED"
		stop_sshd
	else
		skip system-reget "no Debian sshd"
	fi
fi

# --- scp -Z where it cannot resume.
"$SCP" -O -Z "$SRC/big3" "$TESTDIR/zz" 2>"$TESTDIR/e"
check scp-Z-O-status test $? -eq 255
check_has scp-Z-O-says "$TESTDIR/e" '\-Z needs the SFTP protocol'
"$SCP" -Z "$SRC/big3" "$TESTDIR/zz" 2>"$TESTDIR/e"
check scp-Z-local-status test $? -eq 1
check_has scp-Z-local-says "$TESTDIR/e" '\-Z cannot resume a local copy'
check scp-Z-local-nothing test ! -e "$TESTDIR/zz"
