#!/bin/sh
#
# apply-series.sh: apply PATCHDIR/series to TREE with patch -p1, strictly.
#
# usage: apply-series.sh PATCHDIR TREE
#
# A patch applies only if every hunk matches exactly where it says: no
# fuzz, no offset.  Each patch is first tried with --dry-run, so a bad
# one leaves the tree as the previous patch left it, and the error names
# the patch and the file.

set -u

PATCHDIR="$1"
TREE="$2"
PATCH="${PATCH:-patch}"
SERIES="$PATCHDIR/series"

if [ ! -f "$SERIES" ]; then
	echo "apply-series: no series file: $SERIES" >&2
	exit 1
fi

n=0
for p in `sed -e 's/#.*//' "$SERIES"`; do
	f="$PATCHDIR/$p"
	if [ ! -f "$f" ]; then
		echo "apply-series: $SERIES names $p, which does not exist" >&2
		exit 1
	fi
	# Remember the last file patch names, to say which one failed.
	log=`$PATCH -d "$TREE" -p1 -F0 -N --dry-run <"$f" 2>&1`
	rc=$?
	bad=`printf "%s\n" "$log" | awk '
		/^patching file / { file = $3 }
		/^checking file / { file = $3 }
		/FAILED|offset|fuzz|Reversed|malformed|[Oo]nly garbage|No file to patch/ {
			print "  " file ": " $0
		}'`
	if [ $rc -ne 0 ] || [ -n "$bad" ]; then
		echo "apply-series: patch $p does not apply cleanly to $TREE:" >&2
		if [ -n "$bad" ]; then
			printf "%s\n" "$bad" >&2
		else
			printf "%s\n" "$log" >&2
		fi
		echo "apply-series: hunks must apply with no fuzz and no offset" >&2
		exit 1
	fi
	$PATCH -d "$TREE" -p1 -F0 -N -s --no-backup-if-mismatch <"$f" || {
		echo "apply-series: patch $p failed on $TREE" >&2
		exit 1
	}
	echo "apply-series: applied $p"
	n=`expr $n + 1`
done
echo "apply-series: $n patches applied to $TREE"
