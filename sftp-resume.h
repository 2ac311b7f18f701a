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

#ifndef SFTP_RESUME_H
#define SFTP_RESUME_H

/*
 * Verified resume (sftp reget, reput, get -a, put -a; scp -Z): before a
 * copy goes on from the size of what the target already has, that part
 * is compared with the source, range by range, by hashes the server
 * computes (the check-file requests, sftp-check.h).  The copy goes on
 * from the first range that differs, or from the target's end if none
 * does.  A server without those requests gets stock's resume, which
 * trusts the size, and a warning that it is unverified.
 *
 * The comparison of one file is an object fed the replies to its
 * requests: sftp_resume_prefix() drives it alone, sftp-batch.c drives
 * one per file among its other requests.
 */
#define SFTP_RESUME_RANGE	(32 * 1024 * 1024)	/* bytes per hash */
#define SFTP_RESUME_AHEAD	4	/* hash requests in flight */
#define SFTP_RESUME_ALGS	"sha256,sha512"

/* What sftp_resume_listed() finds in a server's lists of extensions. */
#define SFTP_RESUME_BY_HANDLE	0x01	/* check-file-handle */
#define SFTP_RESUME_BY_NAME	0x02	/* check-file-name */

struct sftp_conn;
struct sftp_resume;
struct sshbuf;

int	sftp_resume_listed(const char *, const u_char *, size_t);
int	sftp_resume_probe(struct sftp_conn *);

struct sftp_resume *sftp_resume_new(struct sftp_conn *, const char *, int,
    uint64_t, int);
void	sftp_resume_free(struct sftp_resume *);
int	sftp_resume_want(struct sftp_resume *, uint64_t *, uint64_t *);
void	sftp_resume_sent(struct sftp_resume *, u_int);
int	sftp_resume_waiting(const struct sftp_resume *);
void	sftp_resume_reply(struct sftp_resume *, u_int, u_int,
    struct sshbuf *);
int	sftp_resume_end(struct sftp_resume *, uint64_t *, char **);
int	sftp_resume_prefix(struct sftp_conn *, const u_char *, size_t,
    const char *, const char *, int, uint64_t, uint64_t *);
int	sftp_resume_upload(struct sftp_conn *, const char *, const char *,
    int, uint64_t, Attrib *);

#endif /* SFTP_RESUME_H */
