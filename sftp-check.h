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

#ifndef SFTP_CHECK_H
#define SFTP_CHECK_H

/*
 * The "check-file-handle" and "check-file-name" requests of
 * draft-ietf-secsh-filexfer-extensions-00, section 3: hashes of a byte
 * range of a file, one for the range or one per block of it.
 * sftp-server.c answers them with sftp_check_file(); sftp-resume.c
 * hashes the same range of a local file with sftp_check_range().
 * docs/resume.md has the wire format.
 */
#define SFTP_CHECK_MIN_BLOCK	256	/* the draft's least block-size */
#define SFTP_CHECK_MAX_REPLY	(128 * 1024)	/* of hashes in a reply */
#define SFTP_CHECK_MAX_HASH	64	/* bytes of the longest (sha512) */
#define SFTP_CHECK_ALGS		"sha256,sha512,sha384,sha1,md5"	/* known */

struct sshbuf;

int	sftp_check_alg(const char *);
const char *sftp_check_alg_name(int);
int	sftp_check_range(int, int, uint64_t, uint64_t, u_char *, size_t,
    uint64_t *);
int	sftp_check_file(int, struct sshbuf *, struct sshbuf *);

#endif /* SFTP_CHECK_H */
