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

#ifndef POLY1305_EVP_H
#define POLY1305_EVP_H

#include <sys/types.h>

#include "poly1305.h"

struct poly1305_evp;

struct poly1305_evp *poly1305_evp_new(void);
void	poly1305_evp_free(struct poly1305_evp *);
int	poly1305_evp_auth(struct poly1305_evp *, u_char out[POLY1305_TAGLEN],
    const u_char *, size_t, const u_char key[POLY1305_KEYLEN]);
int	poly1305_evp_libcrypto(const struct poly1305_evp *);

#endif /* POLY1305_EVP_H */
