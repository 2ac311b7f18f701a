#!/bin/sh
#
# t-unit.sh: unit tests, each program built several ways; each case a
# program reports becomes one result here, and a sanitizer report fails
# the variant.
# - The MT-AES-CTR engine on its own, against OpenSSL's serial AES-CTR
#   (regress/unit/test_ctr_mt.c): plain, with AddressSanitizer +
#   UndefinedBehaviorSanitizer, and with ThreadSanitizer.
# - The same engine's ChaCha20, chacha20-poly1305@openssh.com packets
#   against the patched libssh's serial chachapoly_crypt()
#   (regress/unit/test_chacha_mt.c): the same three ways.
# - scp/sftp's progress meter (the patched progressmeter.c, compiled into
#   regress/unit/test_progressmeter.c with a fake clock, linked with the
#   patched libssh.a) on a pseudo-terminal, fed rates above 2 GiB/s:
#   plain, and with ASan + UBSan.
# - scp/sftp's request pipeline (sftp-pipeline.c, compiled into
#   regress/unit/test_sftp_pipeline.c with a fake clock) on simulated
#   paths: plain, and with ASan + UBSan.
# - Poly1305 from libcrypto (poly1305-evp.c) against RFC 8439 and OpenSSH's
#   portable code, and chachapoly_crypt() from the patched libssh against
#   the construction (regress/unit/test_poly1305.c): plain, and with
#   ASan + UBSan.

. "`dirname "$0"`/lib.sh"

# UBSan: GCC's "undefined" leaves out float-cast-overflow (a double too
# large for its integer type), which the meter's rates need.
ASAN_UBSAN="-O1 -g -fno-omit-frame-pointer \
    -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all"
ASAN_UBSAN_ENV="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=halt_on_error=1"

[ -f "$HPN_BUILD/config.h" ] || die "no configured tree at $HPN_BUILD"
[ -f "$HPN_BUILD/openbsd-compat/libopenbsd-compat.a" ] ||
    die "no libopenbsd-compat.a in $HPN_BUILD: run make first"

# variant NAME CFLAGS [ENV...]: build program $PROG with CFLAGS
# (regress/unit/Makefile), run it; results are named $TAG$NAME/CASE.
variant() {
	_v="$TAG$1"
	_bin="$TESTDIR/$PROG.$_v"
	if ! unit_build "$_bin" "$2" >"$TESTDIR/cc.$_v" 2>&1; then
		if [ "$_v" != "${TAG}plain" ] &&
		    grep -q "cannot find.*lib[at]san\|sanitizer" "$TESTDIR/cc.$_v"
		then
			skip "$_v" "compiler has no $_v runtime: `tail -n1 \
			    "$TESTDIR/cc.$_v"`"
		else
			fail "$_v-build" "`grep -m1 error "$TESTDIR/cc.$_v"`"
		fi
		return
	fi
	shift 2
	env "$@" "$_bin" >"$TESTDIR/out.$_v" 2>&1
	_rc=$?
	sed -n 's/^ok - \(.*\)/\1/p' "$TESTDIR/out.$_v" | while read -r _t; do
		pass "$_v/$_t"
	done
	sed -n 's/^not ok - \(.*\)/\1/p' "$TESTDIR/out.$_v" | while read -r _t; do
		fail "$_v/$_t" "see $PROG's output"
	done
	if grep -q "Sanitizer\|runtime error:" "$TESTDIR/out.$_v"; then
		fail "$_v-sanitizer" "`grep -m1 'Sanitizer\|runtime error:' \
		    "$TESTDIR/out.$_v"`"
		grep -A12 -m1 "Sanitizer\|runtime error:" "$TESTDIR/out.$_v" |
		    sed 's/^/#   /'
	elif [ $_rc -ne 0 ]; then
		fail "$_v-exit" "exit status $_rc: `tail -n1 "$TESTDIR/out.$_v"`"
	elif ! grep -q "^[0-9]* passed, 0 failed" "$TESTDIR/out.$_v"; then
		fail "$_v-summary" "no summary line: `tail -n1 "$TESTDIR/out.$_v"`"
	else
		pass "$_v-clean"
	fi
	grep '^# final line:' "$TESTDIR/out.$_v" || :
}

# The engine.
PROG=test_ctr_mt
TAG=
variant plain "-O2 -g"
# shellcheck disable=SC2086
variant asan-ubsan "$ASAN_UBSAN" $ASAN_UBSAN_ENV CTR_MT_QUICK=1
variant tsan "-O1 -g -fsanitize=thread" \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 CTR_MT_QUICK=1

# The engine's ChaCha20.
PROG=test_chacha_mt
TAG=chacha-
if [ -f "$HPN_BUILD/libssh.a" ]; then
	variant plain "-O2 -g"
	# shellcheck disable=SC2086
	variant asan-ubsan "$ASAN_UBSAN" $ASAN_UBSAN_ENV CTR_MT_QUICK=1
	variant tsan "-O1 -g -fsanitize=thread" \
	    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    CTR_MT_QUICK=1
else
	fail chacha-build "no libssh.a in $HPN_BUILD: run make first"
fi

# The progress meter.
PROG=test_progressmeter
TAG=meter-
if [ -f "$HPN_BUILD/libssh.a" ]; then
	variant plain "-O2 -g"
	# shellcheck disable=SC2086
	variant asan-ubsan "$ASAN_UBSAN" $ASAN_UBSAN_ENV
else
	fail meter-build "no libssh.a in $HPN_BUILD: run make first"
fi

# The scp/sftp request pipeline.
PROG=test_sftp_pipeline
TAG=pipeline-
if [ ! -f "$HPN_BUILD/sftp-pipeline.c" ]; then
	skip pipeline "the tree under test has no sftp-pipeline.c"
elif [ -f "$HPN_BUILD/libssh.a" ]; then
	variant plain "-O2 -g"
	# shellcheck disable=SC2086
	variant asan-ubsan "$ASAN_UBSAN" $ASAN_UBSAN_ENV
else
	fail pipeline-build "no libssh.a in $HPN_BUILD: run make first"
fi

# Poly1305.
PROG=test_poly1305
TAG=poly1305-
if [ -f "$HPN_BUILD/libssh.a" ]; then
	variant plain "-O2 -g"
	# shellcheck disable=SC2086
	variant asan-ubsan "$ASAN_UBSAN" $ASAN_UBSAN_ENV POLY_QUICK=1
else
	fail poly1305-build "no libssh.a in $HPN_BUILD: run make first"
fi
exit 0
