/*
 * Copyright (c) 2026 The hpn-patches authors
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
 * Unit tests for the keystream engine's ChaCha20 (cipher-ctr-mt.c):
 * chacha20-poly1305@openssh.com packets sealed and opened with the
 * engine's keystream are compared byte for byte with the patched tree's
 * serial chachapoly_crypt() and chachapoly_get_length(), for every
 * payload length around ChaCha20's 64-byte blocks, the engine's chunks
 * and queues, 32,896 bytes and the largest packets, with 1 to 8 worker
 * threads, stalled workers, sequence numbers out of order and wrapping,
 * forged tags and fork().
 *
 * Environment:
 *	CTR_MT_SEED=n	PRNG seed (default: time-based; printed)
 *	CTR_MT_QUICK=1	fewer lengths and threads, for the sanitizers
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../cipher-ctr-mt.h"
#include "cipher-chachapoly.h"
#include "poly1305.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "unit.h"
#include "ctr_test.h"

#define KiB		1024
#define AADLEN		CTR_MT_CHACHA_HDRLEN
#define TAGLEN		CTR_MT_CHACHA_TAGLEN
#define MAXLEN		(256 * KiB)	/* OpenSSH's PACKET_MAX_SIZE */


static u_char *plain, *sealed, *sealed_mt, *opened;

static int
auth_portable(void *arg, u_char *tag, const u_char *m, size_t len,
    const u_char *key)
{
	poly1305_auth(tag, m, len, key);
	return 0;
}


/* The lengths that matter: around blocks, chunks, queues, limits. */
static size_t
edge_lengths(size_t *lens, size_t max)
{
	static const size_t around[] = {
		32768 + 128,		/* 32,896 */
		32768, 32768 + 5 + 255,	/* a stock peer's largest */
		65536, 65536 + 5 + 255,	/* ours */
		64 * KiB - 64, 80 * KiB - 64, 128 * KiB - 64, MAXLEN - 64,
		MAXLEN - 4 - TAGLEN,
	};
	size_t i, k, n = 0, step = quick ? 17 : 1;

	for (i = 0; i < 160; i++)
		lens[n++] = i;
	/* Every block edge up to 66 KiB (quick: every 17th). */
	for (k = 3; k * 64 <= 66 * KiB; k += step) {
		lens[n++] = k * 64 - 1;
		lens[n++] = k * 64;
		lens[n++] = k * 64 + 1;
	}
	/* The engine's 4 KiB chunks, offset by the 64-byte block 0. */
	for (k = 1; k * 4 * KiB <= 132 * KiB; k++) {
		for (i = 0; i < 5; i++)
			lens[n++] = k * 4 * KiB - 64 - 2 + i;
	}
	for (i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		for (k = 0; k < 5; k++) {
			if (around[i] + k >= 2)
				lens[n++] = around[i] + k - 2;
		}
	}
	for (i = k = 0; i < n; i++) {
		if (lens[i] <= max)
			lens[k++] = lens[i];
	}
	return k;
}

/*
 * Seal npkt packets of the given payload lengths from sequence number
 * seq on with nthreads threads, and open them again with another
 * context: each must equal chachapoly_crypt()'s output byte for byte.
 * skip: every 97th sequence number is left out, and 1000 after three
 * quarters of the packets; forge: every 89th
 * packet is opened once with a flipped byte first.
 */
static int
check_packets(int nthreads, u_int seq, const size_t *lens, size_t npkt,
    int skip, int forge, uint64_t *xored, uint64_t *own, char *why,
    size_t whylen)
{
	u_char key[CTR_MT_CHACHA_KEYLEN];
	struct chachapoly_ctx *ref = NULL;
	struct ctr_mt_ctx *enc = NULL, *dec = NULL;
	size_t i, len;
	u_int plen, k;
	uint64_t x, o;
	int r, ok = 0;

	*why = '\0';
	rnd_bytes(key, sizeof(key));
	if ((ref = chachapoly_new(key, sizeof(key))) == NULL ||
	    (enc = ctr_mt_new_chacha(key, sizeof(key), nthreads)) == NULL ||
	    (dec = ctr_mt_new_chacha(key, sizeof(key), nthreads)) == NULL) {
		snprintf(why, whylen, "setup");
		goto out;
	}
	for (i = 0; i < npkt; i++, seq++) {
		if (skip && seq % 97 == 0)
			seq++;		/* the ring passes over it */
		if (skip && i == npkt * 3 / 4)
			seq += 1000;	/* too far: the serial cipher */
		len = lens[i];
		POKE_U32(plain, (u_int)len);
		rnd_bytes(plain + AADLEN, len);
		if (chachapoly_crypt(ref, seq, sealed, plain, len, AADLEN,
		    TAGLEN, 1) != 0) {
			snprintf(why, whylen, "serial seal %zu", len);
			goto out;
		}
		if ((r = ctr_mt_chachapoly_crypt(enc, seq, sealed_mt, plain,
		    len, AADLEN, TAGLEN, 1, auth_portable, NULL)) != 0 ||
		    memcmp(sealed, sealed_mt, AADLEN + len + TAGLEN) != 0) {
			snprintf(why, whylen, "seal seq %u len %zu: r %d", seq,
			    len, r);
			goto out;
		}
		/* The length, once or more, as a reader gets it. */
		for (k = 0; k <= i % 3; k++) {
			if (ctr_mt_chachapoly_get_length(dec, &plen, seq,
			    sealed, AADLEN) != 0 || plen != len) {
				snprintf(why, whylen, "length seq %u len %zu",
				    seq, len);
				goto out;
			}
		}
		if (forge && i % 89 == 0) {
			sealed[AADLEN + len / 2] ^= 0x40;
			r = ctr_mt_chachapoly_crypt(dec, seq, opened, sealed,
			    len, AADLEN, TAGLEN, 0, auth_portable, NULL);
			sealed[AADLEN + len / 2] ^= 0x40;
			if (r != SSH_ERR_MAC_INVALID) {
				snprintf(why, whylen, "forged seq %u len %zu: "
				    "r %d", seq, len, r);
				goto out;
			}
		}
		if ((r = ctr_mt_chachapoly_crypt(dec, seq, opened, sealed,
		    len, AADLEN, TAGLEN, 0, auth_portable, NULL)) != 0 ||
		    memcmp(opened, plain, AADLEN + len) != 0) {
			snprintf(why, whylen, "open seq %u len %zu: r %d", seq,
			    len, r);
			goto out;
		}
	}
	ok = 1;
 out:
	ctr_mt_stats(enc, xored, own);
	ctr_mt_stats(dec, &x, &o);
	*xored += x;
	*own += o;
	chachapoly_free(ref);
	ctr_mt_free(enc);
	ctr_mt_free(dec);
	return ok;
}

/*
 * Seal plain (its first len + 4 bytes) as packet seqnr both ways, ref
 * serially and ctx with its keystream; 1 if the results are the same.
 */
static int
seal_same(struct chachapoly_ctx *ref, struct ctr_mt_ctx *ctx, u_int seqnr,
    size_t len)
{
	POKE_U32(plain, (u_int)len);
	return chachapoly_crypt(ref, seqnr, sealed, plain, len, AADLEN,
	    TAGLEN, 1) == 0 &&
	    ctr_mt_chachapoly_crypt(ctx, seqnr, sealed_mt, plain, len, AADLEN,
	    TAGLEN, 1, auth_portable, NULL) == 0 &&
	    memcmp(sealed, sealed_mt, AADLEN + len + TAGLEN) == 0;
}

/* check_packets() as one result line, named what. */
static void
check_case(const char *what, int nthreads, u_int seq, const size_t *lens,
    size_t npkt, int skip, int forge)
{
	uint64_t xored = 0, own = 0;
	char why[128];
	int ok;

	ok = check_packets(nthreads, seq, lens, npkt, skip, forge, &xored,
	    &own, why, sizeof(why));
	result(ok, "%s: %zu packets, threads=%d, %llu KiB XORed, %llu own %s",
	    what, npkt, nthreads, (unsigned long long)xored / KiB,
	    (unsigned long long)own / KiB, why);
}

static void
shuffle(size_t *lens, size_t n)
{
	size_t i, j, t;

	for (i = n; i > 1; i--) {
		j = rnd64() % i;
		t = lens[i - 1];
		lens[i - 1] = lens[j];
		lens[j] = t;
	}
}

static void
test_api(void)
{
	u_char key[CTR_MT_CHACHA_KEYLEN], iv[16], buf[64];
	struct ctr_mt_ctx *ctx, *aes;
	u_int plen;
	int ok, n;

	rnd_bytes(key, sizeof(key));
	memset(iv, 0, sizeof(iv));
	ok = ctr_mt_new_chacha(key, 32, 1) == NULL &&
	    ctr_mt_new_chacha(key, 65, 1) == NULL &&
	    ctr_mt_new_chacha(key, 64, 0) == NULL &&
	    ctr_mt_new_chacha(key, 64, CTR_MT_MAX_THREADS + 1) == NULL &&
	    ctr_mt_new_chacha(NULL, 64, 1) == NULL;
	result(ok, "api: invalid arguments rejected");

	ok = 0;
	if ((ctx = ctr_mt_new_chacha(key, 64, 2)) != NULL &&
	    (aes = ctr_mt_new(key, 16, iv, 1)) != NULL) {
		ok = ctr_mt_kind(ctx) == CTR_MT_CHACHA &&
		    ctr_mt_kind(aes) == CTR_MT_AES && ctr_mt_kind(NULL) == -1 &&
		    ctr_mt_nthreads(ctx) == 2 &&
		    strcmp(ctr_mt_kind_name(CTR_MT_CHACHA), "MT-ChaCha20") == 0 &&
		    ctr_mt_crypt(ctx, buf, buf, 1) == -1 &&
		    ctr_mt_chacha_header(aes, 0, buf) == -1 &&
		    ctr_mt_chacha_crypt(aes, 0, buf, buf, 1) == -1 &&
		    ctr_mt_chacha_header(NULL, 0, buf) == -1 &&
		    ctr_mt_chacha_polykey(ctx, 0, NULL) == -1 &&
		    ctr_mt_chacha_crypt(ctx, 0, NULL, buf, 1) == -1 &&
		    ctr_mt_chacha_crypt(ctx, 0, buf, buf, 0) == 0 &&
		    ctr_mt_chachapoly_get_length(ctx, &plen, 1, buf, 3) ==
		    SSH_ERR_MESSAGE_INCOMPLETE &&
		    ctr_mt_chachapoly_crypt(ctx, 1, buf, buf, 8, 5, TAGLEN, 1,
		    auth_portable, NULL) == SSH_ERR_INVALID_ARGUMENT;
		ctr_mt_free(aes);
	}
	ctr_mt_free(ctx);
	result(ok, "api: kinds, names, NULL and wrong-kind handling");

	/* ChaCha20 threads by default only with 4 CPUs or more. */
	n = ctr_mt_ncpu();
	ok = ctr_mt_default_threads(CTR_MT_CHACHA) == (n >= 4 ? 2 : 0);
	result(ok, "api: ncpu %d, default ChaCha20 threads %d", n,
	    ctr_mt_default_threads(CTR_MT_CHACHA));
}

/* Every edge length, shuffled, then sorted up, with 1..8 threads. */
static void
test_lengths(void)
{
	size_t *lens, n, i;
	int t;

	if ((lens = calloc(16384, sizeof(*lens))) == NULL) {
		result(0, "lengths: setup");
		return;
	}
	n = edge_lengths(lens, MAXLEN - AADLEN - TAGLEN);
	for (t = 1; t <= 8; t *= 2) {
		if (quick && t > 2)
			break;
		shuffle(lens, n);
		check_case("lengths: edge lengths shuffled", t,
		    (u_int)rnd64(), lens, n, 0, 0);
	}
	/* In order: the ring's prediction follows growing packets. */
	for (i = 1; i < n; i++) {
		size_t v = lens[i], j = i;

		while (j > 0 && lens[j - 1] > v) {
			lens[j] = lens[j - 1];
			j--;
		}
		lens[j] = v;
	}
	check_case("lengths: edge lengths growing", 2, 0, lens, n, 0, 0);
	free(lens);
}

/*
 * A bulk transfer's pattern: runs of equal large packets with small ones
 * between (window adjusts), sequence numbers wrapping past 2^32, some
 * left out, forged tags.  Waiting between packets lets the workers fill
 * the ring, so most keystream must come from them.
 */
static void
test_bulk(void)
{
	static const size_t big[] = { 32768 + 5 + 11, 65536 + 5 + 11, 16384 };
	size_t lens[1200], i, n = quick ? 300 : 1200;
	uint64_t xored, own;
	int t, ok;

	for (i = 0; i < n; i++) {
		if (i % 50 < 40)
			lens[i] = big[(i / 200) % 3];
		else
			lens[i] = 16 + rnd64() % 48;
	}
	for (t = 1; t <= 4; t *= 2)
		check_case("bulk: across seqnr 2^32, skips, forgeries", t,
		    0xffffffffU - 100, lens, n, 1, 1);

	/* With time to fill the ring, the workers' keystream is used. */
	{
		u_char key[CTR_MT_CHACHA_KEYLEN];
		struct chachapoly_ctx *ref;
		struct ctr_mt_ctx *ctx;
		size_t len = 65536 + 16;

		ok = 0;
		rnd_bytes(key, sizeof(key));
		ref = chachapoly_new(key, sizeof(key));
		ctx = ctr_mt_new_chacha(key, sizeof(key), 1);
		for (i = 0; ref != NULL && ctx != NULL && i < 64; i++) {
			usleep(2000);
			rnd_bytes(plain + AADLEN, len);
			if (!seal_same(ref, ctx, (u_int)i, len))
				break;
		}
		ctr_mt_stats(ctx, &xored, &own);
		ok = i == 64 && xored > 0 && own < xored / 4;
		result(ok, "bulk: unhurried, %llu KiB XORed, %llu own",
		    (unsigned long long)xored / KiB,
		    (unsigned long long)own / KiB);
		chachapoly_free(ref);
		ctr_mt_free(ctx);
	}
}


/* Random lengths while workers stall in the middle of a packet. */
static void
test_stalls(void)
{
	size_t lens[2000], i, n = quick ? 400 : 2000;
	int t;

	for (i = 0; i < n; i++)
		lens[i] = rnd64() % 3 == 0 ? rnd64() % 512 :
		    rnd64() % (66 * KiB);
	atomic_store(&ctr_mt_test_chunk_hook, stall_hook);
	for (t = 1; t <= 4; t *= 2)
		check_case("stalls: random lengths", t, (u_int)rnd64(), lens,
		    n, 0, 0);
	atomic_store(&ctr_mt_test_chunk_hook, NULL);
}

/* A forked child goes on with the same keys, without workers. */
static void
test_fork(void)
{
	u_char key[CTR_MT_CHACHA_KEYLEN];
	struct chachapoly_ctx *ref;
	struct ctr_mt_ctx *ctx;
	size_t len = 40000;
	pid_t pid = -1;
	u_int seq;
	int status, bad = 0;

	rnd_bytes(key, sizeof(key));
	ref = chachapoly_new(key, sizeof(key));
	ctx = ctr_mt_new_chacha(key, sizeof(key), 2);
	if (ref == NULL || ctx == NULL) {
		result(0, "fork: setup");
		return;
	}
	for (seq = 0; seq < 200; seq++) {
		if (seq == 100 && (pid = fork()) == 0) {
			/* Child: the rest, serially; exit 0 if exact. */
			for (; seq < 200 && !bad; seq++)
				bad = !seal_same(ref, ctx, seq, len);
			ctr_mt_free(ctx);
			_exit(bad);
		}
		rnd_bytes(plain + AADLEN, len);
		if (!seal_same(ref, ctx, seq, len))
			bad = 1;
	}
	status = -1;
	if (waitpid(pid, &status, 0) != pid)
		bad = 1;
	result(!bad && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "fork: parent and child both byte-exact (child status %d)",
	    status);
	chachapoly_free(ref);
	ctr_mt_free(ctx);
}

/* Contexts created and freed at every stage, workers mid-packet. */
/*
 * A fork in the middle of a received packet (ssh's ~& or -f, or sshd's
 * session child, while the workers run): packet 100's length is read by
 * the parent's context, then the process forks; the child opens packet
 * 100 and those after it with the inherited context, the parent too.
 * Each packet is 60,000 bytes, past a queue's first chunks.
 */
static void
test_fork_mid_packet(void)
{
	u_char key[CTR_MT_CHACHA_KEYLEN];
	struct chachapoly_ctx *ref;
	struct ctr_mt_ctx *dec;
	size_t len = 60000;
	pid_t pid = -1;
	u_int seq, plen;
	int status, bad = 0, child;

	rnd_bytes(key, sizeof(key));
	ref = chachapoly_new(key, sizeof(key));
	dec = ctr_mt_new_chacha(key, sizeof(key), 4);
	if (ref == NULL || dec == NULL) {
		result(0, "fork mid-packet: setup");
		return;
	}
	child = 0;
	for (seq = 0; seq < 200 && !bad; seq++) {
		POKE_U32(plain, (u_int)len);
		rnd_bytes(plain + AADLEN, len);
		if (chachapoly_crypt(ref, seq, sealed, plain, len, AADLEN,
		    TAGLEN, 1) != 0 ||
		    ctr_mt_chachapoly_get_length(dec, &plen, seq, sealed,
		    AADLEN) != 0 || plen != len) {
			bad = 1;
			break;
		}
		if (seq == 100 && !child && (pid = fork()) == 0)
			child = 1;
		if (ctr_mt_chachapoly_crypt(dec, seq, opened, sealed, len,
		    AADLEN, TAGLEN, 0, auth_portable, NULL) != 0 ||
		    memcmp(opened, plain, AADLEN + len) != 0)
			bad = 1;
	}
	if (child) {
		ctr_mt_free(dec);
		_exit(bad);
	}
	status = -1;
	if (pid == -1 || waitpid(pid, &status, 0) != pid)
		bad = 1;
	result(!bad && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "fork mid-packet: parent and child open every packet "
	    "(child status %d)", status);
	chachapoly_free(ref);
	ctr_mt_free(dec);
}

static void
test_teardown(void)
{
	u_char key[CTR_MT_CHACHA_KEYLEN], ks[CTR_MT_CHACHA_HDRLEN];
	struct ctr_mt_ctx *ctx;
	int i, ok = 1;

	for (i = 0; i < (quick ? 50 : 300) && ok; i++) {
		rnd_bytes(key, sizeof(key));
		if ((ctx = ctr_mt_new_chacha(key, sizeof(key),
		    1 + i % 4)) == NULL) {
			ok = 0;
			break;
		}
		if (i % 3 > 0)
			ok = ctr_mt_chacha_header(ctx, (u_int)i, ks) == 0;
		if (ok && i % 3 > 1)
			ok = ctr_mt_chacha_crypt(ctx, (u_int)i, sealed, plain,
			    (size_t)i * 100) == 0;
		ctr_mt_free(ctx);
	}
	result(ok, "teardown: %d contexts freed unused, mid-packet, "
	    "after one", i);
}

int
main(void)
{
	ctr_test_start();

	if ((plain = calloc(1, MAXLEN)) == NULL ||
	    (sealed = calloc(1, MAXLEN)) == NULL ||
	    (sealed_mt = calloc(1, MAXLEN)) == NULL ||
	    (opened = calloc(1, MAXLEN)) == NULL) {
		result(0, "setup");
		return summary();
	}
	test_api();
	test_lengths();
	test_bulk();
	test_stalls();
	test_fork();
	test_fork_mid_packet();
	test_teardown();
	free(plain);
	free(sealed);
	free(sealed_mt);
	free(opened);
	return summary();
}
