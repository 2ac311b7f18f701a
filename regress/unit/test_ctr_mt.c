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
 * Unit tests for the multi-threaded AES-CTR engine (cipher-ctr-mt.c).
 * Every result is compared with serial OpenSSL EVP AES-CTR.
 *
 * Environment:
 *	CTR_MT_SEED=n	PRNG seed (default: time-based; printed)
 *	CTR_MT_QUICK=1	smaller sizes, for sanitizer and valgrind runs
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#define CTR_MT_EVP_CIPHER	/* ctr_mt_evp_cipher() */
#include "../../cipher-ctr-mt.h"
#include "ctr_common.h"
#include "unit.h"
#include "ctr_test.h"

#define KiB	1024
#define MiB	(1024 * 1024)


/* Uniform in [lo, hi]. */
static size_t
rnd_range(size_t lo, size_t hi)
{
	return lo + (size_t)(rnd64() % (uint64_t)(hi - lo + 1));
}


/* Random call length: mostly small and medium, sometimes large. */
static size_t
rnd_split(void)
{
	switch (rnd64() % 8) {
	case 0:
		return rnd_range(1, 16);
	case 1:
	case 2:
		return rnd_range(1, 2 * KiB);
	case 3:
	case 4:
	case 5:
		return rnd_range(1, 64 * KiB);
	default:
		return rnd_range(1, 400 * KiB);
	}
}

static size_t
scaled(size_t full, size_t small)
{
	return quick ? small : full;
}

/* Serial reference: one EVP call over the whole buffer. */
static int
ref_crypt(size_t keylen, const u_char *key, const u_char *iv, u_char *dst,
    const u_char *src, size_t len)
{
	EVP_CIPHER_CTX *evp;
	int outl, ok = 0;

	if ((evp = EVP_CIPHER_CTX_new()) == NULL)
		return 0;
	if (EVP_EncryptInit_ex(evp, ctr_mt_evp_cipher(keylen), NULL, key,
	    iv) == 1 &&
	    EVP_EncryptUpdate(evp, dst, &outl, src, (int)len) == 1 &&
	    (size_t)outl == len)
		ok = 1;
	EVP_CIPHER_CTX_free(evp);
	return ok;
}

/* AES-ECB encryption of one block, for known-answer checks. */
static int
ecb_block(size_t keylen, const u_char *key, const u_char *in, u_char *out)
{
	EVP_CIPHER_CTX *evp;
	const EVP_CIPHER *c;
	int outl, ok = 0;

	c = keylen == 16 ? EVP_aes_128_ecb() :
	    (keylen == 24 ? EVP_aes_192_ecb() : EVP_aes_256_ecb());
	if ((evp = EVP_CIPHER_CTX_new()) == NULL)
		return 0;
	if (EVP_EncryptInit_ex(evp, c, NULL, key, NULL) == 1 &&
	    EVP_CIPHER_CTX_set_padding(evp, 0) == 1 &&
	    EVP_EncryptUpdate(evp, out, &outl, in, 16) == 1 && outl == 16)
		ok = 1;
	EVP_CIPHER_CTX_free(evp);
	return ok;
}

/*
 * Encrypt total bytes through a ctr_mt context in pieces of split bytes
 * (0: random pieces) and compare with the serial reference.  src_off and
 * dst_off misalign the buffers; inplace makes dst == src.
 */
static int
check_stream(size_t keylen, const u_char *key, const u_char *iv,
    int nthreads, size_t total, size_t split, int inplace, size_t src_off,
    size_t dst_off)
{
	struct ctr_mt_ctx *ctx;
	u_char *sbuf, *dbuf, *ref, *src, *dst;
	size_t done, n;
	int ok = 0;

	sbuf = malloc(total + 16);
	dbuf = malloc(total + 16);
	ref = malloc(total);
	if (sbuf == NULL || dbuf == NULL || ref == NULL)
		goto out;
	src = sbuf + src_off;
	dst = inplace ? src : dbuf + dst_off;
	rnd_bytes(src, total);
	if (!ref_crypt(keylen, key, iv, ref, src, total))
		goto out;
	if ((ctx = ctr_mt_new(key, keylen, iv, nthreads)) == NULL)
		goto out;
	if (ctr_mt_nthreads(ctx) != nthreads) {
		ctr_mt_free(ctx);
		goto out;
	}
	for (done = 0; done < total; done += n) {
		n = split != 0 ? split : rnd_split();
		if (n > total - done)
			n = total - done;
		if (ctr_mt_crypt(ctx, dst + done, src + done, n) != 0) {
			ctr_mt_free(ctx);
			goto out;
		}
	}
	ctr_mt_free(ctx);
	ok = memcmp(dst, ref, total) == 0;
 out:
	free(sbuf);
	free(dbuf);
	free(ref);
	return ok;
}

static void
put_be64(u_char *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		p[i] = (u_char)v;
		v >>= 8;
	}
}

static void
rnd_key_iv(u_char *key, u_char *iv)
{
	rnd_bytes(key, 32);
	rnd_bytes(iv, 16);
}

/*
 * Random AES-256 key and IV, total random bytes in *srcp, room for the
 * result in *dstp, and serial AES-CTR of *srcp in *refp.  Returns 1 on
 * success; the caller frees the buffers either way.
 */
static int
ref_setup(u_char *key, u_char *iv, size_t total, u_char **srcp,
    u_char **dstp, u_char **refp)
{
	rnd_key_iv(key, iv);
	*srcp = malloc(total);
	*dstp = malloc(total);
	*refp = malloc(total);
	if (*srcp == NULL || *dstp == NULL || *refp == NULL)
		return 0;
	rnd_bytes(*srcp, total);
	return ref_crypt(32, key, iv, *refp, *srcp, total);
}

static void
test_api(void)
{
	u_char key[32], iv[16], buf[32];
	struct ctr_mt_ctx *ctx;
	int ok, n;

	rnd_key_iv(key, iv);
	ok = ctr_mt_new(key, 0, iv, 1) == NULL &&
	    ctr_mt_new(key, 15, iv, 1) == NULL &&
	    ctr_mt_new(key, 17, iv, 1) == NULL &&
	    ctr_mt_new(key, 33, iv, 1) == NULL &&
	    ctr_mt_new(key, 16, iv, 0) == NULL &&
	    ctr_mt_new(key, 16, iv, -1) == NULL &&
	    ctr_mt_new(key, 16, iv, CTR_MT_MAX_THREADS + 1) == NULL &&
	    ctr_mt_new(NULL, 16, iv, 1) == NULL &&
	    ctr_mt_new(key, 16, NULL, 1) == NULL;
	result(ok, "api: invalid arguments rejected");

	ctr_mt_free(NULL);
	ok = ctr_mt_nthreads(NULL) == -1 &&
	    ctr_mt_crypt(NULL, buf, buf, sizeof(buf)) == -1;
	if ((ctx = ctr_mt_new(key, 16, iv, 3)) == NULL)
		ok = 0;
	else {
		ok = ok && ctr_mt_nthreads(ctx) == 3 &&
		    ctr_mt_crypt(ctx, buf, buf, 0) == 0 &&
		    ctr_mt_crypt(ctx, NULL, buf, 1) == -1 &&
		    ctr_mt_crypt(ctx, buf, NULL, 1) == -1;
		ctr_mt_free(ctx);
	}
	result(ok, "api: NULL handling, zero length, nthreads");

	/* 0 (serial) on one CPU or when serial AES is fast enough anyway. */
	n = ctr_mt_ncpu();
	ok = n >= 1 && (n == 1 ? ctr_mt_default_threads(CTR_MT_AES) == 0 :
	    (ctr_mt_default_threads(CTR_MT_AES) == 0 ||
	    ctr_mt_default_threads(CTR_MT_AES) == (n - 1 < 4 ? n - 1 : 4)));
	result(ok, "api: ncpu %d, default threads %d", n,
	    ctr_mt_default_threads(CTR_MT_AES));
}

static void
test_keys_threads(void)
{
	static const size_t keylens[] = { 16, 24, 32 };
	u_char key[32], iv[16];
	size_t i, total = scaled(3 * MiB, 1 * MiB);
	int t;

	for (i = 0; i < 3; i++) {
		for (t = 1; t <= 8; t++) {
			rnd_key_iv(key, iv);
			result(check_stream(keylens[i], key, iv, t, total, 0,
			    0, 0, 0), "aes%zu threads=%d random splits %zu KiB",
			    keylens[i] * 8, t, total / KiB);
		}
	}
}

static void
test_splits(void)
{
	static const struct {
		size_t split, full, small;
		const char *what;
	} cases[] = {
		{ 1, 600 * KiB, 300 * KiB, "1-byte calls" },
		{ 15, 4 * MiB, 1 * MiB, "15-byte calls" },
		{ 16, 4 * MiB, 1 * MiB, "16-byte calls" },
		{ 17, 4 * MiB, 1 * MiB, "17-byte calls" },
		{ 32 * KiB + 3, 6 * MiB, 2 * MiB, "32KiB+3 calls" },
		{ 8 * MiB, 8 * MiB, 3 * MiB, "one huge call" },
		{ 0, 16 * MiB, 4 * MiB, "random splits, many ring turns" },
	};
	u_char key[32], iv[16];
	size_t i, total;
	int t;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (t = 1; t <= 4; t *= 2) {
			rnd_key_iv(key, iv);
			total = scaled(cases[i].full, cases[i].small);
			result(check_stream(16 + 8 * (i % 3), key, iv, t,
			    total, cases[i].split == 8 * MiB ? total :
			    cases[i].split, 0, 0, 0),
			    "split: %s, %zu KiB, threads=%d", cases[i].what,
			    total / KiB, t);
		}
	}
}

static void
test_alignment(void)
{
	u_char key[32], iv[16];
	size_t off, total = scaled(1 * MiB + 11, 512 * KiB + 11);

	for (off = 1; off <= 7; off++) {
		rnd_key_iv(key, iv);
		result(check_stream(16, key, iv, 2, total, 0, 0, off,
		    (off * 3) % 8), "unaligned src+%zu dst+%zu", off,
		    (off * 3) % 8);
		rnd_key_iv(key, iv);
		result(check_stream(32, key, iv, 3, total, 0, 1, off, 0),
		    "in-place, buffer+%zu", off);
	}
	rnd_key_iv(key, iv);
	result(check_stream(24, key, iv, 2, total, 4093, 1, 0, 0),
	    "in-place, aligned, 4093-byte calls");
}

static void
test_wrap(void)
{
	static const size_t keylens[] = { 16, 24, 32 };
	static const char *what[] = { "ff..ff", "ff..fe", "xx..xx ff..ff",
	    "2^128 - 40000 blocks", "2^128 - 24581 blocks" };
	u_char key[32], iv[16], zero[16], blk[16], kat[16], inc[16];
	struct ctr_mt_ctx *ctx;
	size_t i, k, total = scaled(3 * MiB, 1 * MiB);
	uint64_t back;
	int ok;

	for (i = 0; i < 5; i++) {
		for (k = 0; k < 3; k++) {
			rnd_bytes(key, sizeof(key));
			memset(iv, 0xff, sizeof(iv));
			switch (i) {
			case 0:		/* ff..ff */
				break;
			case 1:		/* ff..fe */
				iv[15] = 0xfe;
				break;
			case 2:		/* low 64 bits all ones */
				rnd_bytes(iv, 8);
				break;
			case 3:		/* 2^128 - back: wrap inside a queue */
			case 4:
				back = i == 3 ? 40000 : 24581;
				put_be64(iv + 8, (uint64_t)0 - back);
				break;
			}
			result(check_stream(keylens[k], key, iv,
			    1 + (int)((i + k) % 4), total, 0, 0, 0, 0),
			    "wrap: aes%zu threads=%d iv %s", keylens[k] * 8,
			    1 + (int)((i + k) % 4), what[i]);
		}
	}

	/*
	 * Known answer: with IV ff..ff the second keystream block is
	 * E(0), and with low half all ones the carry reaches the high half.
	 */
	for (i = 0; i < 2; i++) {
		rnd_bytes(key, sizeof(key));
		memset(iv, 0xff, sizeof(iv));
		memset(inc, 0, sizeof(inc));
		if (i == 1) {
			memset(iv, 0, 8);
			iv[7] = 0x41;
			inc[7] = 0x42;
		}
		memset(zero, 0, sizeof(zero));
		ok = 0;
		if ((ctx = ctr_mt_new(key, 16, iv, 2)) != NULL) {
			ok = ctr_mt_crypt(ctx, blk, zero, 16) == 0 &&
			    ecb_block(16, key, iv, kat) &&
			    memcmp(blk, kat, 16) == 0 &&
			    ctr_mt_crypt(ctx, blk, zero, 16) == 0 &&
			    ecb_block(16, key, inc, kat) &&
			    memcmp(blk, kat, 16) == 0;
			ctr_mt_free(ctx);
		}
		result(ok, "wrap: known answer, %s",
		    i == 0 ? "ff..ff -> 00..00" : "low 64 bits carry");
	}
}

/* Many contexts alive at once, calls interleaved from one thread. */
static void
test_many_contexts(void)
{
	enum { NCTX = 32 };
	struct ctr_mt_ctx *ctx[NCTX];
	u_char key[NCTX][32], iv[NCTX][16], *src, *out[NCTX], *ref;
	size_t total = scaled(1 * MiB, 256 * KiB), done[NCTX], n;
	int i, ok = 1, active;

	memset(ctx, 0, sizeof(ctx));
	memset(out, 0, sizeof(out));
	if ((src = malloc(total)) == NULL || (ref = malloc(total)) == NULL) {
		result(0, "many contexts: malloc");
		free(src);
		return;
	}
	rnd_bytes(src, total);
	for (i = 0; i < NCTX; i++) {
		rnd_key_iv(key[i], iv[i]);
		done[i] = 0;
		if ((out[i] = malloc(total)) == NULL ||
		    (ctx[i] = ctr_mt_new(key[i], 16 + 8 * (i % 3), iv[i],
		    2)) == NULL)
			ok = 0;
	}
	for (active = ok ? NCTX : 0; active > 0;) {
		i = (int)rnd_range(0, NCTX - 1);
		if (done[i] == total)
			continue;
		n = rnd_split();
		if (n > total - done[i])
			n = total - done[i];
		if (ctr_mt_crypt(ctx[i], out[i] + done[i], src + done[i],
		    n) != 0) {
			ok = 0;
			break;
		}
		done[i] += n;
		if (done[i] == total)
			active--;
	}
	for (i = 0; i < NCTX; i++) {
		if (ok && (!ref_crypt(16 + 8 * (i % 3), key[i], iv[i], ref,
		    src, total) || memcmp(ref, out[i], total) != 0))
			ok = 0;
		ctr_mt_free(ctx[i]);
		free(out[i]);
	}
	free(src);
	free(ref);
	result(ok, "many contexts: %d x 2 threads, interleaved, %zu KiB each",
	    NCTX, total / KiB);
}

/* Several consumer threads, each with its own context. */
struct consumer_arg {
	u_char key[32], iv[16];
	size_t keylen, total;
	int nthreads, ok;
	uint64_t seed;
};

static void *
consumer_main(void *p)
{
	struct consumer_arg *a = p;
	struct ctr_mt_ctx *ctx;
	u_char *src = NULL, *dst = NULL, *ref = NULL;
	uint64_t s = a->seed;
	size_t done, n;

	a->ok = 0;
	if ((src = malloc(a->total)) == NULL ||
	    (dst = malloc(a->total)) == NULL ||
	    (ref = malloc(a->total)) == NULL)
		goto out;
	memset(src, 0x5a, a->total);
	if (!ref_crypt(a->keylen, a->key, a->iv, ref, src, a->total))
		goto out;
	if ((ctx = ctr_mt_new(a->key, a->keylen, a->iv, a->nthreads)) == NULL)
		goto out;
	for (done = 0; done < a->total; done += n) {
		/* Local LCG; rnd64() is not thread-safe. */
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		n = 1 + (size_t)((s >> 33) % (100 * KiB));
		if (n > a->total - done)
			n = a->total - done;
		if (ctr_mt_crypt(ctx, dst + done, src + done, n) != 0)
			break;
	}
	ctr_mt_free(ctx);
	a->ok = done >= a->total && memcmp(dst, ref, a->total) == 0;
 out:
	free(src);
	free(dst);
	free(ref);
	return NULL;
}

static void
test_parallel_consumers(void)
{
	enum { NCONS = 4 };
	struct consumer_arg args[NCONS];
	pthread_t tid[NCONS];
	int i, ok = 1, started[NCONS];

	for (i = 0; i < NCONS; i++) {
		rnd_key_iv(args[i].key, args[i].iv);
		args[i].keylen = 16 + 8 * (i % 3);
		args[i].total = scaled(4 * MiB, 1 * MiB);
		args[i].nthreads = 1 + i % 3;
		args[i].seed = rnd64();
		started[i] = pthread_create(&tid[i], NULL, consumer_main,
		    &args[i]) == 0;
	}
	for (i = 0; i < NCONS; i++) {
		if (!started[i]) {
			ok = 0;
			continue;
		}
		pthread_join(tid[i], NULL);
		if (!args[i].ok)
			ok = 0;
	}
	result(ok, "parallel consumers: %d threads, own context each", NCONS);
}

static void
test_fork(void)
{
	u_char key[32], iv[16], *src, *dst, *ref;
	size_t total = scaled(4 * MiB, 1 * MiB), half = total / 2 + 5;
	struct ctr_mt_ctx *ctx;
	int status, ok = 0, child_ok = 0, setup_ok = 0, waited;
	double t0, elapsed = 0;
	pid_t pid, w;

	if (!ref_setup(key, iv, total, &src, &dst, &ref))
		goto out;
	if ((ctx = ctr_mt_new(key, 32, iv, 2)) == NULL)
		goto out;
	if (ctr_mt_crypt(ctx, dst, src, half) != 0) {
		ctr_mt_free(ctx);
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		ctr_mt_free(ctx);
		goto out;
	}
	if (pid == 0) {
		/*
		 * Child: no workers here.  The keystream must go on
		 * serially from where the parent stopped (an odd offset),
		 * across calls, and free must not hang.
		 */
		alarm(10);
		status = ctr_mt_crypt(ctx, dst + half, src + half, 7) == 0 &&
		    ctr_mt_crypt(ctx, dst + half + 7, src + half + 7,
		    total - half - 7) == 0 &&
		    memcmp(dst + half, ref + half, total - half) == 0 ? 0 : 3;
		ctr_mt_free(ctx);
		free(src);
		free(dst);
		free(ref);
		_exit(status);
	}
	/* Parent keeps going while the child tears down its copy. */
	t0 = now(CLOCK_MONOTONIC);
	ok = ctr_mt_crypt(ctx, dst + half, src + half, total - half) == 0;
	ctr_mt_free(ctx);
	ok = ok && memcmp(dst, ref, total) == 0;
	for (waited = 0; waited < 1500; waited++) {
		if ((w = waitpid(pid, &status, WNOHANG)) == pid)
			break;
		if (w == -1 && errno != EINTR)
			break;
		usleep(10 * 1000);
	}
	elapsed = now(CLOCK_MONOTONIC) - t0;
	if (waited >= 1500) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		child_ok = 1;
	setup_ok = 1;
	result(ok, "fork: parent context still correct after fork");
	result(child_ok, "fork: child continues the keystream serially, "
	    "free returns promptly (%.2fs)", elapsed);
 out:
	if (!setup_ok)
		result(0, "fork: setup");
	free(src);
	free(dst);
	free(ref);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define UNDER_SANITIZER 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#  define UNDER_SANITIZER 1
# endif
#endif

/*
 * Resource exhaustion: in children with a growing address space limit
 * (run before any thread exists, so no cached thread stacks are reused),
 * ctr_mt_new() first fails to allocate, then fails to create some of its
 * threads, then succeeds.  It must return NULL cleanly (no crash, no
 * hang) until it succeeds.
 */
static void
test_thread_failure(void)
{
#ifdef UNDER_SANITIZER
	result(1, "thread creation failure: skipped under sanitizer");
#else
	u_char key[32], iv[16], buf[1000];
	struct ctr_mt_ctx *ctx;
	struct rlimit rl;
	unsigned long vmpages;
	int k, status, nnull = 0, nok = 0, nbad = 0;
	FILE *f;
	pid_t pid;

	rnd_key_iv(key, iv);
	memset(buf, 0, sizeof(buf));
	for (k = 0; k < 48; k += 2) {
		fflush(stdout);
		fflush(stderr);
		if ((pid = fork()) == -1) {
			nbad++;
			break;
		}
		if (pid == 0) {
			alarm(10);
			if ((f = fopen("/proc/self/statm", "r")) == NULL ||
			    fscanf(f, "%lu", &vmpages) != 1)
				_exit(3);
			fclose(f);
			rl.rlim_cur = rl.rlim_max = vmpages *
			    (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)k * MiB;
			if (setrlimit(RLIMIT_AS, &rl) != 0)
				_exit(3);
			if ((ctx = ctr_mt_new(key, 16, iv, 4)) == NULL)
				_exit(0);
			status = ctr_mt_crypt(ctx, buf, buf, sizeof(buf));
			ctr_mt_free(ctx);
			_exit(status == 0 ? 1 : 3);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1))
			nbad++;
		else if (WEXITSTATUS(status) == 0)
			nnull++;
		else
			nok++;
	}
	result(nbad == 0 && nnull > 0 && nok > 0, "thread creation failure: "
	    "%d NULL, %d ok, %d crashed as the address space limit grows",
	    nnull, nok, nbad);
#endif
}

static void
test_teardown(void)
{
	u_char key[32], iv[16], buf[64];
	struct ctr_mt_ctx *ctx;
	double t0, worst = 0, t;
	int i, ok = 1;

	for (i = 0; i < 48; i++) {
		rnd_key_iv(key, iv);
		if ((ctx = ctr_mt_new(key, 16 + 8 * (i % 3), iv,
		    1 + i % 8)) == NULL) {
			ok = 0;
			break;
		}
		if (i % 2 == 0 && ctr_mt_crypt(ctx, buf, buf,
		    1 + i % 7) != 0)
			ok = 0;
		t0 = now(CLOCK_MONOTONIC);
		ctr_mt_free(ctx);
		if ((t = now(CLOCK_MONOTONIC) - t0) > worst)
			worst = t;
	}
	result(ok, "teardown mid-stream: 48 contexts, worst free %.1f ms",
	    worst * 1000);
}

static void
test_cycles(void)
{
	u_char key[32], iv[16], *src, *dst, *ref;
	struct ctr_mt_ctx *ctx;
	size_t len, keylen, maxlen = 40 * KiB;
	int i, n = (int)scaled(2000, 300), ok = 1;

	src = malloc(maxlen);
	dst = malloc(maxlen);
	ref = malloc(maxlen);
	if (src == NULL || dst == NULL || ref == NULL)
		ok = 0;
	for (i = 0; ok && i < n; i++) {
		rnd_key_iv(key, iv);
		keylen = 16 + 8 * (i % 3);
		len = rnd_range(1, maxlen);
		rnd_bytes(src, len);
		if ((ctx = ctr_mt_new(key, keylen, iv, 1 + i % 4)) == NULL) {
			ok = 0;
			break;
		}
		if (ctr_mt_crypt(ctx, dst, src, len) != 0)
			ok = 0;
		ctr_mt_free(ctx);
		if (ok && (!ref_crypt(keylen, key, iv, ref, src, len) ||
		    memcmp(dst, ref, len) != 0))
			ok = 0;
	}
	free(src);
	free(dst);
	free(ref);
	result(ok, "%d create/crypt/free cycles", n);
}

static volatile sig_atomic_t sig_count, sig_elsewhere;
static pthread_t main_thread;

static void
sig_handler(int sig)
{
	if (sig != SIGUSR1 || !pthread_equal(pthread_self(), main_thread))
		sig_elsewhere = 1;
	sig_count++;
}

/*
 * Workers block all signals and the caller's mask is left unchanged.  A
 * process-directed signal that the main thread blocks must stay pending
 * rather than go to a worker, and arrive once the main thread unblocks it.
 */
static void
test_signals(void)
{
	u_char key[32], iv[16], buf[8192];
	struct ctr_mt_ctx *ctx;
	struct sigaction sa, osa;
	sigset_t before, after, usr1;
	int i, sig, ok = 1, rounds = 16;

	rnd_key_iv(key, iv);
	memset(buf, 0, sizeof(buf));
	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, &osa) != 0) {
		result(0, "signals: sigaction");
		return;
	}
	/* Create with SIGUSR1 unblocked, so workers cannot inherit it. */
	sigemptyset(&before);
	sigaddset(&before, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if ((ctx = ctr_mt_new(key, 16, iv, 4)) == NULL)
		ok = 0;
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	for (sig = 1; sig < 32; sig++) {
		if (sigismember(&before, sig) != sigismember(&after, sig))
			ok = 0;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (i = 0; ok && i < rounds; i++) {
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		if (kill(getpid(), SIGUSR1) != 0)
			ok = 0;
		/* Keep the workers busy while the signal is pending. */
		if (ctr_mt_crypt(ctx, buf, buf, sizeof(buf)) != 0)
			ok = 0;
		usleep(1000);
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	}
	ctr_mt_free(ctx);
	sigemptyset(&before);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	sigaction(SIGUSR1, &osa, NULL);
	result(ok && sig_count == rounds && !sig_elsewhere,
	    "signals: caller mask kept, %d/%d signals to main thread only",
	    (int)sig_count, rounds);
}

/* Let the workers fill the ring: wait for a 50 ms window of no CPU use. */
static void
wait_quiet(void)
{
	double c0, c1;
	int i;

	for (i = 0; i < 100; i++) {
		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		usleep(50 * 1000);
		c1 = now(CLOCK_PROCESS_CPUTIME_ID);
		if (c1 - c0 < 0.002)
			break;
	}
}

static void
test_idle(void)
{
	u_char key[32], iv[16], buf[4096];
	struct ctr_mt_ctx *ctx;
	double c0, c1, used = -1;
	int ok = 0;

	rnd_key_iv(key, iv);
	memset(buf, 0, sizeof(buf));
	if ((ctx = ctr_mt_new(key, 16, iv, 2)) == NULL) {
		result(0, "idle: ctr_mt_new");
		return;
	}
	if (ctr_mt_crypt(ctx, buf, buf, sizeof(buf)) != 0)
		goto out;
	wait_quiet();
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	usleep(300 * 1000);
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	used = c1 - c0;
	ok = used < 0.020;
	/* The context must still work after idling. */
	if (ctr_mt_crypt(ctx, buf, buf, sizeof(buf)) != 0)
		ok = 0;
 out:
	ctr_mt_free(ctx);
	result(ok, "idle: %.1f ms CPU during 300 ms sleep with 2 workers",
	    used * 1000);
}


/* Worker chunk hook: always stall for 0.5 ms. */
static void
slow_hook(void)
{
	usleep(500);
}

/*
 * Both ways of the consumer: with the ring full it only XORs the
 * workers' keystream; when it catches up with a slow worker, it does the
 * AES of the rest of the segment itself.  Both stay byte-exact.
 */
static void
test_takeover(void)
{
	u_char key[32], iv[16], *src = NULL, *dst = NULL, *ref = NULL;
	struct ctr_mt_ctx *ctx = NULL;
	size_t total = 8 * MiB, ringful = 512 * KiB, off;
	uint64_t xored = 0, own = 0;
	int r, ok = 0;

	if (!ref_setup(key, iv, total, &src, &dst, &ref))
		goto out;

	/* One worker: two 256 KiB queues.  Let it fill both, then use them. */
	if ((ctx = ctr_mt_new(key, 32, iv, 1)) == NULL)
		goto out;
	wait_quiet();
	for (off = 0; off < ringful; off += 32 * KiB) {
		if (ctr_mt_crypt(ctx, dst + off, src + off, 32 * KiB) != 0)
			goto out;
	}
	ctr_mt_stats(ctx, &xored, &own);
	ok = xored == ringful && own == 0 &&
	    memcmp(dst, ref, ringful) == 0;
	result(ok, "takeover: full ring, %llu bytes XORed, %llu own",
	    (unsigned long long)xored, (unsigned long long)own);

	/* The rest in one call, with a worker slowed down: no waiting. */
	atomic_store(&ctr_mt_test_chunk_hook, slow_hook);
	r = ctr_mt_crypt(ctx, dst + ringful, src + ringful, total - ringful);
	atomic_store(&ctr_mt_test_chunk_hook, NULL);
	if (r != 0)
		goto out;
	ctr_mt_stats(ctx, &xored, &own);
	ok = own > 0 && xored + own == total &&
	    memcmp(dst, ref, total) == 0;
	result(ok, "takeover: one %zu KiB call, %llu bytes XORed, %llu own",
	    (total - ringful) / KiB, (unsigned long long)xored,
	    (unsigned long long)own);
	ctr_mt_free(ctx);
	ctx = NULL;
	ctr_mt_stats(NULL, &xored, &own);
	result(xored == 0 && own == 0, "takeover: stats of NULL");
	ok = 1;
 out:
	if (!ok)
		result(0, "takeover: setup");
	ctr_mt_free(ctx);
	free(src);
	free(dst);
	free(ref);
}

static atomic_int spin_stop;

static void *
spin_main(void *p)
{
	volatile uint64_t x = 0;

	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		x++;
	return NULL;
}

/*
 * Random splits while workers stall now and then in the middle of a
 * segment, or while other threads compete for every CPU.  The consumer
 * never waits for a worker: it takes over the rest of the segment, and
 * when it comes round again while the worker still holds the queue, it
 * does that segment alone too.
 */
static void
test_contended(void)
{
	u_char key[32], iv[16];
	pthread_t tid[8];
	size_t total = scaled(32 * MiB, 8 * MiB);
	int i, n, nspin = ctr_mt_ncpu() + 1, t, ok;

	if (nspin > 8)
		nspin = 8;
	atomic_store(&spin_stop, 0);
	for (n = 0; n < nspin; n++) {
		if (pthread_create(&tid[n], NULL, spin_main, NULL) != 0)
			break;
	}
	for (i = 0, t = 1; t <= 8; t *= 2, i++) {
		rnd_key_iv(key, iv);
		ok = check_stream(16 + 8 * (i % 3), key, iv, t, total, 0, 0,
		    0, 0);
		result(ok, "contended: %d spinning threads, threads=%d, "
		    "%zu KiB", n, t, total / KiB);
	}
	atomic_store(&spin_stop, 1);
	while (n-- > 0)
		pthread_join(tid[n], NULL);

	atomic_store(&ctr_mt_test_chunk_hook, stall_hook);
	for (i = 0, t = 1; t <= 4; t *= 2, i++) {
		rnd_key_iv(key, iv);
		ok = check_stream(16 + 8 * (i % 3), key, iv, t, total, 0, 0,
		    0, 0);
		result(ok, "contended: stalling workers, threads=%d, %zu KiB",
		    t, total / KiB);
	}
	atomic_store(&ctr_mt_test_chunk_hook, NULL);
}

int
main(void)
{
	ctr_test_start();

	/* First, while glibc has no cached thread stacks to hand out. */
	test_thread_failure();
	test_api();
	test_keys_threads();
	test_splits();
	test_alignment();
	test_wrap();
	test_many_contexts();
	test_parallel_consumers();
	test_fork();
	test_signals();
	test_teardown();
	test_cycles();
	test_idle();
	test_takeover();
	test_contended();

	return summary();
}
