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
 * Host policy of the keystream engine: whether a connection's AES-CTR
 * and ChaCha20-Poly1305 keys get keystream threads after user
 * authentication, and how many.  ssh and sshd decide with
 * ctr_mt_threads_wanted(); the engine (cipher-ctr-mt.c) takes whatever
 * thread count it is given.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef WITH_OPENSSL
#include <openssl/evp.h>
#endif

#include "log.h"
#include "cipher-ctr-mt.h"

#ifdef WITH_OPENSSL

#define CTR_MT_FAST_MBPS	1500	/* serial AES-CTR faster: no threads */
#define CTR_MT_CHACHA_CPUS	4	/* ChaCha20 threads from this many */
#define CTR_MT_CHACHA_THREADS	2
#define CTR_MT_PROBE_BYTES	(64 * 1024)
#define CTR_MT_PROBE_RUNS	16	/* at most; the first fast one ends it */

/*
 * With AES instructions (AES-NI), serial AES-CTR runs at several GB/s per
 * core, far above what the rest of the packet path can use, and moving
 * keystream between cores through the ring only costs time.  Measure
 * serial AES-128-CTR once (about a millisecond without AES instructions,
 * much less with them) and report whether it is fast enough that threads
 * cannot help.  This also honours OPENSSL_ia32cap masking.  Called from
 * the connection's main thread only.
 *
 * The time is the thread's own CPU time where the system keeps it finely
 * enough, so that being descheduled on a busy host does not make the
 * cipher look slow; and one fast run of a few is enough.
 */
static clockid_t
ctr_mt_probe_clock(void)
{
#ifdef CLOCK_THREAD_CPUTIME_ID
	struct timespec res;

	if (clock_getres(CLOCK_THREAD_CPUTIME_ID, &res) == 0 &&
	    res.tv_sec == 0 && res.tv_nsec <= 1000)
		return CLOCK_THREAD_CPUTIME_ID;
#endif
	return CLOCK_MONOTONIC;
}

static int
ctr_mt_serial_fast(void)
{
	static int fast = -1;
	static const u_char key[16], iv[16];
	EVP_CIPHER_CTX *evp;
	struct timespec t0, t1;
	clockid_t clock = ctr_mt_probe_clock();
	double secs;
	u_char *buf;
	int i, outl;

	if (fast != -1)
		return fast;
	fast = 0;
	if ((buf = calloc(1, CTR_MT_PROBE_BYTES)) == NULL)
		return fast;
	if ((evp = EVP_CIPHER_CTX_new()) == NULL ||
	    EVP_EncryptInit_ex(evp, EVP_aes_128_ctr(), NULL, key, iv) != 1) {
		EVP_CIPHER_CTX_free(evp);
		free(buf);
		return fast;
	}
	for (i = 0; i < CTR_MT_PROBE_RUNS && !fast; i++) {
		clock_gettime(clock, &t0);
		if (EVP_EncryptUpdate(evp, buf, &outl, buf,
		    CTR_MT_PROBE_BYTES) != 1)
			break;
		clock_gettime(clock, &t1);
		secs = (t1.tv_sec - t0.tv_sec) +
		    (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (secs > 0 && CTR_MT_PROBE_BYTES / secs / 1e6 >=
		    CTR_MT_FAST_MBPS)
			fast = 1;
	}
	EVP_CIPHER_CTX_free(evp);
	free(buf);
	return fast;
}

#else /* WITH_OPENSSL */

static int
ctr_mt_serial_fast(void)
{
	return 1;
}

#endif /* WITH_OPENSSL */

int
ctr_mt_ncpu(void)
{
	long n;

#ifdef _SC_NPROCESSORS_ONLN
	n = sysconf(_SC_NPROCESSORS_ONLN);
#else
	n = 1;
#endif
	if (n < 1)
		return 1;
	if (n > 1024)
		return 1024;
	return (int)n;
}

const char *
ctr_mt_kind_name(int kind)
{
	return kind == CTR_MT_CHACHA ? "MT-ChaCha20" : "MT-AES-CTR";
}

int
ctr_mt_default_threads(int kind)
{
	int n = ctr_mt_ncpu();

	if (kind == CTR_MT_CHACHA) {
		/*
		 * ChaCha20 is fast on one core, but it is the larger part
		 * of the connection thread's work; a core of its own pays
		 * only where the peer process and the program that feeds
		 * the connection have theirs too.
		 */
		return n >= CTR_MT_CHACHA_CPUS ? CTR_MT_CHACHA_THREADS : 0;
	}
	if (n <= 1 || ctr_mt_serial_fast())
		return 0;
	/* The connection's own thread does AES-CTR too; see ctr_mt_crypt. */
	return n - 1 < 4 ? n - 1 : 4;
}

/*
 * The keystream threads for a connection's AES-CTR or ChaCha20 keys
 * after user authentication: none if DisableMTAES is set or the peer
 * cannot rekey (the threads start with new keys), else AESCTRThreads or,
 * for 0, this host's default.  Says at debug1 why none.
 */
int
ctr_mt_threads_wanted(int kind, int disabled, int nthreads, int peer_rekeys)
{
	const char *name = ctr_mt_kind_name(kind);

	if (disabled) {
		debug("%s: not used: disabled by DisableMTAES", name);
		return 0;
	}
	if (!peer_rekeys) {
		debug("%s: not used: peer cannot rekey", name);
		return 0;
	}
	if (nthreads == 0 && (nthreads = ctr_mt_default_threads(kind)) == 0) {
		if (ctr_mt_ncpu() <= 1)
			debug("%s: not used: only one CPU online", name);
		else if (kind == CTR_MT_CHACHA)
			debug("%s: not used: fewer than %d CPUs online; "
			    "AESCTRThreads forces threads", name,
			    CTR_MT_CHACHA_CPUS);
		else
			debug("%s: not used: serial AES-CTR is faster here "
			    "(AES instructions); AESCTRThreads forces threads",
			    name);
		return 0;
	}
	return nthreads;
}
