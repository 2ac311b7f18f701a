#!/bin/sh
#
# t-sftpbatch.sh: scp -r, sftp put -r and get -r keep many files in
# flight (patch 0007, sftp-batch.c).
#
#   A tree of a few hundred files of mixed sizes (empty, one byte, exact
#   multiples of the request sizes, a few MiB), modes and times, in
#   nested directories with a symlink, goes up and down with scp -r -p and
#   sftp put -r -p / get -r -p: byte-exact, modes and times kept, the same
#   tree the unpatched client makes; the client's log shows several files
#   open at once.  The same against Debian's sshd and sftp-server,
#   paramiko's SFTP server (no limits extension, strictly in order) and
#   asyncssh's.
#   Errors: destination names that are directories make some files fail:
#   the same messages as the unpatched client, the other files copied,
#   a non-zero exit status.
#   The tree's top-level entries as separate arguments (scp's sources, a
#   glob for sftp's put and get and scp's download): the same, and the
#   same lines on sftp's output.
#   An interrupt (SIGINT to sftp) mid-transfer: every handle closed before
#   the session ends (internal-sftp logs none "forced").

. "`dirname "$0"`/lib.sh"

SSH="$HPN_BUILD/ssh"
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
[ -x "$SCP" ] && [ -x "$SFTP" ] || die "no scp or sftp in $HPN_BUILD"
grep -q 'sftp-batch' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip sftpbatch "the tree under test has no sftp-batch.c"
	exit 0
}

# make_tree DIR: the test tree.  Sizes around the request sizes: scp and
# sftp write 261120 bytes (32768 without the limits extension) and read
# what the server's limits say (261120 for OpenSSH's sftp-server).
make_tree() {
	mkdir -p "$1/a/b/c" "$1/empty" "$1/d"
	for s in 0 1 2 4095 4096 32767 32768 32769 65536 261119 261120 \
	    261121 522240 1048576 5242891; do
		head -c $s /dev/urandom >"$1/s.$s"
	done
	i=0
	while [ $i -lt 300 ]; do
		case $((i % 4)) in
		0)	d="$1" ;;
		1)	d="$1/a" ;;
		2)	d="$1/a/b" ;;
		3)	d="$1/a/b/c" ;;
		esac
		head -c $(( (i * 7919) % 70000 )) /dev/urandom >"$d/f.$i"
		case $((i % 5)) in
		0)	chmod 600 "$d/f.$i" ;;
		1)	chmod 755 "$d/f.$i" ;;
		2)	chmod 640 "$d/f.$i" ;;
		esac
		i=$((i + 1))
	done
	cp "$1/s.65536" "$1/d/x"
	ln -s s.4096 "$1/link"
	chmod 750 "$1/a/b"
	find "$1" -exec touch -h -d '2001-02-03 04:05:06' {} +
	touch -d '2011-12-13 14:15:16' "$1/s.1" "$1/a/f.1"
}

# tree_sig DIR [times]: one line per entry: path, type, mode, size, the
# start of the SHA-256 of a regular file (a symlink's target) and, with
# "times", the mtime of a file or directory.
tree_sig() {
	(cd "$1" && find . -type f -print0 | xargs -0 -r sha256sum) |
	    cut -c1-16,65- >"$TESTDIR/hashes"
	(cd "$1" && find . -mindepth 1 -printf '%y %p %m %s %T@ %l\n') |
	    awk -v times="${2:-}" -v hf="$TESTDIR/hashes" '
		BEGIN {
			while ((getline l < hf) > 0)
				h[substr(l, 19)] = substr(l, 1, 16)
		}
		$1 == "l" { print $2, "l - -", $6; next }
		{
			t = times == "times" ? " " int($5) : ""
			if ($1 == "d")
				print $2, "d", $3, "- -" t
			else
				print $2, "f", $3, $4, h[$2] t
		}' | LC_ALL=C sort
}

# check_tree NAME WANT-SIG DIR [times]: DIR's signature is WANT-SIG's.
check_tree() {
	tree_sig "$3" ${4:-} >"$TESTDIR/sig.got"
	if cmp -s "$2" "$TESTDIR/sig.got"; then
		pass "$1"
	else
		fail "$1" "`diff "$2" "$TESTDIR/sig.got" | grep '^[<>]' |
		    head -n 3 | tr '\n' ' '`"
	fi
}

# peak_open NAME LOG MIN: the batch had at least MIN files open at once.
peak_open() {
	_p=`sed -n 's/.*sftp_batch_finish: .* up to \([0-9]*\) open at once.*/\1/p' \
	    "$2" | sort -n | tail -n 1`
	check "$1" test "${_p:-0}" -ge "$3"
	echo "# $1: up to ${_p:-0} files open at once"
}

umask 022
SRC="$TESTDIR/src"
make_tree "$SRC"
tree_sig "$SRC" times >"$TESTDIR/sig.src.times"
tree_sig "$SRC" >"$TESTDIR/sig.src"

# xfer PROG DIR BUILD DST LOG [FLAG...]: PROG (scp or sftp) of BUILD copies
# $SRC up (to DST on the server) or down (from it to DST) with -r and
# FLAGs; the exit status in $TESTDIR/rc, sftp's output (-N: with its
# "Uploading", "Entering" lines) in LOG.out.  With ARGS=yes, the tree's
# top-level entries go as separate arguments: a shell glob for scp's
# upload, a remote one for its download and for sftp's put and get; DST
# is made first (sftp needs it; scp would make it).
xfer() {
	_p="$1"
	_d="$2"
	_b="$3"
	_dst="$4"
	_log="$5"
	shift 5
	_src="$SRC"
	if [ "${ARGS:-no}" = yes ]; then
		_src="$SRC/*"
		mkdir -p "$_dst"
	fi
	case $_p/$_d in
	scp/up)
		# shellcheck disable=SC2086
		"$_b/scp" -r "$@" -v -S "$_b/ssh" -F "$SSH_CONFIG" $_src \
		    "hpntest:$_dst" 2>"$_log"
		;;
	scp/down)
		"$_b/scp" -r "$@" -v -S "$_b/ssh" -F "$SSH_CONFIG" \
		    "hpntest:$_src" "$_dst" 2>"$_log"
		;;
	sftp/*)
		[ $_d = up ] && _c=put || _c=get
		echo "$_c -r $* $_src $_dst" >"$TESTDIR/batch"
		"$_b/sftp" -v -N -S "$_b/ssh" -F "$SSH_CONFIG" \
		    -b "$TESTDIR/batch" hpntest >"$_log.out" 2>"$_log"
		;;
	esac
	echo $? >"$TESTDIR/rc"
}

# same_lines NAME N: sftp printed the same lines, in the same order, for
# the patched client's copy N.hpn as for the unpatched one's N.stock.
same_lines() {
	sed "s|$2\.stock|$2.hpn|" "$TESTDIR/log.$2.stock.out" \
	    >"$TESTDIR/want.out"
	if grep -q '^Entering \|^Retrieving \|^Uploading \|^Fetching ' \
	    "$TESTDIR/want.out" &&
	    cmp -s "$TESTDIR/want.out" "$TESTDIR/log.$2.hpn.out"; then
		pass "$1"
	else
		fail "$1" "`diff "$TESTDIR/want.out" "$TESTDIR/log.$2.hpn.out" |
		    grep '^[<>]' | head -n 2 | tr '\n' ' '`"
	fi
}

# build_of WHO: the build of the patched (hpn) or unpatched (stock) client.
build_of() {
	case $1 in
	hpn)	echo "$HPN_BUILD" ;;
	stock)	echo "$STOCK_BUILD" ;;
	esac
}

# copies PREFIX: scp and sftp, up and down with -p, against the server
# of $SSH_CONFIG.  Symlinks: scp follows them, sftp skips them (as the
# unpatched scp and sftp do); the unpatched client's copy of the same
# tree is the reference, and the source tree too.
copies() {
	for prog in scp sftp; do
		for dir in up down; do
			n="$1-$prog-$dir"
			for who in hpn stock; do
				b=`build_of $who`
				rm -rf "$TESTDIR/$n.$who"
				xfer $prog $dir "$b" "$TESTDIR/$n.$who" \
				    "$TESTDIR/log.$n.$who" -p
				mv "$TESTDIR/rc" "$TESTDIR/rc.$who"
			done
			rc=`cat "$TESTDIR/rc.hpn"`
			if [ "$rc" -ne 0 ] && { [ $prog = sftp ] ||
			    [ "$rc" != "${SCP_STATUS:-0}" ] ||
			    [ "$rc" != "`cat "$TESTDIR/rc.stock"`" ]; }; then
				fail "$n" "exit status $rc: `grep -v 'debug[0-9]:' \
				    "$TESTDIR/log.$n.hpn" | tail -n 1`"
				continue
			fi
			tree_sig "$TESTDIR/$n.stock" times >"$TESTDIR/sig.stock"
			check_tree "$n" "$TESTDIR/sig.stock" "$TESTDIR/$n.hpn" times
			if [ $prog = sftp ]; then
				same_lines "$n-lines" "$n"
			fi
			if [ $prog = scp ]; then
				# Followed, the symlink is a copy of s.4096.
				f=`sed -n 's|^\./s\.4096 ||p' \
				    "$TESTDIR/sig.src.times"`
				sed "s|^\./link l .*|./link $f|" \
				    "$TESTDIR/sig.src.times" >"$TESTDIR/sig.want"
			else
				grep -v '^\./link ' "$TESTDIR/sig.src.times" \
				    >"$TESTDIR/sig.want"
			fi
			check_tree "$n-source" "$TESTDIR/sig.want" \
			    "$TESTDIR/$n.hpn" times
			rm -rf "$TESTDIR/$n.hpn" "$TESTDIR/$n.stock"
		done
	done
}

# errors_run PROG DIR PATH...: each client, patched and unpatched, copies
# into $TESTDIR/errdst where the PATHs are directories already (xfer, so
# ARGS applies): its exit status in rc.WHO, its error lines (sorted, the
# chatter of -v left out) in errors.WHO, what it left in sig.WHO.
errors_run() {
	_p="$1"
	_d="$2"
	shift 2
	for who in hpn stock; do
		b=`build_of $who`
		rm -rf "$TESTDIR/errdst"
		for _x in "$@"; do
			mkdir -p "$TESTDIR/errdst/$_x"
		done
		xfer $_p $_d "$b" "$TESTDIR/errdst" "$TESTDIR/log.$who"
		mv "$TESTDIR/rc" "$TESTDIR/rc.$who"
		client_messages <"$TESTDIR/log.$who" >"$TESTDIR/errors.$who"
		tree_sig "$TESTDIR/errdst" >"$TESTDIR/sig.$who"
	done
	rm -rf "$TESTDIR/errdst"
}

# errors_same NAME PATTERN...: after errors_run, the patched client failed
# as the unpatched one did: the same non-zero exit status, the same error
# lines (naming each PATTERN), the same files copied.
errors_same() {
	_n="$1"
	shift
	rc=`cat "$TESTDIR/rc.hpn"`
	check "$_n-status" test "$rc" -ne 0 -a \
	    "$rc" = "`cat "$TESTDIR/rc.stock"`"
	_named=yes
	for _x in "$@"; do
		grep -q -- "$_x" "$TESTDIR/errors.hpn" || _named=no
	done
	if [ $_named = yes ] &&
	    cmp -s "$TESTDIR/errors.hpn" "$TESTDIR/errors.stock"; then
		pass "$_n-messages"
	else
		fail "$_n-messages" "`diff "$TESTDIR/errors.stock" \
		    "$TESTDIR/errors.hpn" | grep '^[<>]' | head -n 2 |
		    tr '\n' ' '`"
	fi
	if cmp -s "$TESTDIR/sig.stock" "$TESTDIR/sig.hpn"; then
		pass "$_n-others"
	else
		fail "$_n-others" "`diff "$TESTDIR/sig.stock" \
		    "$TESTDIR/sig.hpn" | grep '^[<>]' | head -n 2 |
		    tr '\n' ' '`"
	fi
}

# errors PREFIX: into a destination where some of the tree's file names
# are directories already: the patched client reports the same errors as
# the unpatched one, copies the same files and exits non-zero too.  (As
# root, permissions cannot make a file fail; a directory in the way can.)
errors() {
	for prog in scp sftp; do
		for dir in up down; do
			# An existing destination gets the tree as src/.
			errors_run $prog $dir src/f.4 src/a/f.5 \
			    src/a/b/c/f.7/x
			errors_same "$1-$prog-$dir-errors" 'f\.7'
		done
	done
}

# args PREFIX: the tree's top-level files and directories as separate
# arguments (scp a b c host:, sftp put/get of a glob), -p: the same tree
# as the unpatched client's, several files open at once, and for sftp
# the same "Uploading"/"Fetching" lines in the same order.  Then into a
# destination where some of the names are directories already: the same
# error lines (scp's "failed to upload ..." once per argument), the same
# files copied, the same non-zero exit status.
args() {
	ARGS=yes
	for prog in scp sftp; do
		for dir in up down; do
			n="$1-$prog-$dir-args"
			for who in hpn stock; do
				b=`build_of $who`
				rm -rf "$TESTDIR/$n.$who"
				xfer $prog $dir "$b" "$TESTDIR/$n.$who" \
				    "$TESTDIR/log.$n.$who" -p
				mv "$TESTDIR/rc" "$TESTDIR/rc.$who"
			done
			rc=`cat "$TESTDIR/rc.hpn"`
			check "$n-status" test "$rc" -eq 0
			tree_sig "$TESTDIR/$n.stock" times >"$TESTDIR/sig.stock"
			check_tree "$n" "$TESTDIR/sig.stock" "$TESTDIR/$n.hpn" times
			peak_open "$n-concurrent" "$TESTDIR/log.$n.hpn" 8
			if [ $prog = sftp ]; then
				same_lines "$n-lines" "$n"
			fi
			rm -rf "$TESTDIR/$n.hpn" "$TESTDIR/$n.stock"

			errors_run $prog $dir f.4 s.1/x a/f.5
			errors_same "$1-$prog-$dir-args-errors" 's\.1' 'f\.5'
		done
	done
	ARGS=no
}

# --- Our sshd, on loopback.
start_sshd lo hpn
copies lo
peak_open lo-scp-up-concurrent "$TESTDIR/log.lo-scp-up.hpn" 8
peak_open lo-sftp-down-concurrent "$TESTDIR/log.lo-sftp-down.hpn" 8
errors lo
args lo
stop_sshd

# --- Debian's sshd and sftp-server.
start_sshd sys system
copies sys
peak_open sys-scp-down-concurrent "$TESTDIR/log.sys-scp-down.hpn" 8
stop_sshd

# python_server NAME MODULE SCRIPT: start regress/SCRIPT, an SSH server
# with an SFTP server of MODULE (a Python package), and point
# $SSH_CONFIG at it; its PID in PY_PID.  False if MODULE is missing.
python_server() {
	/usr/bin/python3 -c "import $2" 2>/dev/null || return 1
	hpn_keys
	rm -f "$TESTDIR/$1.port"
	/usr/bin/python3 "$HPN_TOP/regress/$3" "$TESTDIR/$1.port" \
	    "$TESTDIR/host_ed25519" "$TESTDIR/id_ed25519.pub" \
	    2>"$TESTDIR/$1.log" &
	PY_PID=$!
	hpn_track_pid $PY_PID
	wait_until 20 test -s "$TESTDIR/$1.port" ||
	    die "the $1 server did not start: `tail -n 1 "$TESTDIR/$1.log"`"
	SSHD_PORT=`cat "$TESTDIR/$1.port"`
	_write_ssh_config $1
	grep -q '^hpntest ' "$TESTDIR/known_hosts" 2>/dev/null ||
	    echo "hpntest `cat "$TESTDIR/host_ed25519.pub"`" \
	    >>"$TESTDIR/known_hosts"
}

python_server_stop() {
	kill $PY_PID
	wait $PY_PID 2>/dev/null
	hpn_untrack_pid $PY_PID
}

# --- paramiko's SFTP server: strictly in order, no limits extension, so
# at most SFTP_BATCH_SAFE_FILES (8) files at once: sftp-batch.c's
# choice, the same on every release.  asyncssh's: another independent
# implementation.
if default_release_only "pk-*, as-*"; then
	:
else
	if python_server paramiko paramiko sftp-paramiko.py; then
		copies pk
		check_has pk-safe-files "$TESTDIR/log.pk-sftp-up.hpn" \
		    'sftp_batch_new: upload, up to 8 files at once'
		peak_open pk-scp-down-concurrent \
		    "$TESTDIR/log.pk-scp-down.hpn" 8
		python_server_stop
	else
		skip paramiko "no python3-paramiko"
	fi
	if python_server asyncssh asyncssh sftp-asyncssh.py; then
		# Its subsystem sends no exit status: scp exits 1 (the
		# unpatched one too) whatever it copied.
		SCP_STATUS=1
		copies as
		SCP_STATUS=0
		peak_open as-scp-down-concurrent \
		    "$TESTDIR/log.as-scp-down.hpn" 8
		python_server_stop
	else
		skip asyncssh "no python3-asyncssh"
	fi
fi

# --- An interrupt: sftp gets SIGINT while 40 files go up at 8 Mbit/s;
# every handle it opened is closed before the session ends.  The server's
# sftp-server logs each open and close, and a "forced" close for each
# handle still open at the end.
start_sshd int hpn \
    "Subsystem sftp $HPN_BUILD/sftp-server -e -l VERBOSE 2>>$TESTDIR/sftp-server.log"
BIG="$TESTDIR/big"
mkdir -p "$BIG"
i=0
while [ $i -lt 40 ]; do
	head -c 1048576 /dev/urandom >"$BIG/f$i"
	i=$((i + 1))
done
echo "put -r $BIG $TESTDIR/intdst" >"$TESTDIR/batch"
"$SFTP" -l 8000 -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" hpntest \
    >/dev/null 2>"$TESTDIR/log.int" &
INT_PID=$!
hpn_track_pid $INT_PID
if wait_until 30 grep -qs '^open "' "$TESTDIR/sftp-server.log"; then
	kill -INT $INT_PID
fi
wait $INT_PID
rc=$?
hpn_untrack_pid $INT_PID
wait_until 10 grep -qs '^session closed' "$TESTDIR/sftp-server.log"
opens=`grep -c '^open "' "$TESTDIR/sftp-server.log"`
closes=`grep -c '^close "' "$TESTDIR/sftp-server.log"`
check int-status test "$rc" -ne 0
check int-opened test "$opens" -gt 0
check int-closed test "$opens" -eq "$closes"
check_has_not int-none-forced "$TESTDIR/sftp-server.log" 'forced'
echo "# int: $opens opened, $closes closed, sftp exited $rc"
stop_sshd
