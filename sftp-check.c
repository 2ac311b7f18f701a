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
 * Hashes of byte ranges of a file, for the "check-file-handle" and
 * "check-file-name" SFTP requests (draft-ietf-secsh-filexfer-extensions-00,
 * section 3).  The server hashes its file with sftp_check_file(); a
 * client hashes the same range of its own copy with sftp_check_range()
 * and compares (sftp-resume.c).
 *
 * A range ends at the file's end: bytes past it are not hashed, so a
 * shorter file gives the hash of fewer bytes.  With a block-size of 0 the
 * reply has one hash for the range; otherwise one per block, the last
 * one for what is left.  The draft's algorithms that OpenSSH's digest
 * code has are offered: sha256, sha512, sha384, sha1 and md5.  The
 * server takes the first of the client's list that it knows.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "log.h"
#include "match.h"
#include "misc.h"
#include "sftp.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "xmalloc.h"
#include "sftp-check.h"

#define CHECK_BUFLEN	(256 * 1024)

static const struct {
	const char *name;
	int alg;
} check_algs[] = {
	{ "sha256", SSH_DIGEST_SHA256 },
	{ "sha512", SSH_DIGEST_SHA512 },
	{ "sha384", SSH_DIGEST_SHA384 },
	{ "sha1", SSH_DIGEST_SHA1 },
	{ "md5", SSH_DIGEST_MD5 },
	{ NULL, -1 }
};

/* The digest of a hash algorithm's name in the draft, or -1. */
int
sftp_check_alg(const char *name)
{
	int i;

	for (i = 0; check_algs[i].name != NULL; i++) {
		if (strcmp(check_algs[i].name, name) == 0)
			return check_algs[i].alg;
	}
	return -1;
}

const char *
sftp_check_alg_name(int alg)
{
	int i;

	for (i = 0; check_algs[i].name != NULL; i++) {
		if (check_algs[i].alg == alg)
			return check_algs[i].name;
	}
	return NULL;
}

/*
 * Hash len bytes of fd from off, or up to its end, into out (dlen bytes,
 * the digest's size); *donep gets the bytes hashed.  Returns 0, or -1
 * with errno set.
 */
int
sftp_check_range(int fd, int alg, uint64_t off, uint64_t len, u_char *out,
    size_t dlen, uint64_t *donep)
{
	struct ssh_digest_ctx *ctx;
	u_char *buf;
	uint64_t done = 0;
	ssize_t n;
	size_t want;
	int oerrno, ret = -1;

	*donep = 0;
	if ((ctx = ssh_digest_start(alg)) == NULL) {
		errno = EINVAL;
		return -1;
	}
	buf = xmalloc(CHECK_BUFLEN);
	while (done < len) {
		want = MINIMUM(len - done, CHECK_BUFLEN);
		if ((n = pread(fd, buf, want, (off_t)(off + done))) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			goto out;
		}
		if (n == 0)
			break;
		if (ssh_digest_update(ctx, buf, n) != 0) {
			errno = EINVAL;
			goto out;
		}
		done += n;
	}
	if (ssh_digest_final(ctx, out, dlen) != 0) {
		errno = EINVAL;
		goto out;
	}
	*donep = done;
	ret = 0;
 out:
	oerrno = errno;
	ssh_digest_free(ctx);
	free(buf);
	errno = oerrno;
	return ret;
}

/*
 * Answer a check-file request whose handle or name the caller has parsed
 * from req and opened as fd: read the rest of the request (hash
 * algorithm list, start offset, length, block size) and append the reply
 * to reply, after the caller's SSH2_FXP_EXTENDED_REPLY and request id.
 * Returns SSH2_FX_OK, another SSH2_FX_ status for the client, or -1 with
 * errno set.
 */
int
sftp_check_file(int fd, struct sshbuf *req, struct sshbuf *reply)
{
	char *algs = NULL, *name;
	uint64_t off, len, done, blen;
	u_char hash[SFTP_CHECK_MAX_HASH];
	uint32_t bsize;
	size_t dlen;
	struct stat st;
	int r, oerrno, alg = -1, status = SSH2_FX_FAILURE;

	if ((r = sshbuf_get_cstring(req, &algs, NULL)) != 0 ||
	    (r = sshbuf_get_u64(req, &off)) != 0 ||
	    (r = sshbuf_get_u64(req, &len)) != 0 ||
	    (r = sshbuf_get_u32(req, &bsize)) != 0) {
		error_fr(r, "parse check-file");
		status = SSH2_FX_BAD_MESSAGE;
		goto out;
	}
	if ((name = match_list(algs, SFTP_CHECK_ALGS, NULL)) != NULL) {
		alg = sftp_check_alg(name);
		free(name);
	}
	if (alg == -1) {
		debug_f("none of the hash algorithms \"%s\" known", algs);
		status = SSH2_FX_OP_UNSUPPORTED;
		goto out;
	}
	if (bsize != 0 && bsize < SFTP_CHECK_MIN_BLOCK) {
		debug_f("block size %u below %u", bsize, SFTP_CHECK_MIN_BLOCK);
		status = SSH2_FX_BAD_MESSAGE;
		goto out;
	}
	if (fstat(fd, &st) == -1) {
		status = -1;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		debug_f("not a regular file");
		goto out;
	}
	/* The range, up to the file's end now. */
	if (off >= (uint64_t)st.st_size)
		len = 0;
	else if (len == 0 || len > (uint64_t)st.st_size - off)
		len = (uint64_t)st.st_size - off;
	dlen = ssh_digest_bytes(alg);
	if (bsize == 0)
		blen = len;
	else {
		blen = bsize;
		if ((len + bsize - 1) / bsize > SFTP_CHECK_MAX_REPLY / dlen) {
			debug_f("%llu bytes in blocks of %u: too many hashes",
			    (unsigned long long)len, bsize);
			goto out;
		}
	}
	if ((r = sshbuf_put_cstring(reply, "check-file")) != 0 ||
	    (r = sshbuf_put_cstring(reply, sftp_check_alg_name(alg))) != 0)
		fatal_fr(r, "compose");
	do {
		if (sftp_check_range(fd, alg, off, MINIMUM(len, blen),
		    hash, dlen, &done) != 0) {
			status = -1;
			goto out;
		}
		if ((r = sshbuf_put(reply, hash, dlen)) != 0)
			fatal_fr(r, "compose");
		off += done;
		len -= MINIMUM(len, done);
		/* A file cut short while it is read: stop at its end. */
		if (done < blen)
			break;
	} while (len > 0);
	status = SSH2_FX_OK;
 out:
	oerrno = errno;
	free(algs);
	errno = oerrno;
	return status;
}
