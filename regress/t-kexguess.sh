#!/bin/sh
#
# t-kexguess.sh: the client's guessed key exchange on a rekey (patch
# 0008, kex-guess.c), between two in-memory endpoints
# (regress/unit/test_kex_guess.c, linked with the patched libssh): the
# client guesses, a KEX_ECDH_REPLY that comes before the server's KEXINIT
# is a protocol error (not a reply to the guess), and the guessed
# exchange and the next one complete.
# The real processes' guesses are t-rekey's and t-interop's.

. "`dirname "$0"`/lib.sh"

[ -f "$HPN_BUILD/libssh.a" ] || die "no libssh.a in $HPN_BUILD: run make first"
unit_libssh test_kex_guess "" 2
exit 0
