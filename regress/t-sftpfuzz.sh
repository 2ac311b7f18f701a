#!/bin/sh
#
# t-sftpfuzz.sh: differential fuzzing of scp and sftp, ours against the
# unpatched client (lib-sftp.sh): for each seed, a random tree, copy mode
# and mix of the adversary's switches (short reads of random sizes,
# replies in random order, delays, small listings that start over, a
# failing READ or WRITE, refused opens, handle limits, hostile names, a
# dropped connection), from sftp-adversary.py's fuzz_case().  Without a
# drop: the same exit status, messages and files as the unpatched
# client, and nothing lost; with one: nothing lost or left unnamed.
#
#   HPN_FUZZ_SEEDS	how many seeds (default 40; make fuzz-sftp: 2000)
#   HPN_FUZZ_FIRST	the first seed (default 1)
#
# A failing seed reruns alone with HPN_FUZZ_FIRST=SEED HPN_FUZZ_SEEDS=1.

. "`dirname "$0"`/lib.sh"
. "$HPN_TOP/regress/lib-sftp.sh"

grep -q 'sftp-batch' "$HPN_BUILD/Makefile.in" 2>/dev/null || {
	skip sftpfuzz "the tree under test has no sftp-batch.c"
	exit 0
}
if default_release_only "fuzz seeds"; then
	exit 0
fi

first=${HPN_FUZZ_FIRST:-1}
n=${HPN_FUZZ_SEEDS:-40}
seed=$first
while [ $seed -lt $((first + n)) ]; do
	set -- `/usr/bin/python3 "$ADV" fuzzcase $seed`
	adv_setup $seed "$3"
	case $2 in
	*drop=*)
		adv_copy hpn "$1" "$2"
		adv_done "seed$seed-status" || :
		adv_lossless "seed$seed" "$1"
		;;
	*)
		adv_same "seed$seed" "$1" "$2"
		;;
	esac
	seed=$((seed + 1))
done
echo "# $SUITE: seeds $first to $((seed - 1))"
