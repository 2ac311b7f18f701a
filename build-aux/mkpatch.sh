#!/bin/sh
#
# mkpatch.sh: write a patch between a pristine and a changed OpenSSH tree,
# for patches/.  Paths are a/FILE and b/FILE, no timestamps.
#
# usage: mkpatch.sh PRISTINE CHANGED HEADERFILE > patches/NNNN-name.patch
#
# HEADERFILE holds the DEP-3 header (Description, Author, Last-Update).
# Generated files (configure, config.h.in, aclocal leftovers) are ignored.

set -eu
OLD="$1"
NEW="$2"
HDR="$3"

cat "$HDR"
echo "---"
(cd "$NEW" && find . -type f ! -name '*.o' ! -name '*.a' \
    ! -path './autom4te.cache/*' ! -name configure ! -name config.h.in \
    ! -name '*.orig' ! -name '*.rej' | sed 's|^\./||' | LC_ALL=C sort) |
while read -r f; do
	if [ ! -f "$OLD/$f" ]; then
		diff -u --label /dev/null --label "b/$f" /dev/null "$NEW/$f" ||
		    true
	elif ! cmp -s "$OLD/$f" "$NEW/$f"; then
		diff -u -p --label "a/$f" --label "b/$f" "$OLD/$f" "$NEW/$f" ||
		    true
	fi
done
