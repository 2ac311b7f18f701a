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

HPN_TOP="${HPN_TOP:-`cd "\`dirname "$0"\`/.." && pwd`}"
export HPN_TOP
export HPN_BUILD="${HPN_BUILD:-$HPN_TOP/build/hpn}"
export STOCK_BUILD="${STOCK_BUILD:-$HPN_TOP/build/stock}"

QUICK="build docs security unit basic interop chachapoly mtaes none kexguess rekey mptcp stats translog window windowlong busy sftppipe sftpbatch sftpadv resume verdict sftpfuzz memory dist"

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

RESULTS=`mktemp "${TMPDIR:-/tmp}/hpn-results.XXXXXXXX"` || exit 1
trap 'rm -f "$RESULTS"' 0
trap 'exit 1' 1 2 15

start=`date +%s`
for s in $suites; do
	f="$HPN_TOP/regress/t-$s.sh"
	if [ ! -f "$f" ]; then
		echo "not ok - $s: no such suite ($f)"
		echo "FAIL $s: no such suite" >>"$RESULTS"
		continue
	fi
	echo "# suite $s"
	s0=`date +%s`
	HPN_RESULTS="$RESULTS" SUITE="$s" sh "$f"
	rc=$?
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
