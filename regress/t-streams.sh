#!/bin/sh
#
# t-streams.sh: scp and sftp over several SFTP sessions at once (patch
# 0007: -X streams=N and -X connections=N, sftp-streams.c and the lanes
# of sftp-batch.c), ours beside the unpatched twin.
#
#   A tree (files of 1 to 3 MiB, which each fill a session, one of 24
#   MiB, which uploads split into parts over the sessions, and small
#   ones) goes up and down by scp -r, sftp put -r and get -r with -X
#   streams=4, against stock's sshd, ours and Debian's (with their own
#   sftp-server): byte-exact, the exit status stock's, and -v names the
#   sessions it ran over (more than one).  On other releases, against
#   stock's sshd only.
#   One file of 50 MiB alone (scp both ways, put, get): split, exact.
#   On a terminal, scp -r both ways over four sessions: exact, and the
#   meter's last line is the whole copy's (the count of files, 100%,
#   all their bytes).
#   MaxSessions 2 and 1: a refused session is one fewer, never an error:
#   exact, exit 0, nothing on standard error, and -v says the server
#   opened no more.  With MaxSessions 2, -X connections=2 -X streams=4
#   runs four sessions: the second login takes a channel of its own.
#   -X connections=2: the extra session logs in anew (sshd accepts two
#   logins), without a prompt, beside the copy's own login (-v); exact.
#   One small file with -X connections=3, and one between two remotes:
#   exact, exit 0, and no ssh of the logins started beside its own
#   outlives scp.  sftp whose own session fails (fatal()): stock's exit
#   status, and no such ssh nor their directory outlives it.
#   The default (streams=auto) over loopback: one session.
#   Through -D, against regress/sftp-adversary.py run once per session:
#   replies short and out of order on every session; a session whose
#   server drops its connection in the middle (its files are copied
#   again over the others: exact, exit 0); a session whose writes or
#   reads fail (the files it fails are named, none is left whole-sized
#   with other bytes).
#   SIGINT in the middle of an upload over four sessions (two of its
#   files split into parts): each handle
#   every session opened is closed before its session ends, each file
#   at its destination is whole, empty (its open went out, none of its
#   data) or named, and the exit status is not 0.
#   scp killed by SIGTERM in the middle, two connections asked for: the
#   directory of its control sockets is gone, as after a normal end.
#   Bad values of -X streams and connections: refused, exit 255, as
#   stock refuses an unknown -X option.
#   On an emulated 50 ms path (root, default release): -X connections=2
#   -X streams=4, scp -r up and get -r against stock's sshd with
#   MaxSessions 2: the streams start without the copy waiting for them
#   (-v says so), exact, exit 0.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/bench/lfn.sh"

SSH="$HPN_BUILD/ssh"
SCP="$HPN_BUILD/scp"
SFTP="$HPN_BUILD/sftp"
[ -x "$SCP" ] && [ -x "$SFTP" ] || die "no scp or sftp in $HPN_BUILD"
grep -q 'sftp-streams' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip streams "the tree under test has no sftp-streams.c"
	exit 0
}
ADV="$HPN_TOP/regress/sftp-adversary.py"

# The tree: eight files of 1 to 3 MiB (a session each), one of 24 MiB
# and a few bytes (split into parts) and small ones.
SRC="$TESTDIR/src"
mkdir -p "$SRC/d"
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 307201 + 1000000)) /dev/urandom >"$SRC/big$i"
done
head -c 25165831 /dev/urandom >"$SRC/big9"
for s in 0 1 32768 261120 261121 70000; do
	head -c $s /dev/urandom >"$SRC/d/s$s"
done

# same_tree NAME DIR: DIR holds what SRC holds, byte for byte.
same_tree() {
	if diff -r "$SRC" "$2" >"$TESTDIR/diff.$1" 2>&1; then
		pass "$1"
	else
		fail "$1" "`head -n 3 "$TESTDIR/diff.$1" | tr '\n' ' '`"
	fi
}

# streams_used LOG: the number of sessions -v says a copy ran over.
streams_used() {
	sed -n 's/.* files over \([0-9]*\) streams.*/\1/p' "$1" | tail -n 1
}

# copy WHO MODE DST [OPTION...]: WHO's (hpn or stock) scp or sftp copies
# SRC in MODE (scp-up, scp-down, put, get) to DST; exit status in
# $TESTDIR/rc.WHO, messages in $TESTDIR/err.WHO.
copy() {
	_who=$1
	_mode=$2
	_dst=$3
	shift 3
	case $_who in
	hpn)	_b=$HPN_BUILD ;;
	*)	_b=$STOCK_BUILD ;;
	esac
	rm -rf "$_dst"
	mkdir -p "$_dst"
	case $_mode in
	scp-up)	"$_b/scp" -q -S "$_b/ssh" -F "$SSH_CONFIG" "$@" -r "$SRC" \
		    "hpntest:$_dst/" ;;
	scp-down) "$_b/scp" -q -S "$_b/ssh" -F "$SSH_CONFIG" "$@" -r \
		    "hpntest:$SRC" "$_dst/" ;;
	put|get) echo "$_mode -r $SRC $_dst/src" \
		    >"$TESTDIR/batch.$_who"
		"$_b/sftp" -S "$_b/ssh" -F "$SSH_CONFIG" "$@" \
		    -b "$TESTDIR/batch.$_who" hpntest >/dev/null ;;
	esac 2>"$TESTDIR/err.$_who"
	echo $? >"$TESTDIR/rc.$_who"
}

# against FLAVOUR: each mode, ours with -X streams=4 beside stock.
against() {
	for _m in scp-up scp-down put get; do
		copy stock $_m "$TESTDIR/dst.stock"
		copy hpn $_m "$TESTDIR/dst.hpn" -v -X streams=4
		_n=$1-$_m
		check $_n-status test "`cat "$TESTDIR/rc.hpn"`" = \
		    "`cat "$TESTDIR/rc.stock"`"
		same_tree $_n-exact "$TESTDIR/dst.hpn/src"
		same_tree $_n-stock-exact "$TESTDIR/dst.stock/src"
		_u=`streams_used "$TESTDIR/err.hpn"`
		check $_n-several test "${_u:-1}" -gt 1
		# (A download asks for its first 16 MiB at once: whether
		# 8 MiB are left to split then is a race on loopback.)
		case $_m in
		scp-up|put) check_has $_n-split "$TESTDIR/err.hpn" \
			'big9": [0-9]* bytes from [0-9]* on stream' ;;
		esac
	done
}

start_sshd st stock
against stock
# One file the user named, alone: a batch of its own, split into parts.
ONE="$TESTDIR/one.src"
head -c 52428805 /dev/urandom >"$ONE"
for _m in scp-up scp-down put get; do
	rm -f "$TESTDIR/one.hpn"
	case $_m in
	scp-up)	"$SCP" -v -X streams=4 -S "$SSH" -F "$SSH_CONFIG" \
		    "$ONE" "hpntest:$TESTDIR/one.hpn" ;;
	scp-down) "$SCP" -v -X streams=4 -S "$SSH" -F "$SSH_CONFIG" \
		    "hpntest:$ONE" "$TESTDIR/one.hpn" ;;
	put|get) echo "$_m $ONE $TESTDIR/one.hpn" >"$TESTDIR/batch.one"
		"$SFTP" -v -X streams=4 -S "$SSH" -F "$SSH_CONFIG" \
		    -b "$TESTDIR/batch.one" hpntest >/dev/null ;;
	esac 2>"$TESTDIR/err.one"
	check one-$_m-status test $? = 0
	check one-$_m-exact cmp -s "$ONE" "$TESTDIR/one.hpn"
	check_has one-$_m-split "$TESTDIR/err.one" \
	    'one.hpn": [0-9]* bytes from [0-9]* on stream'
done
# The meter over several sessions (on a terminal): the whole copy's,
# and its last line names how many files it copied, 100% of their bytes.
if command -v script >/dev/null 2>&1; then
	_files=`find "$SRC" -type f | wc -l`
	# Their bytes as the meter writes them (format_size()).
	_size=`find "$SRC" -type f -exec cat {} + | wc -c | awk '{
		v = $1; u = " KMGT"; i = 1
		while (v >= 10000 && i < 5) { v = int((v + 512) / 1024); i++ }
		printf "%d%sB\n", v, substr(u, i, 1) }'`
	for _m in scp-up scp-down; do
		rm -rf "$TESTDIR/dst.meter"
		mkdir -p "$TESTDIR/dst.meter"
		case $_m in
		scp-up)	_args="-r $SRC hpntest:$TESTDIR/dst.meter/" ;;
		*)	_args="-r hpntest:$SRC $TESTDIR/dst.meter/" ;;
		esac
		in_pty "$TESTDIR/pty.meter" "$SCP -v -X streams=4 -S $SSH \
		    -F $SSH_CONFIG $_args 2>$TESTDIR/err.meter"
		same_tree meter-$_m-exact "$TESTDIR/dst.meter/src"
		_u=`streams_used "$TESTDIR/err.meter"`
		check meter-$_m-several test "${_u:-1}" -gt 1
		tr '\r' '\n' <"$TESTDIR/pty.meter" | grep '%' >"$TESTDIR/meter.lines"
		_last=`tail -n 1 "$TESTDIR/meter.lines"`
		case $_last in
		"$_files files "*" 100% "*" $_size "*)
			pass meter-$_m-whole ;;
		*)	fail meter-$_m-whole "last line '$_last', not $_files \
files, 100%, $_size" ;;
		esac
	done
else
	skip meter "no script(1) (bsdutils) for a pseudo-terminal"
fi
# MaxSessions: a refused session is one fewer.
for max in 2 1; do
	stop_sshd
	start_sshd st$max stock "MaxSessions $max"
	for _m in scp-up get; do
		copy hpn $_m "$TESTDIR/dst.hpn" -X streams=4
		check max$max-$_m-status test "`cat "$TESTDIR/rc.hpn"`" = 0
		same_tree max$max-$_m-exact "$TESTDIR/dst.hpn/src"
		check max$max-$_m-quiet test ! -s "$TESTDIR/err.hpn"
		copy hpn $_m "$TESTDIR/dst.hpn" -v -X streams=4
		_u=`streams_used "$TESTDIR/err.hpn"`
		check max$max-$_m-count test "${_u:-1}" -eq $max
		[ $max = 1 ] ||
		    check_has max$max-$_m-why "$TESTDIR/err.hpn" \
		    'the server opens no more'
	done
	[ $max = 2 ] || continue
	# Two connections of two sessions each: the second connection
	# takes channels too (MaxSessions is per connection).
	_mark=`log_mark`
	copy hpn scp-up "$TESTDIR/dst.hpn" -v -X connections=2 -X streams=4
	check conn2x2-status test "`cat "$TESTDIR/rc.hpn"`" = 0
	same_tree conn2x2-exact "$TESTDIR/dst.hpn/src"
	_logins=`log_since $_mark | grep -c 'Accepted publickey'`
	check conn2x2-logins test "$_logins" -eq 2
	_u=`streams_used "$TESTDIR/err.hpn"`
	check conn2x2-streams test "${_u:-1}" -eq 4
	check_has conn2x2-channel "$TESTDIR/err.hpn" \
	    'stream [0-9]*: a channel of connection 2'
done
stop_sshd

start_sshd sh hpn
# Elsewhere than on the default release the client's hunks are what
# differs: the servers' flavours once, against stock's (above).
other_release || against hpn
# Two connections: a second login, without a prompt.
_mark=`log_mark`
copy hpn scp-up "$TESTDIR/dst.hpn" -v -X connections=2
check conn2-status test "`cat "$TESTDIR/rc.hpn"`" = 0
same_tree conn2-exact "$TESTDIR/dst.hpn/src"
_logins=`log_since $_mark | grep -c 'Accepted publickey'`
check conn2-logins test "$_logins" -eq 2
# ... which starts beside the copy's own login, not after it.
check_has conn2-early "$TESTDIR/err.hpn" 'starting beside the connection'
# no_ctl_ssh: true when no ssh names the control directory $TESTDIR/ctl1.
no_ctl_ssh() {
	test -z "`ps -eo args | grep -F "$TESTDIR/ctl1/" | grep -v grep`"
}
# conn3 NAME SRC DST: scp of SRC to DST with three connections asked
# for, its control sockets under $TESTDIR/ctl1: exit 0, exact, and once
# scp is back, no ssh of the logins started beside its own runs on (none
# names its control directory) and the directory is gone.
conn3() {
	rm -f "$TESTDIR/small1.dst"
	TMPDIR="$TESTDIR/ctl1" "$SCP" -q -X connections=3 -S "$SSH" \
	    -F "$SSH_CONFIG" "$2" "$3"
	check $1-status test $? = 0
	check $1-exact cmp -s "$TESTDIR/small1" "$TESTDIR/small1.dst"
	check $1-no-ssh no_ctl_ssh
	check $1-dir-gone test -z "`ls -A "$TESTDIR/ctl1"`"
}
mkdir -p "$TESTDIR/ctl1"
echo small >"$TESTDIR/small1"
# One small file: the logins started beside its own are not waited for.
conn3 conn3-small "$TESTDIR/small1" "hpntest:$TESTDIR/small1.dst"
# Between two remotes (through this host: no streams, as stock has
# none): the logins the first connection started go.
conn3 conn3-r2r "hpntest:$TESTDIR/small1" "hpntest:$TESTDIR/small1.dst"
# sftp whose own session fails (its server program is missing) ends by
# fatal(), as stock's does, with stock's status; the logins it started
# beside its own and their directory go with it.
for _b in hpn stock; do
	_p="$STOCK_BUILD/sftp" _x=-q
	[ $_b = stock ] || _p="$SFTP" _x="-X connections=3"
	TMPDIR="$TESTDIR/ctl1" "$_p" $_x -q -b /dev/null -S "$SSH" \
	    -F "$SSH_CONFIG" -s "$TESTDIR/no-such-server" hpntest \
	    >/dev/null 2>&1
	echo $? >"$TESTDIR/rc.$_b"
done
check sftp-fatal-status test "`cat "$TESTDIR/rc.hpn"`" = \
    "`cat "$TESTDIR/rc.stock"`"
check sftp-fatal-no-ssh wait_until 10 no_ctl_ssh
check sftp-fatal-dir-gone test -z "`ls -A "$TESTDIR/ctl1"`"
# A master the user started (ControlPath in the configuration): the copy
# goes through it, as stock's does, and so do its streams: no new login.
cp "$SSH_CONFIG" "$TESTDIR/ssh_config.user"
printf '\tControlPath %s\n' "$TESTDIR/user.ctl" >>"$TESTDIR/ssh_config.user"
if "$SSH" -F "$TESTDIR/ssh_config.user" -M -f -N hpntest; then
	hpn_on_exit "'$SSH' -F '$TESTDIR/ssh_config.user' -O exit hpntest"
	_conf=$SSH_CONFIG
	SSH_CONFIG="$TESTDIR/ssh_config.user"
	_mark=`log_mark`
	copy hpn scp-up "$TESTDIR/dst.hpn" -v -X streams=3
	check user-master-status test "`cat "$TESTDIR/rc.hpn"`" = 0
	same_tree user-master-exact "$TESTDIR/dst.hpn/src"
	_logins=`log_since $_mark | grep -c 'Accepted publickey'`
	check user-master-no-login test "$_logins" -eq 0
	_u=`streams_used "$TESTDIR/err.hpn"`
	check user-master-streams test "${_u:-1}" -eq 3
	SSH_CONFIG=$_conf
	"$SSH" -F "$TESTDIR/ssh_config.user" -O exit hpntest 2>/dev/null
else
	fail user-master "ssh -M -f did not start"
fi
# The default over loopback: one session.
copy hpn scp-up "$TESTDIR/dst.hpn" -v
check auto-status test "`cat "$TESTDIR/rc.hpn"`" = 0
same_tree auto-exact "$TESTDIR/dst.hpn/src"
check_has_not auto-one "$TESTDIR/err.hpn" 'files over [0-9]* streams'
stop_sshd

if other_release; then
	:
elif [ -x "$SYS_SSHD" ] && [ -x "$SYS_SFTP_SERVER" ]; then
	start_sshd sys system
	against debian
	stop_sshd
else
	skip debian "no Debian sshd ($SYS_SSHD)"
fi

# --- Through -D: the adversary, one server per session.
if ! command -v python3 >/dev/null 2>&1; then
	skip streams-adversary "no python3"
else
	# adv WHO MODE SWITCHES [OPTION...]: as copy, through -D.
	adv() {
		_who=$1
		_mode=$2
		_sw=$3
		shift 3
		case $_who in
		hpn)	_b=$HPN_BUILD ;;
		*)	_b=$STOCK_BUILD ;;
		esac
		_dst="$TESTDIR/dst.$_who"
		rm -rf "$_dst" "$TESTDIR/count"
		mkdir -p "$_dst" "$TESTDIR/count"
		case $_mode in
		put)	echo "put -r $SRC $_dst/src" ;;
		get)	echo "get -r $SRC $_dst/src" ;;
		esac >"$TESTDIR/batch.$_who"
		HPN_ADVERSARY="$_sw" timeout -s INT -k 5 120 "$_b/sftp" "$@" \
		    -D "$ADV" -b "$TESTDIR/batch.$_who" \
		    >/dev/null 2>"$TESTDIR/err.$_who"
		echo $? >"$TESTDIR/rc.$_who"
	}
	# bad_files DST: source files whose copy in DST is of the source's
	# size but other bytes (neither whole nor cut back).
	bad_files() {
		(cd "$SRC" && find . -type f) | while read -r _f; do
			[ -f "$1/$_f" ] || continue
			cmp -s "$SRC/$_f" "$1/$_f" && continue
			[ "`wc -c <"$SRC/$_f"`" = "`wc -c <"$1/$_f"`" ] &&
			    echo "$_f"
		done
	}
	for m in put get; do
		for sw in short=7000,shortrand=1 reorder=16 \
		    short=100000,reorder=8,delay=5; do
			adv stock $m "$sw"
			adv hpn $m "$sw" -X streams=4
			_n=adv-$m-`echo "$sw" | tr ',=' '-_'`
			check $_n-status test "`cat "$TESTDIR/rc.hpn"`" = \
			    "`cat "$TESTDIR/rc.stock"`"
			same_tree $_n-exact "$TESTDIR/dst.hpn/src"
		done
		# The second session's server drops its connection.
		for n in 3 12 40; do
			adv hpn $m "count=$TESTDIR/count,only=2,drop=$n" -v \
			    -X streams=4
			_n=adv-$m-drop$n
			check $_n-status test "`cat "$TESTDIR/rc.hpn"`" = 0
			same_tree $_n-exact "$TESTDIR/dst.hpn/src"
			[ $n = 40 ] || check_has $_n-lost "$TESTDIR/err.hpn" \
			    'stream [1-9][0-9]* lost: [1-9][0-9]* files* copied again'
		done
		# The second session's reads or writes fail past 1 MiB.
		case $m in
		put)	sw=failwrite=1048576 ;;
		get)	sw=failread=1048576 ;;
		esac
		adv hpn $m "count=$TESTDIR/count,only=2,$sw" -X streams=4
		_n=adv-$m-fail
		check $_n-status test "`cat "$TESTDIR/rc.hpn"`" -ne 0
		check_has $_n-named "$TESTDIR/err.hpn" 'big'
		_bad=`bad_files "$TESTDIR/dst.hpn/src"`
		check $_n-none-whole-wrong test -z "$_bad"
	done
fi

# --- Over ssh: the second session's sftp-server stops after reading
# CUT bytes of requests (a wrapper as sshd's sftp subsystem: the first
# session runs sftp-server, the second a cut one); its channel closes,
# and its files are copied again over the others.
mkdir -p "$TESTDIR/cut"
cat >"$TESTDIR/cut.py" <<'EOF2'
import os, sys
n = int(sys.argv[1])
while n > 0:
    b = os.read(0, min(n, 65536))
    if not b:
        break
    os.write(1, b)
    n -= len(b)
EOF2
cat >"$TESTDIR/cutsftp" <<EOF2
#!/bin/sh
n=1
while ! mkdir "$TESTDIR/cut/s.\$n" 2>/dev/null; do n=\`expr \$n + 1\`; done
if [ "\$n" = 2 ]; then
	python3 "$TESTDIR/cut.py" \`cat "$TESTDIR/cut/bytes"\` |
	    "$HPN_BUILD/sftp-server"
else
	exec "$HPN_BUILD/sftp-server"
fi
EOF2
chmod 755 "$TESTDIR/cutsftp"
if command -v python3 >/dev/null 2>&1; then
	start_sshd cut hpn "Subsystem sftp $TESTDIR/cutsftp"
	for c in scp-up:1500000 put:1500000 get:400 scp-down:300; do
		m=${c%:*}
		rm -rf "$TESTDIR/cut"/s.*
		echo ${c#*:} >"$TESTDIR/cut/bytes"
		copy hpn $m "$TESTDIR/dst.hpn" -v -X streams=4
		_n=cut-$m
		check $_n-status test "`cat "$TESTDIR/rc.hpn"`" = 0
		same_tree $_n-exact "$TESTDIR/dst.hpn/src"
		check_has $_n-lost "$TESTDIR/err.hpn" \
		    'stream [1-9][0-9]* lost: [1-9][0-9]* files* copied again'
	done
	stop_sshd
fi

# --- SIGINT in the middle of an upload over four sessions.  Each
# session's sftp-server logs its opens and closes (and a "forced" close
# for a handle still open at its end).
start_sshd int hpn \
    "Subsystem sftp $HPN_BUILD/sftp-server -e -l VERBOSE 2>>$TESTDIR/sftp-server.log"
INT="$TESTDIR/intsrc"
mkdir -p "$INT"
# Six files of 8 MiB and two of 80 MiB, split into parts.
i=0
while [ $i -lt 8 ]; do
	head -c $((i < 6 ? 8388608 : 83886080)) /dev/urandom >"$INT/f$i"
	i=$((i + 1))
done
echo "put -r $INT $TESTDIR/intdst" >"$TESTDIR/batch"
"$SFTP" -v -X streams=4 -S "$SSH" -F "$SSH_CONFIG" -b "$TESTDIR/batch" \
    hpntest >/dev/null 2>"$TESTDIR/log.int" &
INT_PID=$!
hpn_track_pid $INT_PID
# count PATTERN FILE: FILE's lines that match (0 before FILE is there).
count() {
	_c=`grep -c -- "$1" "$2" 2>/dev/null`
	echo "${_c:-0}"
}
at_least() {
	[ "`count "$1" "$2"`" -ge "$3" ]
}
# Once a part of a file is open.
if wait_until 30 at_least '^open "' "$TESTDIR/sftp-server.log" 6 &&
    wait_until 30 at_least 'bytes from [0-9]* on stream' "$TESTDIR/log.int" 1
then
	kill -INT $INT_PID
fi
wait $INT_PID
rc=$?
hpn_untrack_pid $INT_PID
sessions=`count 'session opened' "$TESTDIR/sftp-server.log"`
wait_until 10 at_least '^session closed' "$TESTDIR/sftp-server.log" \
    "$sessions"
opens=`count '^open "' "$TESTDIR/sftp-server.log"`
closes=`count '^close "' "$TESTDIR/sftp-server.log"`
check int-status test "$rc" -ne 0
check int-sessions test "$sessions" -gt 1
check int-closed test "$opens" -eq "$closes"
check_has_not int-none-forced "$TESTDIR/sftp-server.log" 'forced'
# (A file whose open went out, but none of its data, is there empty, as
# without streams.)
bad=""
for f in "$TESTDIR"/intdst/*; do
	[ -f "$f" ] || continue
	cmp -s "$f" "$INT/`basename "$f"`" && continue
	[ -s "$f" ] || continue
	grep -q "`basename "$f"`\" failed" "$TESTDIR/log.int" ||
	    bad="$bad `basename "$f"`"
done
check int-whole-or-named test -z "$bad"
[ -z "$bad" ] || { ls -l "$TESTDIR/intdst"; cat "$TESTDIR/log.int"; } >&2
echo "# int: $sessions sessions, $opens opened, $closes closed, exit $rc"

# --- scp killed (SIGTERM) in the middle, two connections asked for:
# the directory of its control sockets goes with it (as it does at a
# normal end).  -l keeps it in the middle long enough.  (Not SIGINT:
# started in the background by a shell, its ssh ignores that, and scp
# waits for it, stock's as ours.)
mkdir -p "$TESTDIR/ctl"
TMPDIR="$TESTDIR/ctl" "$SCP" -q -l 100000 -X connections=2 -X streams=4 \
    -S "$SSH" -F "$SSH_CONFIG" -r "$INT" "hpntest:$TESTDIR/ctldst" \
    2>"$TESTDIR/err.ctl" &
CTL_PID=$!
hpn_track_pid $CTL_PID
# has_socket DIR: a control socket is in one of DIR's directories.
has_socket() {
	for _d in "$1"/*/*; do
		[ -S "$_d" ] && return 0
	done
	return 1
}
killed=no
if wait_until 30 has_socket "$TESTDIR/ctl" &&
    wait_until 30 test -s "$TESTDIR/ctldst/f0" &&
    kill -TERM $CTL_PID 2>/dev/null; then
	killed=yes
fi
wait $CTL_PID
rc=$?
hpn_untrack_pid $CTL_PID
check ctl-killed-midway test $killed = yes
check ctl-status test "$rc" -ne 0
check ctl-dir-gone test -z "`ls -A "$TESTDIR/ctl"`"
stop_sshd

# --- Bad values: refused as stock refuses an unknown -X option.
"$STOCK_BUILD/sftp" -X nosuch=1 -D "$ADV" </dev/null >/dev/null 2>&1
stock_rc=$?
for x in streams=0 streams=65 streams=x streams= connections=0 \
    connections=100 connections=two; do
	"$SFTP" -X "$x" -D "$ADV" </dev/null >/dev/null 2>"$TESTDIR/err.x"
	check bad-$x-status test $? -eq "$stock_rc"
	check_has bad-$x-said "$TESTDIR/err.x" 'Invalid number of'
	"$SCP" -X "$x" "$SRC/d/s1" "$TESTDIR/x" >/dev/null 2>"$TESTDIR/err.x"
	check bad-$x-scp-status test $? -eq "$stock_rc"
done

# --- On an emulated 50 ms path (the default release only: sftp-streams.c
# decides it): streams start without the copy waiting for them (a login
# takes some eight round trips), and join as they come.  Two connections
# of two sessions each, against stock's sshd: exact both ways, exit 0,
# and -v says the streams started unwaited.
if default_release_only "lfn-*"; then
	exit 0
fi
if ! why=`lfn_usable`; then
	skip lfn "$why"
	exit 0
fi
lfn_up 1000 50
lfn_start_sshd lfn stock "MaxSessions 2"
for _m in scp-up get; do
	rm -rf "$TESTDIR/lfndst"
	mkdir -p "$TESTDIR/lfndst"
	case $_m in
	scp-up)	lfn_a "$SCP" -v -X connections=2 -X streams=4 -S "$SSH" \
		    -F "$SSH_CONFIG" -r "$SRC" "hpntest:$TESTDIR/lfndst/" ;;
	get)	echo "get -r $SRC $TESTDIR/lfndst/src" >"$TESTDIR/batch.lfn"
		lfn_a "$SFTP" -v -X connections=2 -X streams=4 -S "$SSH" \
		    -F "$SSH_CONFIG" -b "$TESTDIR/batch.lfn" hpntest >/dev/null ;;
	esac 2>"$TESTDIR/err.lfn"
	check lfn-$_m-status test $? = 0
	same_tree lfn-$_m-exact "$TESTDIR/lfndst/src"
	check_has lfn-$_m-unwaited "$TESTDIR/err.lfn" \
	    'starting, not waited for'
done
stop_sshd
