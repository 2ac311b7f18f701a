#!/bin/sh
#
# check-fixes.sh: which of OpenSSH's published security fixes a release's
# source tree carries (patches/security).
#
# usage: check-fixes.sh RELEASE BASE [TREE]
#
# RELEASE is an OpenSSH release (9.2p1); BASE is "upstream" or
# "debian:SUITE".  With TREE, every fix of the table that affects RELEASE
# is looked for in TREE:
#   - a fix upstream made in RELEASE or before must show its marker: if
#     not, the table is wrong (exit 2);
#   - a later fix is carried if its marker is there, or, for a row
#     without a marker, if BASE is Debian's and an entry of Debian's in
#     TREE/debian/changelog (not ours, "+hpn") names the fix's id.
# Without TREE (upstream bases only) the answer comes from the table:
# every later fix is missing.
#
# Prints "carried ID" and "missing ID: WHAT" lines, then a summary line.
# Exit status: 0 if nothing is missing, 1 if fixes are missing, 2 on a
# usage error or a marker that disagrees with the table.

set -u
[ $# -ge 2 ] && [ $# -le 3 ] ||
    { echo "usage: check-fixes.sh RELEASE BASE [TREE]" >&2; exit 2; }
R="$1"
BASE="$2"
TREE="${3:-}"
HERE=`cd "\`dirname "$0"\`" && pwd`
TABLE="${HPN_SECURITY_TABLE:-$HERE/../patches/security}"
LC_ALL=C
export LC_ALL

case "$BASE" in
upstream|debian:?*)	;;
*)	echo "check-fixes: unknown base $BASE (upstream or debian:SUITE)" >&2
	exit 2 ;;
esac
[ -f "$TABLE" ] || { echo "check-fixes: no $TABLE" >&2; exit 2; }
if [ -n "$TREE" ] && [ ! -d "$TREE" ]; then
	echo "check-fixes: no such tree: $TREE" >&2
	exit 2
fi
if [ -z "$TREE" ] && [ "$BASE" != upstream ]; then
	echo "check-fixes: a $BASE base needs its TREE" >&2
	exit 2
fi

# older A B: A is an older release than B ("0" is older than any).
older() {
	[ "x$1" != "x$2" ] &&
	    [ "x`printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1`" = "x$1" ]
}

# The body of function FN in FILE (from its name at the start of a line
# to the first "}" at the start of a line).
body() {
	awk -v fn="$1" '
		$0 ~ "^" fn "\\(" { on = 1 }
		on { print }
		on && /^}/ { exit }' "$2"
}

# grace_is_safe TREE: sshd's login grace alarm handler logs nothing:
# either it does not call sigdie(), or sshsigdie() has its logging
# compiled out (#if 0 before its sshlogv call).
grace_is_safe() {
	for f in "$1/sshd-session.c" "$1/sshd.c"; do
		[ -f "$f" ] && grep -q '^grace_alarm_handler(' "$f" && break
	done
	grep -q '^grace_alarm_handler(' "$f" 2>/dev/null || return 1
	body grace_alarm_handler "$f" | grep -q 'sigdie(' || return 0
	body sshsigdie "$1/log.c" |
	    awk '/^#if 0/ { off = 1 } /^#endif/ { off = 0 }
		/sshlogv\(|syslog\(/ && !off { bad = 1 }
		END { exit bad }'
}

# has_marker FILE MARKER
has_marker() {
	if [ "x$2" = "x@grace" ]; then
		grace_is_safe "$TREE"
	else
		[ -f "$TREE/$1" ] && grep -qF -- "$2" "$TREE/$1"
	fi
}

# Debian's changelog names the fix: in an entry of Debian's, not one of
# ours (a version with "+hpn", which build-aux/mkdeb.sh writes and which
# names the fixes a build lacks).
debian_names() {
	[ -f "$TREE/debian/changelog" ] &&
	    awk '/^[a-z0-9][a-z0-9.+-]* \(/ { ours = ($2 ~ /\+hpn/) }
		!ours { print }' "$TREE/debian/changelog" | grep -qw -- "$1"
}

# The rows, their fields separated by tabs (the table's " | " is not
# used inside a marker: "||" and "|=" are).
TAB=`printf '\t'`
ROWS=`sed -e 's/^#.*//' -e '/^[ 	]*$/d' "$TABLE" |
    awk -F' [|] ' -v OFS="$TAB" '{
	for (i = 1; i <= NF; i++)
		gsub(/^[ \t]+|[ \t]+$/, "", $i)
	if (NF != 6) {
		print "check-fixes: not 6 fields: " $0 >"/dev/stderr"
		exit 2
	}
	print $1, $2, $3, $4, $5, $6 }'` || exit 2

ncarried=0
nmissing=0
bad=0
OLDIFS="$IFS"
IFS='
'
for row in $ROWS; do
	IFS="$TAB"
	set -- $row
	IFS="$OLDIFS"
	id="$1" fixed="$2" since="$3" file="$4" marker="$5" what="$6"
	# Not affected: the release predates the bug.
	if older "$R" "$since"; then
		continue
	fi
	if ! older "$R" "$fixed"; then
		# Upstream's own release carries it; its marker must show.
		if [ -n "$TREE" ] && [ "x$marker" != "x-" ] &&
		    ! has_marker "$file" "$marker"; then
			echo "check-fixes: $id is in OpenSSH $fixed, but $TREE/$file lacks its marker: $marker" >&2
			bad=1
		fi
		continue
	fi
	how=""
	if [ -n "$TREE" ]; then
		if [ "x$marker" != "x-" ]; then
			has_marker "$file" "$marker" && how="$file"
		elif [ "$BASE" != upstream ] && debian_names "$id"; then
			how="debian/changelog"
		fi
	fi
	if [ -n "$how" ]; then
		echo "carried $id ($how)"
		ncarried=`expr $ncarried + 1`
	else
		echo "missing $id: $what (fixed in $fixed)"
		nmissing=`expr $nmissing + 1`
	fi
done
IFS="$OLDIFS"

echo "check-fixes: OpenSSH $R on $BASE: $ncarried later fixes carried, $nmissing missing"
[ $bad -eq 0 ] || exit 2
[ $nmissing -eq 0 ] || exit 1
exit 0
