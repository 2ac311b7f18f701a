#!/bin/sh
#
# lib-resume.sh: what the verified resume suites share (t-resume.sh,
# t-resumecut.sh, t-resumessh.sh), sourced after lib.sh and lib-sftp.sh.
# A tree without patch 0010 skips the suite here.
#
#   make_src DIR SMALL-DIRS SMALL-FILES [big]   the source tree ($SRC)
#   flip FILE OFFSET        one byte changed
#   partial DIR             what an interrupted copy of $SRC left
#   moved / check_moved     what the adversary's log says was moved
#   same_tree               two trees the same (-p: modes, times)
#   resume_copy MODE SW     the patched client resumes against the adversary

grep -q 'sftp-resume' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip resume "the tree under test has no patch 0010"
	exit 0
}
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
SSH="$HPN_BUILD/ssh"
UNVERIFIED='resuming unverified, from its size: the server cannot hash'
R=33554432	# SFTP_RESUME_RANGE

# make_src DIR NDIRS NFILES [big]: the source tree in DIR (SRC), of
# adversary-made small files, with big: files of 70, 60 (default release
# only) and 20 MB.
make_src() {
	SRC="$1"
	rm -rf "$SRC"
	/usr/bin/python3 "$ADV" tree "$SRC" $2 $3 ||
	    die "cannot make the test tree"
	[ "${4:-}" = big ] || return 0
	head -c 70000000 /dev/urandom >"$SRC/big1"
	head -c 60000000 /dev/urandom >"$SRC/big2"
	head -c 20000000 /dev/urandom >"$SRC/big3"
	other_release && rm -f "$SRC/big2"
	return 0
}

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
