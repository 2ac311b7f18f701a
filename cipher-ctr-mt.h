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

#ifndef CIPHER_CTR_MT_H
#define CIPHER_CTR_MT_H

/*
 * Multi-threaded keystream engine, for AES-CTR and for the ChaCha20 of
 * chacha20-poly1305@openssh.com.
 *
 * A context owns a small pool of worker threads that precompute
 * keystream into a ring of bounded queues; the caller XORs the
 * precomputed keystream into the data, and where it catches up with the
 * workers it never waits for them but computes the rest of the keystream
 * it is on itself.  The output is bit-for-bit identical to the serial
 * cipher:
 *  - AES-CTR (ctr_mt_new(), ctr_mt_crypt()): as done by EVP_aes_*_ctr()
 *    with the same key and initial counter: the counter is a 128-bit
 *    big-endian integer that is incremented once per 16-byte block and
 *    wraps modulo 2^128.
 *  - ChaCha20 for chacha20-poly1305@openssh.com (ctr_mt_new_chacha(),
 *    ctr_mt_chacha_*()): per packet, the ChaCha20 streams that
 *    PROTOCOL.chacha20poly1305 defines, with the packet's sequence number
 *    as nonce: the main key's block 0 gives the Poly1305 key, its blocks
 *    from 1 on the payload's keystream, the header key's block 0 the
 *    packet length's.  Workers fill one queue per sequence number, as
 *    much of it as recent packets needed; Poly1305 stays with the caller.
 *
 * Threading rules:
 *  - Any number of contexts may be used concurrently.
 *  - A single context must only be used by one thread at a time
 *    (ctr_mt_crypt() and ctr_mt_free() are not reentrant per context).
 *  - Worker threads are created with all signals blocked, so signal
 *    delivery to the process is not affected by them.
 *  - An idle context (all keystream queues full) consumes no CPU.
 *
 * fork(): worker threads do not survive fork().  In a forked child,
 * ctr_mt_crypt() on an inherited context continues the same keystream
 * with a serial cipher (ssh -f may fork while a connection is keyed; the
 * child rekeys soon after), and ctr_mt_free() only wipes and releases the
 * child's copy of the memory (it never locks or joins).
 *
 * The engine keeps no copy of the raw key: key material lives only in the
 * consumer's and the workers' OpenSSL cipher contexts and in the
 * keystream ring, all of which are wiped by ctr_mt_free().
 */

/* Upper bound for the nthreads argument of ctr_mt_new(). */
#define CTR_MT_MAX_THREADS	16

/* Keystreams the engine generates (ctr_mt_kind(), the host policy). */
#define CTR_MT_AES		0	/* AES-CTR */
#define CTR_MT_CHACHA		1	/* chacha20-poly1305@openssh.com */
#define CTR_MT_NKINDS		2

/* Key and keystream sizes of chacha20-poly1305@openssh.com. */
#define CTR_MT_CHACHA_KEYLEN	64	/* main key || header key */
#define CTR_MT_CHACHA_HDRLEN	4	/* the encrypted packet length */
#define CTR_MT_CHACHA_POLYLEN	32	/* the Poly1305 key */
#define CTR_MT_CHACHA_TAGLEN	16	/* the Poly1305 tag */

struct ctr_mt_ctx;

/*
 * Create a context for AES-CTR with a key of keylen bytes (16, 24 or 32:
 * AES-128/192/256), the 16-byte initial counter block iv, and nthreads
 * worker threads (1 <= nthreads <= CTR_MT_MAX_THREADS).  Workers start
 * precomputing keystream immediately.
 *
 * Returns NULL on invalid arguments, on allocation or OpenSSL failure, or
 * if the worker threads cannot be created; in that case nothing is left
 * behind and the caller should fall back to a serial cipher.
 */
struct ctr_mt_ctx *ctr_mt_new(const u_char *key, size_t keylen,
    const u_char *iv, int nthreads);

/*
 * Encrypt or decrypt (the same operation) len bytes from src to dst,
 * continuing the keystream where the previous call stopped.  dst may be
 * equal to src (in-place), but the buffers must not otherwise overlap.
 * Any length and any alignment are accepted; len may be 0.
 *
 * Returns 0 on success, -1 on error (NULL arguments, or a keystream
 * generation failure).  After an error the context must only be freed.
 */
int	ctr_mt_crypt(struct ctr_mt_ctx *ctx, u_char *dst, const u_char *src,
    size_t len);

/*
 * Create a context for the ChaCha20 keystreams of
 * chacha20-poly1305@openssh.com with its 64-byte key (main key, then
 * header key) and nthreads worker threads (1 <= nthreads <=
 * CTR_MT_MAX_THREADS).  Workers start with the first packet: its
 * sequence number tells them where to begin.  Returns NULL as
 * ctr_mt_new() does.
 */
struct ctr_mt_ctx *ctr_mt_new_chacha(const u_char *key, size_t keylen,
    int nthreads);

/*
 * The keystream of the packet with sequence number seqnr, in pieces: the
 * 4 bytes that encrypt its length (ctr_mt_chacha_header(), which may be
 * called any number of times before the rest), its Poly1305 key
 * (ctr_mt_chacha_polykey()) and the encryption of its len payload bytes
 * from src to dst (ctr_mt_chacha_crypt(), once, which ends the packet;
 * dst may equal src).  Packets are expected in sequence number order,
 * as a connection sends or receives them; any other sequence number is
 * served by the serial cipher, as is everything in a forked child.
 * Return 0 on success, -1 on error (NULL arguments, a keystream
 * generation failure).
 */
int	ctr_mt_chacha_header(struct ctr_mt_ctx *ctx, u_int seqnr,
    u_char ks[CTR_MT_CHACHA_HDRLEN]);
int	ctr_mt_chacha_polykey(struct ctr_mt_ctx *ctx, u_int seqnr,
    u_char key[CTR_MT_CHACHA_POLYLEN]);
int	ctr_mt_chacha_crypt(struct ctr_mt_ctx *ctx, u_int seqnr, u_char *dst,
    const u_char *src, size_t len);

/*
 * A chacha20-poly1305@openssh.com packet as chachapoly_crypt() and
 * chachapoly_get_length() do it (same arguments, same SSH_ERR_* results),
 * with ctx's keystream.  auth(arg, tag, m, mlen, polykey) computes the
 * Poly1305 tag, as the serial cipher does; it returns 0 or an SSH_ERR_*
 * code.
 */
typedef int ctr_mt_auth_fn(void *, u_char *, const u_char *, size_t,
    const u_char *);
int	ctr_mt_chachapoly_crypt(struct ctr_mt_ctx *ctx, u_int seqnr,
    u_char *dest, const u_char *src, u_int len, u_int aadlen, u_int authlen,
    int do_encrypt, ctr_mt_auth_fn *auth, void *arg);
int	ctr_mt_chachapoly_get_length(struct ctr_mt_ctx *ctx, u_int *plenp,
    u_int seqnr, const u_char *cp, u_int len);

/* CTR_MT_AES or CTR_MT_CHACHA, or -1 if ctx is NULL. */
int	ctr_mt_kind(const struct ctr_mt_ctx *ctx);

/* The name debug messages give kind: "MT-AES-CTR", "MT-ChaCha20". */
const char *ctr_mt_kind_name(int kind);

/* Number of worker threads of ctx, or -1 if ctx is NULL. */
int	ctr_mt_nthreads(const struct ctr_mt_ctx *ctx);

/*
 * Bytes ctx has processed so far (not counting a forked child's serial
 * continuation): *xored with keystream from the workers, *own with AES
 * done by the calling thread itself, where it had caught up with the
 * workers.  Both 0 if ctx is NULL.
 */
void	ctr_mt_stats(const struct ctr_mt_ctx *ctx, uint64_t *xored,
    uint64_t *own);

/*
 * Stop and join the worker threads, wipe all key and keystream material
 * (explicit_bzero) and free the context.  ctx may be NULL.  In a forked
 * child the threads are not joined (they do not exist there); memory is
 * wiped and freed only.
 */
void	ctr_mt_free(struct ctr_mt_ctx *ctx);

/*
 * Host policy (cipher-ctr-mt-policy.c), not part of the engine.
 */

/* Number of online CPUs; always >= 1. */
int	ctr_mt_ncpu(void);

/*
 * Suggested number of worker threads for this host and kind of keystream:
 * 0 (meaning "use the serial cipher, threads would not help") when only
 * one CPU is online; for AES-CTR also when serial AES-CTR is so fast here
 * (AES instructions) that threads cannot help (measured once, in about a
 * millisecond), otherwise min(online CPUs - 1, 4): the calling thread
 * does part of the AES itself; for ChaCha20 0 with fewer than 4 CPUs
 * (the connection's thread and its peer process need theirs), else 2.
 */
int	ctr_mt_default_threads(int kind);

/*
 * Threads for a connection's AES-CTR or ChaCha20 keys after user
 * authentication, from DisableMTAES and AESCTRThreads (0: the host's
 * default) and whether the peer can rekey; 0 (serial) with the reason
 * logged at debug1.
 */
int	ctr_mt_threads_wanted(int kind, int disabled, int nthreads,
    int peer_rekeys);

#ifdef CTR_MT_EVP_CIPHER
/*
 * The serial OpenSSL cipher that the engine runs for a key of keylen
 * bytes: EVP_aes_128_ctr(), EVP_aes_192_ctr() or EVP_aes_256_ctr() for
 * 16, 24 or 32, NULL for any other length.  For the engine and for the
 * unit test and benchmark that compare with serial AES-CTR; define
 * CTR_MT_EVP_CIPHER and include <openssl/evp.h> before this header.
 */
static inline const EVP_CIPHER *
ctr_mt_evp_cipher(size_t keylen)
{
	switch (keylen) {
	case 16:
		return EVP_aes_128_ctr();
	case 24:
		return EVP_aes_192_ctr();
	case 32:
		return EVP_aes_256_ctr();
	default:
		return NULL;
	}
}
#endif

#ifdef CTR_MT_TEST
/* Unit tests only: called by a worker after each chunk it writes. */
typedef void (*ctr_mt_hook_t)(void);
extern _Atomic(ctr_mt_hook_t) ctr_mt_test_chunk_hook;
#endif

#endif /* CIPHER_CTR_MT_H */
