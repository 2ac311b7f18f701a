#!/bin/sh
#
# t-resumecut.sh: resumed copies cut short lose nothing (patch 0010 with
# 0007's many-files engine).
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

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"
. "$HPN_TOP/regress/lib-resume.sh"

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
make_src "$TESTDIR/c/src" 5 16
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
exit 0
