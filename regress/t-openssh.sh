#!/bin/sh
#
# t-openssh.sh: OpenSSH's own regression suite on the patched tree: file
# tests, every t-exec test, the interop tests (PuTTY, Dropbear, Conch),
# the extra tests and the unit tests, each run and counted on its own.
#
# A test that skips must be listed, with its reason, for the tree's
# release in regress/openssh-skips (so must one that fails on the
# release's unpatched twin too, with a reason that starts with FAILS:
# it is then counted as skipped); one that newly skips fails, as does
# one that fails.  Usage: t-openssh.sh [TEST...] (default: all of them).
# OPENSSH_TREE selects another built tree (e.g. build/stock).
#
# The tests that mostly wait (timeouts, forwardings, multiplexing), the
# unit tests and a few long ones run alongside the others, in three more
# workers: this script again (--worker PORT TEST...) on a copy of the
# tree, so with its own regress directory, files and sshd port
# (TEST_SSH_PORT).  Every test that listens on a fixed port of its own
# (33xx) is in the second worker, so no two of them run at once.

. "`dirname "$0"`/lib.sh"

TREE="${OPENSSH_TREE:-$HPN_BUILD}"
SKIPS="$HPN_TOP/regress/openssh-skips"
LOGDIR="${OPENSSH_REGRESS_LOGS:-$HPN_TOP/build/regress-logs}"
mkdir -p "$LOGDIR" || die "cannot make $LOGDIR"

[ -f "$TREE/Makefile" ] || die "no built OpenSSH tree at $TREE"
WORKER=no
MAKEVARS=""
if [ "${1:-}" = --worker ]; then
	WORKER=yes
	TEST_SSH_PORT="$2"
	shift 2
fi
# The tree's release: its stamp (patched or unpacked), else the one
# under test.
REL=`cat "$TREE/.hpn-patched" "$TREE/.hpn-unpacked" 2>/dev/null | head -n 1`
[ -n "$REL" ] || REL="$HPN_OPENSSH"

# Names from the suite's own Makefile, so we never drift from it.
listvar() {
	make -s --no-print-directory -C "$TREE/regress" -f Makefile \
	    --eval "hpn-print: ; @echo \$($1)" hpn-print
}

if [ $WORKER = yes ]; then
	# The tree's Makefile names its own directory: the copy's instead.
	MAKEVARS="abs_top_srcdir=$TREE abs_top_builddir=$TREE BUILDDIR=$TREE"
	export TEST_SSH_PORT
elif ! make -s -C "$TREE" regress-prep regress-binaries \
    regress-unit-binaries >"$LOGDIR/prep.log" 2>&1; then
	tail -n 20 "$LOGDIR/prep.log" >&2
	die "building OpenSSH's regress binaries failed"
fi

# expected_skip TEST: listed for $REL (the second column of
# regress/openssh-skips is a comma-separated list of releases).
expected_skip() {
	sed -e 's/#.*//' "$SKIPS" 2>/dev/null | awk -v t="$1" -v r="$REL" '
	    $1 == t { n = split($2, a, ","); for (i = 1; i <= n; i++)
		if (a[i] == r) found = 1 }
	    END { exit !found }'
}

# expected_failure TEST: listed for $REL with a reason that starts with
# FAILS: a test that fails on the unpatched twin of that release too.
expected_failure() {
	expected_skip "$1" && sed -e 's/#.*//' "$SKIPS" | awk -v t="$1" '
	    $1 == t && $3 ~ /^FAILS/ { found = 1 } END { exit !found }'
}

# run_one KIND NAME: KIND is the top-level make target, NAME the test.
run_one() {
	_kind="$1"
	_t="$2"
	_log="$LOGDIR/$_t.log"
	case "$_kind" in
	t-exec)		_var="LTESTS=$_t SKIP_LTESTS=" ;;
	interop-tests)	_var="INTEROP_TESTS=$_t" ;;
	extra-tests)	_var="EXTRA_TESTS=$_t" ;;
	*)		_var="" ;;
	esac
	_start=`date +%s`
	# shellcheck disable=SC2086
	make -C "$TREE" $_kind $_var $MAKEVARS >"$_log" 2>&1 </dev/null
	_rc=$?
	_secs=`expr \`date +%s\` - $_start`
	_why=`sed -n 's/^SKIPPED: //p' "$_log" | head -n 1`
	if [ $_rc -ne 0 ] && expected_failure "$_t"; then
		skip "$_t" "fails on $REL as on its unpatched twin, see regress/openssh-skips and $_log"
	elif [ $_rc -ne 0 ]; then
		fail "$_t" "failed after ${_secs}s, see $_log: `grep -v '^make' \
		    "$_log" | tail -n 1`"
	elif [ -n "$_why" ]; then
		if expected_skip "$_t"; then
			skip "$_t" "$_why (expected for $REL, see regress/openssh-skips)"
		else
			fail "$_t" "newly skipped on $REL: $_why"
		fi
	else
		pass "$_t"
	fi
}

if [ $WORKER = yes ]; then
	for t in "$@"; do
		case "$t" in
		unit)	run_one unit unit ;;
		*)	run_one t-exec "$t" ;;
		esac
	done
	exit 0
fi

if [ $# -gt 0 ]; then
	ONLY=" $* "
else
	ONLY=""
fi
want() {
	[ -z "$ONLY" ] && return 0
	case "$ONLY" in *" $1 "*) return 0 ;; esac
	return 1
}

# The other workers' tests (those of them the tree has and the caller
# wants); their lines are printed when they are done.  Balanced from the
# logs' times of 2026-11-28 (10.5p1, 2 vCPUs, in CI): with two workers
# each took about 650 s (unit 300, rekey 132, forward-control 131); with
# three, 546, 422 and 458 s before cert-hostkey (46 s) and exit-status
# (27 s) moved out of the first.  On 2026-11-29 three workers took 510,
# 489 and 516 s with the CPUs 22% idle (unit 332, rekey 144, sftp 82,
# channel-timeout 75 s): hence a fourth.  With four, 458, 352, 436 and
# 402 s, before agent-restrict (27 s) and stderr-data (14 s) moved out of
# the first.
SECOND="forward-control multiplex cfgmatch cfgmatchlisten forwarding
connection-timeout cert-hostkey agent-restrict stderr-data"
THIRD="unit exit-status login-timeout penalty-expire"
FOURTH="rekey channel-timeout sftp agent-timeout try-ciphers cert-userkey"
LTESTS=`listvar LTESTS`
# worker_tests LIST: those of LIST the tree has and the caller wants.
worker_tests() {
	for _t in $1; do
		case " unit $LTESTS " in
		*" $_t "*)	want "$_t" && echo "$_t" ;;
		esac
	done
}
second=`worker_tests "$SECOND" | tr '\n' ' '`
third=`worker_tests "$THIRD" | tr '\n' ' '`
fourth=`worker_tests "$FOURTH" | tr '\n' ' '`
in_other() {
	case " $second $third $fourth " in *" $1 "*) return 0 ;; esac
	return 1
}
for w in 2 3 4; do
	case $w in
	2)	list=$second ;;
	3)	list=$third ;;
	4)	list=$fourth ;;
	esac
	[ -n "`echo $list`" ] || continue
	# Each worker's copy of the tree is made here, before any test
	# writes into the tree (a copy made while one runs can fail on a
	# file that vanished under it).
	cp -a "$TREE" "$TESTDIR/tree$w" || die "cannot copy $TREE"
	# shellcheck disable=SC2086
	OPENSSH_TREE="$TESTDIR/tree$w" sh "$0" --worker \
	    `expr 4142 + $w \* 100` $list >"$TESTDIR/worker$w.out" 2>&1 &
	eval "WPID$w=$!"
	hpn_track_pid $!
done

want file-tests && run_one file-tests file-tests
for t in $LTESTS; do
	in_other "$t" && continue
	want "$t" && run_one t-exec "$t"
done
for t in `listvar INTEROP_TESTS`; do
	want "$t" && run_one interop-tests "$t"
done
# make tests runs the extra tests where the tree has that target (not
# in 9.2p1, whose regress/Makefile lists agent-pkcs11 but never runs it).
if grep -q '^tests:.*[[:space:]]extra-tests' "$TREE/Makefile"; then
	for t in `listvar EXTRA_TESTS`; do
		want "$t" && run_one extra-tests "$t"
	done
fi
for w in 2 3 4; do
	eval "_pid=\${WPID$w:-}"
	[ -n "$_pid" ] || continue
	wait $_pid
	_rc=$?
	hpn_untrack_pid $_pid
	cat "$TESTDIR/worker$w.out"
	[ $_rc -eq 0 ] || fail worker$w "exited with status $_rc"
done
exit 0
