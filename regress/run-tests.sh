#!/bin/sh
#
# run-tests.sh: run our test suites and count the results.
#
# usage: run-tests.sh [all | quick | SUITE...]
#
#   quick	every suite of ours (unit, integration, interop)
#   all		quick, then OpenSSH's own regression suite (openssh)
#   SUITE	one suite by name: regress/t-SUITE.sh
#
# Each suite prints "ok - NAME", "not ok - NAME: WHY" or "skip - NAME: WHY"
# per check.  The last line is "N passed, N failed, N skipped"; the exit
# status is non-zero if anything failed.
#
# A suite in BACKGROUND (dist: a dozen builds of OpenSSH, no network, no
# clock) that comes after another in the list starts at once, on idle CPU
# and disk only (SCHED_IDLE and the idle I/O class: a test that wants a
# core or the disk gets it first), and its lines are printed in its
# place, when it is done.  HPN_TEST_SERIAL=yes runs every suite in turn.

HPN_TOP="${HPN_TOP:-`cd "\`dirname "$0"\`/.." && pwd`}"
export HPN_TOP
export HPN_BUILD="${HPN_BUILD:-$HPN_TOP/build/hpn}"
export STOCK_BUILD="${STOCK_BUILD:-$HPN_TOP/build/stock}"

QUICK="build docs security unit basic interop chachapoly mtaes mtlife mtpeer mtchacha none noneswitch nonemac kexguess rekey mptcp stats translog window windowlong busy sftppipe sftpbatch streams sftpadv zoo hpnpeer resume resumecut resumessh verdict sftpfuzz memory dist"

if [ $# -eq 0 ]; then
	set -- quick
fi
suites=""
for a in "$@"; do
	case "$a" in
	quick)	suites="$suites $QUICK" ;;
	all)	suites="$suites $QUICK openssh" ;;
	*)	suites="$suites $a" ;;
	esac
done

BACKGROUND="dist"

WORK=`mktemp -d "${TMPDIR:-/tmp}/hpn-results.XXXXXXXX"` || exit 1
RESULTS="$WORK/results"
: >"$RESULTS"
bg_pids=""
# A background suite runs in its own session: on an early exit its whole
# process group (its makes and compilers too) is killed.
trap 'for p in $bg_pids; do kill -TERM -$p 2>/dev/null; done
    rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

# The commands that put a background suite on idle CPU and disk, where
# the system has them.
IDLE=""
chrt -i 0 true 2>/dev/null && IDLE="chrt -i 0"
ionice -c 3 true 2>/dev/null && IDLE="$IDLE ionice -c 3"

start=`date +%s`
# setsid -w: where the shell made the job a process group leader (job
# control), setsid forks, and then waits for the suite.
if [ "${HPN_TEST_SERIAL:-no}" != yes ] && setsid -w true 2>/dev/null; then
	first=yes
	for s in $suites; do
		case " $BACKGROUND " in
		*" $s "*)	;;
		*)		first=no; continue ;;
		esac
		f="$HPN_TOP/regress/t-$s.sh"
		[ $first = no ] && [ -f "$f" ] && [ ! -f "$WORK/$s.t0" ] ||
		    continue
		date +%s >"$WORK/$s.t0"
		HPN_RESULTS="$WORK/$s.results" SUITE="$s" \
		    setsid -w $IDLE sh "$f" >"$WORK/$s.out" 2>&1 &
		echo $! >"$WORK/$s.pid"
		bg_pids="$bg_pids $!"
	done
fi

for s in $suites; do
	f="$HPN_TOP/regress/t-$s.sh"
	if [ ! -f "$f" ]; then
		echo "not ok - $s: no such suite ($f)"
		echo "FAIL $s: no such suite" >>"$RESULTS"
		continue
	fi
	echo "# suite $s"
	s0=`date +%s`
	if [ -f "$WORK/$s.pid" ]; then
		pid=`cat "$WORK/$s.pid"`
		rm -f "$WORK/$s.pid"
		wait $pid
		rc=$?
		bg_pids=`echo $bg_pids | tr ' ' '\n' | grep -vx "$pid"`
		cat "$WORK/$s.out"
		cat "$WORK/$s.results" >>"$RESULTS" 2>/dev/null
		echo "# suite $s: started in the background, waited" \
		    "`expr \`date +%s\` - $s0` s for the rest"
		s0=`cat "$WORK/$s.t0"`
	else
		HPN_RESULTS="$RESULTS" SUITE="$s" sh "$f"
		rc=$?
	fi
	if [ $rc -ne 0 ]; then
		echo "not ok - $s: suite exited with status $rc"
		echo "FAIL $s: suite exited with status $rc" >>"$RESULTS"
	fi
	echo "# suite $s: `expr \`date +%s\` - $s0` s"
done

npass=`grep -c '^PASS ' "$RESULTS"`
nfail=`grep -c '^FAIL ' "$RESULTS"`
nskip=`grep -c '^SKIP ' "$RESULTS"`
echo "#"
echo "# total time: `expr \`date +%s\` - $start` s"
if [ "$nskip" -gt 0 ]; then
	echo "# skipped:"
	sed -n 's/^SKIP /#   /p' "$RESULTS"
fi
if [ "$nfail" -gt 0 ]; then
	echo "# FAILED:"
	sed -n 's/^FAIL /#   /p' "$RESULTS"
fi
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
