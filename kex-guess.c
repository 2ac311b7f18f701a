/*
 * Copyright (c) 2026 The hpn-patches authors.
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * RFC 4253 section 7: a client may send its first key exchange packet right
 * behind its KEXINIT, guessing the algorithms.  Ours does on a rekey where
 * the last two exchanges showed that the server lists first the KEX and
 * host key algorithms in use, the same ones both times (kex_guess_check),
 * once it has put them first in its own proposal (kex_guess_order).  A sshd
 * that rekeys during a transfer sends no data from its KEXINIT until our
 * NEWKEYS; with the guess that is one round trip, not two.
 *
 * A server whose first algorithms change between KEXINITs would drop a
 * guess made from the last ones, and one that takes a guess it should drop
 * (a wrong host key algorithm; asyncssh compares only the KEX method)
 * answers a packet we no longer stand by: the exchange fails.  So the
 * first rekey never guesses, and once the server's first algorithms
 * change, or it drops a guess, the connection guesses no more.
 *
 * Only for the methods whose keys kex_gen_client() keeps in struct kex, and
 * only with OpenSSH, whose handling of guesses we test.  kex.c calls in when
 * it sends a KEXINIT (kex_guess_kexinit, kex_guess_send), when it receives
 * one (kex_guess_check, kex_guess_taken) and after NEWKEYS
 * (kex_guess_order); kexgen.c expects the reply once the server's KEXINIT
 * is in.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sshbuf.h"
#include "packet.h"
#include "kex.h"
#include "kex-guess.h"
#include "log.h"
#include "match.h"
#include "ssherr.h"
#include "version.h"
#ifdef SSH_HPN
#include "hpn-window.h"
#endif

/* The methods whose client keys kex_gen_client() keeps in struct kex. */
#define KEX_GUESS_METHODS \
	"curve25519-sha256,curve25519-sha256@libssh.org," \
	"sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com," \
	"mlkem768x25519-sha256"

/*
 * Whether our client may guess on this connection: not after the server
 * showed that it may drop a guess (KEX_GUESS_NEVER).  Where the dynamic
 * windows are in too (their version tag, SSH_HPN), HPNDisabled turns the
 * guess off with them.
 */
static int
kex_guess_allowed(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;

	if (kex->server || (kex->flags & KEX_GUESS_NEVER) != 0)
		return 0;
#ifdef SSH_HPN
	return hpn_window_kex_guess(ssh);
#else
	return 1;
#endif
}

/* Whether our client's next rekey guesses. */
static int
kex_guess(struct ssh *ssh)
{
	return (ssh->kex->flags & KEX_GUESS_OK) != 0 && kex_guess_allowed(ssh);
}

/*
 * Puts the KEX and host key algorithms just negotiated first in our
 * proposal where the server listed them first (a later rekey may guess):
 * the negotiation picks them either way, the server takes a guess only if
 * they are first, and its next KEXINIT shows whether it still lists them
 * first (kex_guess_check).
 */
int
kex_guess_order(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;
	const int idx[2] = { PROPOSAL_KEX_ALGS, PROPOSAL_SERVER_HOST_KEY_ALGS };
	const char *first[2];
	char **prop = NULL, *cp, *s;
	u_int i;
	int r;

	if ((kex->flags & KEX_GUESS_SEEN) == 0 || !kex_guess_allowed(ssh) ||
	    kex->name == NULL || kex->hostkey_alg == NULL)
		return 0;
	if ((r = kex_buf2prop(kex->my, NULL, &prop)) != 0)
		return r;
	first[0] = kex->name;
	first[1] = kex->hostkey_alg;
	for (i = 0; i < 2; i++) {
		if ((cp = match_filter_denylist(prop[idx[i]],
		    first[i])) == NULL) {
			r = SSH_ERR_ALLOC_FAIL;
			goto out;
		}
		if (asprintf(&s, "%s%s%s", first[i],
		    *cp == '\0' ? "" : ",", cp) == -1) {
			free(cp);
			r = SSH_ERR_ALLOC_FAIL;
			goto out;
		}
		free(cp);
		free(prop[idx[i]]);
		prop[idx[i]] = s;
	}
	if ((r = kex_prop2buf(kex->my, prop)) == 0)
		kex->flags |= KEX_GUESS_ORDERED;
 out:
	kex_prop_free(prop);
	return r;
}

/*
 * Sets the first_kex_packet_follows field of the KEXINIT we are about to
 * send, and *guess to whether it guesses.
 */
int
kex_guess_kexinit(struct ssh *ssh, int *guess)
{
	struct kex *kex = ssh->kex;
	u_char *p;
	size_t len;

	*guess = kex_guess(ssh) && (kex->flags & KEX_GUESS_ORDERED) != 0;
	/* It comes before the reserved uint32 */
	if ((len = sshbuf_len(kex->my)) < KEX_COOKIE_LEN + 5 ||
	    (p = sshbuf_mutable_ptr(kex->my)) == NULL)
		return SSH_ERR_INTERNAL_ERROR;
	p[len - 5] = *guess != 0;
	return 0;
}

/* Sends our first key exchange packet right behind our KEXINIT. */
int
kex_guess_send(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;

	debug("SSH2_MSG_KEXINIT guesses the key exchange");
	kex->flags |= KEX_GUESS_SENT;
	return (kex->kex[kex->kex_type])(ssh);
}

/*
 * After the server's KEXINIT: whether it takes the packet we sent behind
 * ours (kex_guess_check kept it); if so, we now expect its reply.
 */
int
kex_guess_taken(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;

	if ((kex->flags & KEX_GUESS_SENT) == 0)
		return 0;
	kex->flags &= ~KEX_GUESS_SENT;
	kex_gen_client_reply(ssh);
	return 1;
}

/*
 * Whether the server, OpenSSH by its banner, lists first in its KEXINIT
 * (peer) the KEX and host key algorithms now in use, a KEX method whose
 * keys kex_gen_client() keeps.
 */
static int
kex_guess_first(struct kex *kex, char **peer)
{
	const int idx[2] = { PROPOSAL_KEX_ALGS, PROPOSAL_SERVER_HOST_KEY_ALGS };
	const char *first[2];
	size_t len;
	u_int i;

	if (kex->name == NULL || kex->hostkey_alg == NULL ||
	    match_pattern_list(kex->name, KEX_GUESS_METHODS, 0) != 1)
		return 0;
	if (sshbuf_cmp(kex->server_version, 0, "SSH-2.0-OpenSSH_", 16) != 0)
		return 0;
	first[0] = kex->name;
	first[1] = kex->hostkey_alg;
	for (i = 0; i < 2; i++) {
		len = strcspn(peer[idx[i]], ",");
		if (strlen(first[i]) != len ||
		    strncmp(first[i], peer[idx[i]], len) != 0)
			return 0;
	}
	return 1;
}

/*
 * After a KEXINIT from the server: forgets a guess the server drops (it
 * does unless our first KEX and host key algorithms are its first ones:
 * match, from kex.c's proposals_match()), and notes whether the next rekey
 * may guess: where the server lists first the algorithms now in use
 * (kex_guess_first), and did so in its last KEXINIT too (KEX_GUESS_SEEN),
 * the same ones (our proposal has those first: KEX_GUESS_ORDERED, and they
 * match).  A dropped guess or first algorithms that changed end the
 * guesses (KEX_GUESS_NEVER).
 */
void
kex_guess_check(struct kex *kex, char **peer, int match)
{
	int seen, same, first;

	if (kex->server)
		return;
	if ((kex->flags & KEX_GUESS_SENT) != 0 && !match) {
		debug_f("the server drops our guess; no more guesses");
		kex->flags &= ~KEX_GUESS_SENT;
		kex->flags |= KEX_GUESS_NEVER;
		sshbuf_free(kex->client_pub);
		kex->client_pub = NULL;
	}
	seen = (kex->flags & KEX_GUESS_SEEN) != 0;
	same = seen && (kex->flags & KEX_GUESS_ORDERED) != 0 && match;
	kex->flags &= ~(KEX_GUESS_OK|KEX_GUESS_SEEN);
	if ((kex->flags & KEX_GUESS_NEVER) != 0)
		return;
	first = kex_guess_first(kex, peer);
	if (seen && (!first ||
	    ((kex->flags & KEX_GUESS_ORDERED) != 0 && !match))) {
		debug_f("the server's first algorithms changed; "
		    "no more guesses");
		kex->flags |= KEX_GUESS_NEVER;
		return;
	}
	if (!first)
		return;
	kex->flags |= KEX_GUESS_SEEN;
	if (same)
		kex->flags |= KEX_GUESS_OK;
}
