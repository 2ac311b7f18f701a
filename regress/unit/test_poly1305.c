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
 * Unit tests for poly1305-evp.c, Poly1305 from libcrypto: RFC 8439's test
 * vectors (section 2.5.2 and appendix A.3), then OpenSSH's portable
 * poly1305_auth() as the reference on random keys, messages, lengths and
 * alignments, with one context reused as the packet path does; and
 * chachapoly_crypt() (linked from the patched libssh) against the
 * chacha20-poly1305@openssh.com construction rebuilt here with the portable
 * Poly1305.
 *
 * Environment:
 *	POLY_SEED=n	PRNG seed (default: time-based; printed)
 *	POLY_QUICK=1	fewer random cases, for sanitizer runs
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "sshbuf.h"	/* PEEK_U32, POKE_U64 */
#include "ssherr.h"
#include "cipher-chachapoly.h"
#include "../../poly1305-evp.h"
#include "unit.h"

#define KiB	1024

static int quick, nshown;

static void
rnd_fill(u_char *p, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if ((i & 7) == 0)
			v = rnd64();
		p[i] = v & 0xff;
		v >>= 8;
	}
}

static size_t
unhex(const char *s, u_char *out, size_t max)
{
	size_t n;
	u_int b;

	for (n = 0; s[2 * n] != '\0'; n++) {
		if (n >= max || sscanf(s + 2 * n, "%2x", &b) != 1) {
			fprintf(stderr, "bad hex: %s\n", s);
			exit(2);
		}
		out[n] = b;
	}
	return n;
}

/* RFC 8439 A.3 #2 and #3: the same message (the IETF contribution note) */
#define A3_IETF_NOTE \
	"416e79207375626d697373696f6e20746f20746865204945544620696e74656e" \
	"6465642062792074686520436f6e7472696275746f7220666f72207075626c69" \
	"636174696f6e20617320616c6c206f722070617274206f6620616e2049455446" \
	"20496e7465726e65742d4472616674206f722052464320616e6420616e792073" \
	"746174656d656e74206d6164652077697468696e2074686520636f6e74657874" \
	"206f6620616e204945544620616374697669747920697320636f6e7369646572" \
	"656420616e20224945544620436f6e747269627574696f6e222e205375636820" \
	"73746174656d656e747320696e636c756465206f72616c2073746174656d656e" \
	"747320696e20494554462073657373696f6e732c2061732077656c6c20617320" \
	"7772697474656e20616e6420656c656374726f6e696320636f6d6d756e696361" \
	"74696f6e73206d61646520617420616e792074696d65206f7220706c6163652c" \
	"207768696368206172652061646472657373656420746f"

static const struct {
	const char *name, *key, *msg, *tag;
} vectors[] = {
	{ "RFC 8439 2.5.2",
	    "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
	    "43727970746f6772617068696320466f72756d2052657365617263682047726f"
	    "7570",
	    "a8061dc1305136c6c22b8baf0c0127a9" },
	{ "RFC 8439 A.3#1",
	    "0000000000000000000000000000000000000000000000000000000000000000",
	    "0000000000000000000000000000000000000000000000000000000000000000"
	    "0000000000000000000000000000000000000000000000000000000000000000",
	    "00000000000000000000000000000000" },
	{ "RFC 8439 A.3#2",
	    "0000000000000000000000000000000036e5f6b5c5e06070f0efca96227a863e",
	    A3_IETF_NOTE,
	    "36e5f6b5c5e06070f0efca96227a863e" },
	{ "RFC 8439 A.3#3",
	    "36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000",
	    A3_IETF_NOTE,
	    "f3477e7cd95417af89a6b8794c310cf0" },
	{ "RFC 8439 A.3#4",
	    "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
	    "2754776173206272696c6c69672c20616e642074686520736c6974687920746f"
	    "7665730a446964206779726520616e642067696d626c6520696e207468652077"
	    "6162653a0a416c6c206d696d737920776572652074686520626f726f676f7665"
	    "732c0a416e6420746865206d6f6d65207261746873206f757467726162652e",
	    "4541669a7eaaee61e708dc7cbcc5eb62" },
	{ "RFC 8439 A.3#5",
	    "0200000000000000000000000000000000000000000000000000000000000000",
	    "ffffffffffffffffffffffffffffffff",
	    "03000000000000000000000000000000" },
	{ "RFC 8439 A.3#6",
	    "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
	    "02000000000000000000000000000000",
	    "03000000000000000000000000000000" },
	{ "RFC 8439 A.3#7",
	    "0100000000000000000000000000000000000000000000000000000000000000",
	    "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff"
	    "11000000000000000000000000000000",
	    "05000000000000000000000000000000" },
	{ "RFC 8439 A.3#8",
	    "0100000000000000000000000000000000000000000000000000000000000000",
	    "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe"
	    "01010101010101010101010101010101",
	    "00000000000000000000000000000000" },
	{ "RFC 8439 A.3#9",
	    "0200000000000000000000000000000000000000000000000000000000000000",
	    "fdffffffffffffffffffffffffffffff",
	    "faffffffffffffffffffffffffffffff" },
	{ "RFC 8439 A.3#10",
	    "0100000000000000040000000000000000000000000000000000000000000000",
	    "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
	    "0000000000000000000000000000000001000000000000000000000000000000",
	    "14000000000000005500000000000000" },
	{ "RFC 8439 A.3#11",
	    "0100000000000000040000000000000000000000000000000000000000000000",
	    "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
	    "00000000000000000000000000000000",
	    "13000000000000000000000000000000" },
};

/* RFC 8439's vectors, through one context (rekeyed each time) and both codes. */
static void
test_vectors(struct poly1305_evp *p)
{
	u_char key[32], msg[512], tag[16], want[16];
	size_t i, mlen;
	int r;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		unhex(vectors[i].key, key, sizeof(key));
		mlen = unhex(vectors[i].msg, msg, sizeof(msg));
		unhex(vectors[i].tag, want, sizeof(want));
		memset(tag, 0xa5, sizeof(tag));
		r = poly1305_evp_auth(p, tag, msg, mlen, key);
		result(r == 0 && memcmp(tag, want, sizeof(want)) == 0,
		    "%s: libcrypto tag (%zu bytes)", vectors[i].name, mlen);
		memset(tag, 0xa5, sizeof(tag));
		poly1305_auth(tag, msg, mlen, key);
		result(memcmp(tag, want, sizeof(want)) == 0,
		    "%s: portable tag", vectors[i].name);
	}
}

/*
 * One random case: a message of len bytes at an offset of off into buf,
 * and a key; the tag must match the portable code's and stay within its
 * 16 bytes.
 */
static int
random_case(struct poly1305_evp *p, u_char *buf, size_t off, size_t len)
{
	u_char key[32], out[16 + 2 * 8], want[16];

	rnd_fill(key, sizeof(key));
	rnd_fill(buf + off, len);
	memset(out, 0x5a, sizeof(out));
	if (poly1305_evp_auth(p, out + 8, buf + off, len, key) != 0)
		return 0;
	poly1305_auth(want, buf + off, len, key);
	if (memcmp(out + 8, want, sizeof(want)) != 0) {
		if (nshown++ < 5)
			printf("# mismatch: len %zu offset %zu\n", len, off);
		return 0;
	}
	for (off = 0; off < 8; off++) {
		if (out[off] != 0x5a || out[8 + 16 + off] != 0x5a)
			return 0;
	}
	return 1;
}

static void
test_random(struct poly1305_evp *p)
{
	const size_t maxlen = 300 * KiB;
	/* Lengths around blocks, a packet's 4-byte length, 32 KiB, 256 KiB. */
	static const size_t edge[] = { 0, 1, 3, 4, 5, 15, 16, 17, 31, 32, 33,
	    63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025,
	    4 + 16, 4 + 32768, 4 + 32768 + 16, 35000, 4 + 65536,
	    4 + 262144 - 1, 4 + 262144, maxlen - 1, maxlen };
	u_char *buf;
	size_t i, n, len, ok, bad = 0;

	if ((buf = malloc(maxlen + 16)) == NULL) {
		result(0, "random: malloc");
		return;
	}
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		if (!random_case(p, buf, 0, edge[i]) ||
		    !random_case(p, buf, 1 + rnd64() % 15, edge[i]))
			bad++;
	}
	result(bad == 0, "random keys at %zu edge lengths, aligned and not "
	    "(%zu wrong)", i, bad);

	n = quick ? 300 : 3000;
	for (i = ok = 0; i < n; i++) {
		switch (rnd64() % 4) {
		case 0:		/* short, odd: the length field, small packets */
			len = rnd64() % 300;
			break;
		case 1:		/* up to one default packet */
			len = rnd64() % (32 * KiB + 64);
			break;
		case 2:		/* up to 256 KiB packets and beyond */
			len = rnd64() % (maxlen + 1);
			break;
		default:	/* odd lengths only */
			len = (rnd64() % maxlen) | 1;
			break;
		}
		ok += random_case(p, buf, rnd64() % 16, len);
	}
	result(ok == n, "random keys, messages, lengths 0..%zu, offsets: "
	    "%zu/%zu match the portable code", maxlen, ok, n);
	free(buf);
}

/* Several contexts at once, interleaved, each as in its own direction. */
static void
test_many(void)
{
	struct poly1305_evp *p[8];
	u_char buf[2048 + 16];
	size_t i, j, ok = 0, n = 0;

	for (i = 0; i < 8; i++)
		p[i] = poly1305_evp_new();
	for (j = 0; j < 200; j++) {
		for (i = 0; i < 8; i++, n++)
			ok += p[i] != NULL &&
			    random_case(p[i], buf, j % 16, rnd64() % 2048);
	}
	for (i = 0; i < 8; i++)
		poly1305_evp_free(p[i]);
	poly1305_evp_free(NULL);
	result(ok == n, "8 contexts interleaved: %zu/%zu", ok, n);
}

/*
 * chacha20-poly1305@openssh.com rebuilt from its specification
 * (PROTOCOL.chacha20poly1305) with the portable Poly1305: the length
 * field under K_1, the payload under K_2 from block 1, the tag over both
 * under the first 32 bytes of K_2's block 0.
 */
static void
ref_seal(const u_char key[64], u_int seqnr, u_char *dst, const u_char *src,
    u_int len)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	u_char iv[16], polykey[32];
	int outl;

	memset(iv, 0, sizeof(iv));
	POKE_U64(iv + 8, seqnr);
	memset(polykey, 0, sizeof(polykey));
	if (c == NULL ||
	    !EVP_EncryptInit(c, EVP_chacha20(), key, iv) ||
	    !EVP_EncryptUpdate(c, polykey, &outl, polykey, sizeof(polykey)) ||
	    !EVP_EncryptInit(c, EVP_chacha20(), key + 32, iv) ||
	    !EVP_EncryptUpdate(c, dst, &outl, src, 4)) {
		fprintf(stderr, "ref_seal: libcrypto\n");
		exit(2);
	}
	iv[0] = 1;
	if (!EVP_EncryptInit(c, EVP_chacha20(), key, iv) ||
	    (len > 0 && !EVP_EncryptUpdate(c, dst + 4, &outl, src + 4, len))) {
		fprintf(stderr, "ref_seal: libcrypto\n");
		exit(2);
	}
	poly1305_auth(dst + 4 + len, dst, 4 + len, polykey);
	EVP_CIPHER_CTX_free(c);
}

static void
test_chachapoly(void)
{
	static const u_int lens[] = { 0, 8, 12, 28, 60, 1024, 32768 - 4,
	    32768 + 12, 65536, 262144 };
	struct chachapoly_ctx *cp;
	u_char key[64], *src, *got, *ref, *back;
	size_t i, bad_seal = 0, bad_open = 0, bad_forge = 0;
	u_int len, seqnr, plen;
	const size_t max = 4 + 262144 + 16;
	int r;

	src = malloc(max);
	got = malloc(max);
	ref = malloc(max);
	back = malloc(max);
	rnd_fill(key, sizeof(key));
	if (src == NULL || got == NULL || ref == NULL || back == NULL ||
	    (cp = chachapoly_new(key, sizeof(key))) == NULL) {
		result(0, "chachapoly: setup");
		return;
	}
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]) * 4; i++) {
		len = lens[i % (sizeof(lens) / sizeof(lens[0]))];
		seqnr = i < 8 ? (u_int)i : (u_int)rnd64();
		rnd_fill(src, 4 + len);
		ref_seal(key, seqnr, ref, src, len);
		r = chachapoly_crypt(cp, seqnr, got, src, len, 4, 16, 1);
		if (r != 0 || memcmp(got, ref, 4 + len + 16) != 0)
			bad_seal++;
		r = chachapoly_get_length(cp, &plen, seqnr, ref, 4);
		if (r != 0 || plen != PEEK_U32(src))
			bad_open++;
		r = chachapoly_crypt(cp, seqnr, back, ref, len, 4, 16, 0);
		if (r != 0 || memcmp(back, src, 4 + len) != 0)
			bad_open++;
		/* One flipped bit anywhere, tag included, is refused. */
		ref[rnd64() % (4 + len + 16)] ^= 1 << (rnd64() % 8);
		r = chachapoly_crypt(cp, seqnr, back, ref, len, 4, 16, 0);
		if (r != SSH_ERR_MAC_INVALID)
			bad_forge++;
	}
	result(bad_seal == 0, "chachapoly_crypt seals as the specification "
	    "(payloads 0..256 KiB): %zu wrong", bad_seal);
	result(bad_open == 0, "chachapoly_crypt opens the reference's "
	    "packets: %zu wrong", bad_open);
	result(bad_forge == 0, "chachapoly_crypt refuses a flipped bit: "
	    "%zu accepted", bad_forge);
	chachapoly_free(cp);
	free(src);
	free(got);
	free(ref);
	free(back);
}

int
main(void)
{
	struct poly1305_evp *p;
	const char *s;

	quick = getenv("POLY_QUICK") != NULL;
	if ((s = getenv("POLY_SEED")) != NULL)
		rng_state = strtoull(s, NULL, 0);
	else
		rng_state = (uint64_t)time(NULL);
	printf("# POLY_SEED=%llu\n", (unsigned long long)rng_state);

	if ((p = poly1305_evp_new()) == NULL) {
		result(0, "poly1305_evp_new");
		return 1;
	}
#if OPENSSL_VERSION_NUMBER >= 0x30000000L && !defined(LIBRESSL_VERSION_NUMBER)
	result(poly1305_evp_libcrypto(p), "OpenSSL 3: Poly1305 from libcrypto");
#else
	printf("# libcrypto before OpenSSL 3: the portable code throughout\n");
#endif
	test_vectors(p);
	test_random(p);
	test_many();
	test_chachapoly();
	poly1305_evp_free(p);
	return summary();
}
