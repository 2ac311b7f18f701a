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
 * Poly1305 for chacha20-poly1305@openssh.com from libcrypto where it has
 * one (OpenSSL 3's EVP_MAC "POLY1305", assembly on the common CPUs), and
 * OpenSSH's portable poly1305_auth() where it has not: OpenSSL before 3,
 * LibreSSL, or a library whose providers do not offer the algorithm.  Both
 * compute the same tag; only the CPU they spend differs.
 *
 * Each cipher context owns one struct poly1305_evp.  Its EVP_MAC_CTX is
 * made once, with the context, and keyed again with each packet's
 * one-time key, so the packet path neither fetches nor allocates.
 * OpenSSL wipes the Poly1305 state (key included) when it computes the
 * tag.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITH_OPENSSL
#include <openssl/opensslv.h>
#if OPENSSL_VERSION_NUMBER >= 0x30000000L && !defined(LIBRESSL_VERSION_NUMBER)
#include <openssl/err.h>
#include <openssl/evp.h>
#define POLY1305_EVP_MAC	1
#endif
#endif

#include "log.h"
#include "ssherr.h"
#include "poly1305-evp.h"

struct poly1305_evp {
#ifdef POLY1305_EVP_MAC
	EVP_MAC_CTX *mac;	/* NULL: the portable code */
#else
	int unused;
#endif
};

struct poly1305_evp *
poly1305_evp_new(void)
{
	struct poly1305_evp *p;
#ifdef POLY1305_EVP_MAC
	EVP_MAC *alg;
#endif

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
#ifdef POLY1305_EVP_MAC
	/* The context holds its own reference to the algorithm. */
	if ((alg = EVP_MAC_fetch(NULL, "POLY1305", NULL)) != NULL)
		p->mac = EVP_MAC_CTX_new(alg);
	EVP_MAC_free(alg);
	/* Without it, leave no stale error behind for later callers. */
	if (p->mac == NULL)
		ERR_clear_error();
#endif
	debug3_f("Poly1305 from %s", poly1305_evp_libcrypto(p) ?
	    "libcrypto" : "the portable code");
	return p;
}

void
poly1305_evp_free(struct poly1305_evp *p)
{
	if (p == NULL)
		return;
#ifdef POLY1305_EVP_MAC
	EVP_MAC_CTX_free(p->mac);
#endif
	freezero(p, sizeof(*p));
}

/* Whether p computes its tags with libcrypto. */
int
poly1305_evp_libcrypto(const struct poly1305_evp *p)
{
#ifdef POLY1305_EVP_MAC
	return p != NULL && p->mac != NULL;
#else
	return 0;
#endif
}

/* The Poly1305 tag of the len bytes at m under the one-time key. */
int
poly1305_evp_auth(struct poly1305_evp *p, u_char out[POLY1305_TAGLEN],
    const u_char *m, size_t len, const u_char key[POLY1305_KEYLEN])
{
#ifdef POLY1305_EVP_MAC
	size_t outlen = 0;

	if (p->mac != NULL) {
		if (!EVP_MAC_init(p->mac, key, POLY1305_KEYLEN, NULL) ||
		    !EVP_MAC_update(p->mac, m, len) ||
		    !EVP_MAC_final(p->mac, out, &outlen, POLY1305_TAGLEN) ||
		    outlen != POLY1305_TAGLEN)
			return SSH_ERR_LIBCRYPTO_ERROR;
		return 0;
	}
#endif
	poly1305_auth(out, m, len, key);
	return 0;
}
