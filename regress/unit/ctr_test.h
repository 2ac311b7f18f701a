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
 * ctr_test.h: what the engine's unit tests (test_ctr_mt.c for AES-CTR,
 * test_chacha_mt.c for ChaCha20) share: the quick mode and the seed
 * (ctr_test_start(), from CTR_MT_QUICK and CTR_MT_SEED), random bytes,
 * and a worker hook that stalls now and then.  Include after unit.h and
 * cipher-ctr-mt.h, with CTR_MT_TEST defined.
 */

#ifndef HPN_CTR_TEST_H
#define HPN_CTR_TEST_H

static int quick;

/* Reads CTR_MT_QUICK and seeds the PRNG; prints the seed. */
static void
ctr_test_start(void)
{
	const char *s;
	uint64_t seed;

	if ((s = getenv("CTR_MT_QUICK")) != NULL && *s != '\0' &&
	    strcmp(s, "0") != 0)
		quick = 1;
	if ((s = getenv("CTR_MT_SEED")) != NULL && *s != '\0')
		seed = strtoull(s, NULL, 0);
	else
		seed = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
	rng_state = seed;
	printf("# seed %llu (set CTR_MT_SEED to reproduce)%s\n",
	    (unsigned long long)seed, quick ? ", quick mode" : "");
}

static void
rnd_bytes(u_char *p, size_t len)
{
	uint64_t v;
	size_t n;

	while (len > 0) {
		v = rnd64();
		n = len < 8 ? len : 8;
		memcpy(p, &v, n);
		p += n;
		len -= n;
	}
}

static atomic_uint stall_rng;

/* Worker chunk hook: now and then, stall for up to 2 ms. */
static void
stall_hook(void)
{
	u_int r = atomic_fetch_add(&stall_rng, 0x9e3779b9U) * 2654435761U;

	if (r % 8 == 0)
		usleep(r / 8 % 2000);
}

#endif /* HPN_CTR_TEST_H */
