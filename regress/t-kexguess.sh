#!/bin/sh
#
# t-kexguess.sh: the client's guessed key exchange on a rekey (patch
# 0008, kex-guess.c), between two in-memory endpoints
# (regress/unit/test_kex_guess.c, linked with the patched libssh): the
# client guesses, a KEX_ECDH_REPLY that comes before the server's KEXINIT
# is a protocol error (not a reply to the guess), and the guessed
# exchange and the next one complete; a message the server sends after
# its NEWKEYS, before the client's, goes out at once and reaches the
# client (patch 0003's ssh_packet_kex_holds_output()).
# The real processes' guesses are t-rekey's and t-interop's.

. "`dirname "$0"`/lib.sh"

[ -f "$HPN_BUILD/libssh.a" ] || die "no libssh.a in $HPN_BUILD: run make first"
unit_libssh test_kex_guess "" 3
exit 0
