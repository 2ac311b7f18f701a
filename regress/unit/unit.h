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
 * unit.h: what the test programs of regress/unit share, included once by
 * each: one "ok - NAME" or "not ok - NAME" line per case (result()), the
 * closing "N passed, N failed" line (summary()), and a small reproducible
 * PRNG (rnd64(), seeded through rng_state).
 */

#ifndef HPN_UNIT_H
#define HPN_UNIT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int npass, nfail;
static uint64_t rng_state;

static void
result(int ok, const char *fmt, ...)
	__attribute__((__format__(__printf__, 2, 3)));

static void
result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

/* Prints the summary line; returns the program's exit status. */
static int
summary(void)
{
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}

/* splitmix64: small, reproducible PRNG. */
static uint64_t __attribute__((__unused__))
rnd64(void)
{
	uint64_t z;

	z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* HPN_UNIT_H */
