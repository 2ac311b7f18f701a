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

#ifndef SFTP_BATCH_H
#define SFTP_BATCH_H

/*
 * A batch of regular files copied in one direction over one SFTP
 * connection, several at once: the open, data, setstat and close
 * requests of later files are sent while earlier files are still being
 * transferred.  sftp_upload_dir() and sftp_download_dir() use one for a
 * whole tree, or the one already set on the connection: scp and sftp
 * open one for several arguments.
 *
 * Files open at once: at most SFTP_BATCH_MAX_FILES, at most half of what
 * the server's limits extension allows, and SFTP_BATCH_SAFE_FILES when
 * the server has no limits extension; where it allows one handle, each
 * file is done before the copy goes on (to list the next directory).  Requests of file data in flight
 * follow the sftp_pipe of sftp-pipeline.c, over all files together.
 */
#define SFTP_BATCH_MAX_FILES	256
#define SFTP_BATCH_SAFE_FILES	8

#define SFTP_BATCH_DOWNLOAD	0x01
#define SFTP_BATCH_PRESERVE	0x02	/* -p: modes and times */
#define SFTP_BATCH_INPLACE	0x04	/* no O_TRUNC; truncate at the end */
#define SFTP_BATCH_RESUME	0x08	/* verified resume (sftp-resume.h) */
#define SFTP_BATCH_ALONE	0x10	/* one file, as sftp_upload() copies it */

struct sftp_conn;
struct sftp_batch;
struct sshbuf;

struct sftp_batch *sftp_batch_new(struct sftp_conn *, int);
int	sftp_batch_add(struct sftp_batch *, const char *, const char *,
    const Attrib *);
int	sftp_batch_file(struct sftp_batch *, const char *, const char *);
void	sftp_batch_say(struct sftp_batch *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void	sftp_batch_arg(struct sftp_batch *, const char *);
void	sftp_batch_arg_failed(struct sftp_batch *);
void	sftp_batch_dir(struct sftp_batch *, const char *, const Attrib *, int);
int	sftp_batch_finish(struct sftp_batch *);
void	sftp_batch_free(struct sftp_batch *);
int	sftp_batch_reply(struct sftp_batch *, struct sshbuf *);
void	sftp_batch_lost(struct sftp_batch *);

#endif /* SFTP_BATCH_H */
