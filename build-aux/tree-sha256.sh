#!/bin/sh
#
# tree-sha256.sh: the content pin of an unpacked OpenSSH release.
#
# usage: tree-sha256.sh DIR
#
# Prints the SHA-256 of the list of "MODE PATH SHA256" lines, one per
# file under DIR, sorted by PATH (bytewise): MODE is 100755 for a file its
# owner may execute, 100644 for any other file, 120000 for a symbolic link
# (whose SHA256 is that of its target's name).  These are what git records,
# so upstream's tarball, Debian's orig tarball (the same file) and a
# "git archive" of upstream's tag all give the same pin, whatever the
# archive's owners, times, group bits or the umask.  Directories count
# only through the files in them.  A device, fifo or socket, or a name
# with white space in it, is an error: no release has one.

set -u
LC_ALL=C
export LC_ALL

DIR="$1"
cd "$DIR" 2>/dev/null || {
	echo "tree-sha256: no such directory: $DIR" >&2
	exit 1
}
odd=`find . ! -type d ! -type f ! -type l | head -n 1`
if [ -n "$odd" ]; then
	echo "tree-sha256: $DIR: not a file, link or directory: $odd" >&2
	exit 1
fi
odd=`find . -name '*[[:space:]\\\\]*' | head -n 1`
if [ -n "$odd" ]; then
	echo "tree-sha256: $DIR: a name with white space or a backslash: $odd" >&2
	exit 1
fi
{
	find . -type f ! -perm -u+x -exec sha256sum {} + |
	    sed 's|^\([0-9a-f]*\)  \./\(.*\)$|100644 \2 \1|'
	find . -type f -perm -u+x -exec sha256sum {} + |
	    sed 's|^\([0-9a-f]*\)  \./\(.*\)$|100755 \2 \1|'
	find . -type l | while read -r l; do
		s=`readlink "$l" | tr -d '\n' | sha256sum | cut -c1-64`
		echo "120000 ${l#./} $s"
	done
} | sort -t ' ' -k 2,2 | sha256sum | cut -c1-64
