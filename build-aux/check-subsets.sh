#!/bin/sh
#
# check-subsets.sh: check that every subset of a set of patches, taken in
# the order given, applies to a pristine tree with plain "patch -p1" and
# without fuzz (offsets are fine: a patch may land a few lines away when
# an earlier one added lines above it).  With one patch per feature, this
# is the promise that a user never resolves a reject, whichever features
# they pick.  A patch whose DEP-3 header says "Needs: OTHER.patch" is a
# feature built on another one (0010's verified resume on 0007's
# pipeline): a subset that has it without OTHER is not one a user can
# pick, and is skipped.
#
# usage: check-subsets.sh PRISTINE-TREE PATCH...
#
# Prints one line per subset, "ok", "skip" (a patch without what it
# needs) or the patch and hunks that failed, and exits 1 if any subset
# failed.  Only the files the patches touch are
# copied, so all 2^n - 1 subsets of a handful of patches take seconds.

set -u

PRISTINE="$1"
shift
n=$#
if [ $n -eq 0 ] || [ $n -gt 12 ]; then
	echo "check-subsets: give 1 to 12 patches" >&2
	exit 2
fi
WORK=`mktemp -d "${TMPDIR:-/tmp}/subsets.XXXXXX"` || exit 1
trap 'rm -rf "$WORK"' 0
trap 'exit 1' 1 2 15

# The files any of the patches touch that exist in the pristine tree.
for p in "$@"; do
	sed -n 's|^--- a/\([^ 	]*\).*|\1|p' "$p"
done | LC_ALL=C sort -u >"$WORK/files"
mkdir "$WORK/base"
(cd "$PRISTINE" && tar -cf - -T "$WORK/files") |
    (cd "$WORK/base" && tar -xf -) || {
	echo "check-subsets: cannot copy files from $PRISTINE" >&2
	exit 1
}

# needs[i]: the bit mask of the patches that patch i needs.
i=0
for p in "$@"; do
	m=0
	for need in `sed '/^---$/q' "$p" | sed -n 's/^Needs: //p' | tr ',' ' '`; do
		j=0
		found=
		for q in "$@"; do
			if [ "`basename "$q"`" = "$need" ]; then
				m=$((m | (1 << j)))
				found=1
			fi
			j=$((j + 1))
		done
		[ -n "$found" ] || {
			echo "check-subsets: `basename "$p"` needs $need," \
			    "which is not among the patches" >&2
			exit 2
		}
	done
	eval "needs$i=$m"
	i=$((i + 1))
done

bad=0
skipped=0
total=$((1 << n))
mask=1
while [ $mask -lt $total ]; do
	i=0
	lack=
	for p in "$@"; do
		eval "m=\$needs$i"
		if [ $(((mask >> i) & 1)) -eq 1 ] && [ $((mask & m)) -ne $m ]; then
			lack="`basename "$p"` without what it needs"
		fi
		i=$((i + 1))
	done
	if [ -n "$lack" ]; then
		echo "skip mask $mask: $lack"
		skipped=$((skipped + 1))
		mask=$((mask + 1))
		continue
	fi
	rm -rf "$WORK/t"
	cp -a "$WORK/base" "$WORK/t"
	names=
	err=
	i=0
	for p in "$@"; do
		if [ $(((mask >> i) & 1)) -eq 1 ]; then
			names="$names${names:+ + }`basename "$p" .patch`"
			out=`patch -d "$WORK/t" -p1 -F0 -N --no-backup-if-mismatch \
			    <"$p" 2>&1`
			rc=$?
			why=`printf "%s\n" "$out" | grep -E \
			    'FAILED|fuzz|Reversed|malformed|garbage|No file'`
			if [ $rc -ne 0 ] || [ -n "$why" ]; then
				err="`basename "$p"`: ${why:-patch exit $rc}"
				break
			fi
		fi
		i=$((i + 1))
	done
	if [ -n "$err" ]; then
		echo "FAIL $names: $err"
		bad=$((bad + 1))
	else
		echo "ok   $names"
	fi
	mask=$((mask + 1))
done
if [ $bad -ne 0 ]; then
	echo "check-subsets: $bad of $((total - 1 - skipped)) subsets do not" \
	    "apply" >&2
	exit 1
fi
echo "check-subsets: all $((total - 1 - skipped)) subsets apply without fuzz" \
    "($skipped skipped: a patch without what it needs)"
