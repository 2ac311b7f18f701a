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
 * Throughput benchmark for the multi-threaded keystream engine.
 *
 * usage: bench_ctr_mt [total-MiB [call-KiB [repeat]]]
 *
 * For AES-128/192/256 and 1, 2, 4 and 8 workers, encrypts total-MiB
 * (default 512) in call-KiB (default 32, like SSH packets) pieces with
 * ctr_mt_crypt() and compares with serial EVP AES-CTR over the same calls.
 * The chacha20 rows do the same with chacha20-poly1305@openssh.com's
 * per-packet ChaCha20, one packet per call: with ctr_mt_chacha_header(),
 * _polykey() and _crypt(), against what chachapoly_crypt() does serially
 * (its three EVP ChaCha20 calls).  Poly1305 is left out of both: it
 * stays in the connection's thread.
 * With repeat > 1 (default 1) the measurements are done in that many
 * rounds, each round running serial and multi-threaded back to back; the
 * MB/s columns are the best round, and "ratio" is the median over the
 * rounds of mt/serial from the same round, which filters out interference
 * from other load and drifts in machine speed.  The "cores" column is
 * process CPU time / wall time of the best multi-threaded run, and "own%"
 * the share of its bytes the calling thread encrypted itself, where it
 * had caught up with the workers (see ctr_mt_stats()).
 * "2x serial" is the combined MB/s of two independent serial streams run
 * at the same time on two threads: the most that two CPUs of this machine
 * deliver for embarrassingly parallel AES-CTR, i.e. a practical ceiling
 * for the engine.  Set OPENSSL_ia32cap=~0x200000200000000 to mask AES-NI.
 */

#include "includes.h"

#include <sys/types.h>

#include <pthread.h>
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

#define BUFBYTES	(256 * 1024)	/* src/dst buffers cycled through */
#define MAXREPS		64
#define NWORKERS	4		/* entries in workers[] */
#define AESNI_BIT	57		/* OPENSSL_ia32cap bit for AES-NI */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

static double
median(double *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
best(const double *v, long n, long *where)
{
	long i, w = 0;

	for (i = 1; i < n; i++) {
		if (v[i] > v[w])
			w = i;
	}
	if (where != NULL)
		*where = w;
	return v[w];
}

static void
fill_random(u_char *p, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (u_char)(x >> 24);
	}
}

/* Print CPU model, online cores and whether AES-NI is usable. */
static void
print_host(void)
{
	FILE *f;
	char line[4096], model[256] = "unknown", *p, *tok;
	const char *cap;
	int have_aes = 0, aesni;
	unsigned long long v;

	if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "model name", 10) == 0 &&
			    strcmp(model, "unknown") == 0 &&
			    (p = strchr(line, ':')) != NULL) {
				p += strspn(p + 1, " \t") + 1;
				p[strcspn(p, "\n")] = '\0';
				snprintf(model, sizeof(model), "%s", p);
			}
			if (strncmp(line, "flags", 5) == 0 && !have_aes &&
			    (p = strchr(line, ':')) != NULL) {
				for (tok = strtok(p + 1, " \t\n"); tok != NULL;
				    tok = strtok(NULL, " \t\n")) {
					if (strcmp(tok, "aes") == 0)
						have_aes = 1;
				}
			}
		}
		fclose(f);
	}
	aesni = have_aes;
	if ((cap = getenv("OPENSSL_ia32cap")) != NULL) {
		/* "~MASK" clears bits, a plain value replaces the vector. */
		if (*cap == '~') {
			v = strtoull(cap + 1, NULL, 0);
			if (v & (1ULL << AESNI_BIT))
				aesni = 0;
		} else {
			v = strtoull(cap, NULL, 0);
			if (!(v & (1ULL << AESNI_BIT)))
				aesni = 0;
		}
	}
	printf("cpu: %s\n", model);
	printf("online cores: %d (default threads: AES-CTR %d, "
	    "ChaCha20 %d)\n", ctr_mt_ncpu(),
	    ctr_mt_default_threads(CTR_MT_AES),
	    ctr_mt_default_threads(CTR_MT_CHACHA));
	printf("AES-NI: %s (cpu flag aes: %s", aesni ? "yes" : "no",
	    have_aes ? "yes" : "no");
	if (cap != NULL)
		printf(", OPENSSL_ia32cap=%s", cap);
	printf(")\n");
}

/*
 * One packet of chacha20-poly1305@openssh.com as chachapoly_crypt() does
 * it, less Poly1305: the Poly1305 key, the length, the payload.
 */
static int
chacha_serial_packet(EVP_CIPHER_CTX *main, EVP_CIPHER_CTX *hdr,
    uint32_t seqnr, u_char *dst, const u_char *src, size_t len)
{
	u_char seqbuf[16], poly_key[32], h[4];
	int outl;

	memset(seqbuf, 0, sizeof(seqbuf));
	memset(poly_key, 0, sizeof(poly_key));
	seqbuf[12] = seqnr >> 24;
	seqbuf[13] = seqnr >> 16;
	seqbuf[14] = seqnr >> 8;
	seqbuf[15] = seqnr;
	if (EVP_EncryptInit_ex(main, NULL, NULL, NULL, seqbuf) != 1 ||
	    EVP_EncryptUpdate(main, poly_key, &outl, poly_key,
	    sizeof(poly_key)) != 1 ||
	    EVP_EncryptInit_ex(hdr, NULL, NULL, NULL, seqbuf) != 1 ||
	    EVP_EncryptUpdate(hdr, h, &outl, src, sizeof(h)) != 1)
		return -1;
	seqbuf[0] = 1;
	if (EVP_EncryptInit_ex(main, NULL, NULL, NULL, seqbuf) != 1 ||
	    EVP_EncryptUpdate(main, dst, &outl, src, (int)len) != 1)
		return -1;
	return 0;
}

/*
 * Returns MB/s, or a negative value on error.  keylen 64: ChaCha20 of
 * chacha20-poly1305@openssh.com, one packet per call.
 */
static double
bench_serial(size_t keylen, const u_char *key, const u_char *iv,
    u_char *dst, const u_char *src, size_t total, size_t call)
{
	EVP_CIPHER_CTX *evp, *hevp = NULL;
	size_t done, off = 0;
	double t0 = 0, t1;
	uint32_t seqnr = 0;
	int outl, r = -1;

	if ((evp = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	if (keylen == CTR_MT_CHACHA_KEYLEN) {
		if ((hevp = EVP_CIPHER_CTX_new()) == NULL ||
		    EVP_EncryptInit_ex(evp, EVP_chacha20(), NULL, key,
		    NULL) != 1 ||
		    EVP_EncryptInit_ex(hevp, EVP_chacha20(), NULL, key + 32,
		    NULL) != 1)
			goto out;
	} else if (EVP_EncryptInit_ex(evp, ctr_mt_evp_cipher(keylen), NULL,
	    key, iv) != 1)
		goto out;
	t0 = now(CLOCK_MONOTONIC);
	for (done = 0; done < total; done += call) {
		if (hevp != NULL) {
			if (chacha_serial_packet(evp, hevp, seqnr++,
			    dst + off, src + off, call) != 0)
				goto out;
		} else if (EVP_EncryptUpdate(evp, dst + off, &outl, src + off,
		    (int)call) != 1)
			goto out;
		off = (off + call) % BUFBYTES;
	}
	r = 0;
 out:
	t1 = now(CLOCK_MONOTONIC);
	EVP_CIPHER_CTX_free(evp);
	EVP_CIPHER_CTX_free(hevp);
	return r == 0 ? total / (t1 - t0) / 1e6 : -1;
}

struct pair_arg {
	size_t		 keylen, total, call;
	const u_char	*key, *iv, *src;
	u_char		*dst;
	double		 mbs;
};

static void *
pair_main(void *p)
{
	struct pair_arg *a = p;

	a->mbs = bench_serial(a->keylen, a->key, a->iv, a->dst, a->src,
	    a->total, a->call);
	return NULL;
}

/* Two concurrent serial streams; returns their combined MB/s. */
static double
bench_serial_pair(size_t keylen, const u_char *key, const u_char *iv,
    const u_char *src, size_t total, size_t call)
{
	struct pair_arg a[2];
	pthread_t tid[2];
	double t0, t1;
	int i, n = 0, ok = 1;

	for (i = 0; i < 2; i++) {
		a[i].keylen = keylen;
		a[i].total = total;
		a[i].call = call;
		a[i].key = key;
		a[i].iv = iv;
		a[i].src = src;
		a[i].mbs = -1;
		if ((a[i].dst = malloc(BUFBYTES)) == NULL)
			ok = 0;
	}
	t0 = now(CLOCK_MONOTONIC);
	for (i = 0; ok && i < 2; i++) {
		if (pthread_create(&tid[i], NULL, pair_main, &a[i]) != 0)
			ok = 0;
		else
			n++;
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	t1 = now(CLOCK_MONOTONIC);
	for (i = 0; i < 2; i++) {
		free(a[i].dst);
		if (a[i].mbs <= 0)
			ok = 0;
	}
	return ok ? 2 * total / (t1 - t0) / 1e6 : -1;
}

/* Returns MB/s and stores CPU time / wall time in *cores. */
static double
bench_mt(size_t keylen, const u_char *key, const u_char *iv, int nthreads,
    u_char *dst, const u_char *src, size_t total, size_t call,
    double *cores, double *own)
{
	struct ctr_mt_ctx *ctx;
	size_t done, off = 0;
	double t0, t1, c0, c1;
	uint64_t nx, no;
	u_char h[CTR_MT_CHACHA_HDRLEN], poly_key[CTR_MT_CHACHA_POLYLEN];
	u_int seqnr = 0;
	int chacha = keylen == CTR_MT_CHACHA_KEYLEN, r;

	if ((ctx = chacha ? ctr_mt_new_chacha(key, keylen, nthreads) :
	    ctr_mt_new(key, keylen, iv, nthreads)) == NULL)
		return -1;
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now(CLOCK_MONOTONIC);
	for (done = 0; done < total; done += call) {
		if (chacha) {
			r = ctr_mt_chacha_polykey(ctx, seqnr, poly_key) != 0 ||
			    ctr_mt_chacha_header(ctx, seqnr, h) != 0 ||
			    ctr_mt_chacha_crypt(ctx, seqnr, dst + off,
			    src + off, call) != 0;
			seqnr++;
		} else
			r = ctr_mt_crypt(ctx, dst + off, src + off, call);
		if (r != 0) {
			ctr_mt_free(ctx);
			return -1;
		}
		off = (off + call) % BUFBYTES;
	}
	t1 = now(CLOCK_MONOTONIC);
	c1 = now(CLOCK_PROCESS_CPUTIME_ID);
	ctr_mt_stats(ctx, &nx, &no);
	ctr_mt_free(ctx);
	*cores = (c1 - c0) / (t1 - t0);
	*own = nx + no > 0 ? 100.0 * no / (nx + no) : 0;
	return total / (t1 - t0) / 1e6;
}

int
main(int argc, char **argv)
{
	static const size_t keylens[] = { 16, 24, 32, CTR_MT_CHACHA_KEYLEN };
	static const int workers[NWORKERS] = { 1, 2, 4, 8 };
	static double ser[MAXREPS], pair[MAXREPS], mt[NWORKERS][MAXREPS];
	static double cores[NWORKERS][MAXREPS], ratio[MAXREPS];
	static double own[NWORKERS][MAXREPS];
	u_char key[CTR_MT_CHACHA_KEYLEN], iv[16], *src, *dst;
	char name[16];
	size_t total, call, ki;
	long mib = 512, kib = 32, reps = 1, i, at;
	int wi, bad, rc = 0;

	if (argc > 1 && (mib = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: %s [total-MiB [call-KiB [repeat]]]\n",
		    argv[0]);
		return 2;
	}
	if (argc > 2 && ((kib = strtol(argv[2], NULL, 10)) < 1 ||
	    kib > BUFBYTES / 1024 || (BUFBYTES / 1024) % kib != 0)) {
		fprintf(stderr, "call-KiB must divide %d\n", BUFBYTES / 1024);
		return 2;
	}
	if (argc > 3 && ((reps = strtol(argv[3], NULL, 10)) < 1 ||
	    reps > MAXREPS)) {
		fprintf(stderr, "repeat must be 1..%d\n", MAXREPS);
		return 2;
	}
	total = (size_t)mib * 1024 * 1024;
	call = (size_t)kib * 1024;
	total -= total % call;

	if ((src = malloc(BUFBYTES)) == NULL ||
	    (dst = malloc(BUFBYTES)) == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	fill_random(src, BUFBYTES);
	fill_random(key, sizeof(key));
	fill_random(iv, sizeof(iv));

	print_host();
	printf("total %ld MiB per run, %ld KiB per call, %ld round%s\n\n",
	    mib, kib, reps, reps == 1 ? "" : "s");
	printf("%-8s %7s %10s %12s %7s %6s %5s %10s\n", "cipher", "workers",
	    "mt MB/s", "serial MB/s", "ratio", "cores", "own%", "2x serial");
	for (ki = 0; ki < sizeof(keylens) / sizeof(keylens[0]); ki++) {
		bad = 0;
		for (i = 0; i < reps; i++) {
			ser[i] = bench_serial(keylens[ki], key, iv, dst, src,
			    total, call);
			pair[i] = bench_serial_pair(keylens[ki], key, iv, src,
			    total, call);
			if (ser[i] <= 0 || pair[i] <= 0)
				bad = 1;
			for (wi = 0; wi < NWORKERS; wi++) {
				mt[wi][i] = bench_mt(keylens[ki], key, iv,
				    workers[wi], dst, src, total, call,
				    &cores[wi][i], &own[wi][i]);
				if (mt[wi][i] <= 0)
					bad = 1;
			}
		}
		if (keylens[ki] == CTR_MT_CHACHA_KEYLEN)
			snprintf(name, sizeof(name), "chacha20");
		else
			snprintf(name, sizeof(name), "aes%zu",
			    keylens[ki] * 8);
		for (wi = 0; wi < NWORKERS; wi++) {
			if (bad) {
				printf("%-8s %7d %10s\n", name, workers[wi],
				    "error");
				rc = 1;
				continue;
			}
			for (i = 0; i < reps; i++)
				ratio[i] = mt[wi][i] / ser[i];
			printf("%-8s %7d %10.0f %12.0f %6.2fx ", name,
			    workers[wi],
			    best(mt[wi], reps, &at), best(ser, reps, NULL),
			    median(ratio, reps));
			printf("%6.2f %5.0f %10.0f\n", cores[wi][at],
			    own[wi][at], best(pair, reps, NULL));
			fflush(stdout);
		}
	}
	free(src);
	free(dst);
	return rc;
}
