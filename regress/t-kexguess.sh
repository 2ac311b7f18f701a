#!/bin/sh
#
# t-kexguess.sh: the client's guessed key exchange on a rekey (patch
# 0003), between two in-memory endpoints (regress/unit/test_kex_guess.c,
# linked with the patched libssh): the client guesses, a KEX_ECDH_REPLY
# that comes before the server's KEXINIT is a protocol error (not a reply
# to the guess), and the guessed exchange and the next one complete.
# The real processes' guesses are t-window's and t-interop's.

. "`dirname "$0"`/lib.sh"

B="$HPN_BUILD"
[ -f "$B/libssh.a" ] || die "no libssh.a in $B: run make first"
# The PKCS#11 client left libssh in 10.1p1: link its object like the SK one.
objs="$B/ssh-sk-client.o"
[ -f "$B/ssh-pkcs11-client.o" ] && objs="$objs $B/ssh-pkcs11-client.o"
if ${CC:-cc} -O2 -g -I"$B" -I"$B/openbsd-compat" -o "$TESTDIR/test_kex_guess" \
    "$HPN_TOP/regress/unit/test_kex_guess.c" $objs \
    -L"$B" -L"$B/openbsd-compat" -lssh -lopenbsd-compat -lssh \
    -lopenbsd-compat -lcrypto -lz -lpthread >"$TESTDIR/cc.out" 2>&1; then
	"$TESTDIR/test_kex_guess" >"$TESTDIR/out" 2>"$TESTDIR/err"
	sed -n 's/^ok - \(.*\)/\1/p' "$TESTDIR/out" | while read -r t; do
		pass "$t"
	done
	sed -n 's/^not ok - \([^:]*\): \(.*\)/\1 \2/p' "$TESTDIR/out" |
	    while read -r t why; do
		fail "$t" "$why"
	done
	check summary grep -q "^2 passed, 0 failed" "$TESTDIR/out"
else
	fail build "`grep -m1 error "$TESTDIR/cc.out"`"
fi
exit 0
