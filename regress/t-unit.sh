#!/bin/sh
#
# t-unit.sh: the MT-AES-CTR engine on its own, against OpenSSL's serial
# AES-CTR (regress/unit/test_ctr_mt.c), built three ways: plain, with
# AddressSanitizer + UndefinedBehaviorSanitizer, and with ThreadSanitizer;
# then Poly1305 from libcrypto against RFC 8439 and the portable code
# (regress/unit/test_poly1305.c), plain and with ASan + UBSan.  Each case a
# program reports becomes one result here; a sanitizer report fails the
# variant.

. "`dirname "$0"`/lib.sh"

CC="${CC:-cc}"
PROG=test_ctr_mt
SRC="$HPN_TOP/regress/unit/test_ctr_mt.c $HPN_TOP/cipher-ctr-mt.c"
# CTR_MT_TEST: lets the tests stall workers between chunks.
DEFS="-DCTR_MT_TEST"
INC="-I$HPN_BUILD -I$HPN_BUILD/openbsd-compat -I$HPN_TOP"
LIBS="-L$HPN_BUILD/openbsd-compat -lopenbsd-compat -lcrypto -lpthread"

[ -f "$HPN_BUILD/config.h" ] || die "no configured tree at $HPN_BUILD"
[ -f "$HPN_BUILD/openbsd-compat/libopenbsd-compat.a" ] ||
    die "no libopenbsd-compat.a in $HPN_BUILD: run make first"

# variant NAME CFLAGS [ENV...]: builds $PROG from $SRC and runs it.
variant() {
	_v="$1"
	_flags="$2"
	shift 2
	_bin="$TESTDIR/$PROG.$_v"
	# shellcheck disable=SC2086
	if ! $CC $_flags $DEFS $INC -o "$_bin" $SRC $LIBS >"$TESTDIR/cc.$_v" 2>&1
	then
		if [ "${_v%plain}" = "$_v" ] && grep -q "cannot find.*lib[at]san\|sanitizer" \
		    "$TESTDIR/cc.$_v"; then
			skip "$_v" "compiler has no $_v runtime: `tail -n1 \
			    "$TESTDIR/cc.$_v"`"
		else
			fail "$_v-build" "`grep -m1 error "$TESTDIR/cc.$_v"`"
		fi
		return
	fi
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
}

variant plain "-O2 -g"
variant asan-ubsan "-O1 -g -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=all" \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 \
    CTR_MT_QUICK=1
variant tsan "-O1 -g -fsanitize=thread" \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 CTR_MT_QUICK=1

# Poly1305 (poly1305-evp.c) against RFC 8439 and OpenSSH's portable code,
# and chachapoly_crypt() from the patched libssh against the construction.
[ -f "$HPN_BUILD/libssh.a" ] || die "no libssh.a in $HPN_BUILD: run make first"
PROG=test_poly1305
SRC="$HPN_TOP/regress/unit/test_poly1305.c $HPN_TOP/poly1305-evp.c \
    $HPN_BUILD/poly1305.c"
DEFS=
LIBS="-L$HPN_BUILD -L$HPN_BUILD/openbsd-compat -lssh -lopenbsd-compat -lssh \
    -lopenbsd-compat -lcrypto -lz -lpthread"
variant poly1305-plain "-O2 -g"
variant poly1305-asan-ubsan "-O1 -g -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=all" \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 \
    POLY_QUICK=1
exit 0
