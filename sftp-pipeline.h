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

#ifndef SFTP_PIPELINE_H
#define SFTP_PIPELINE_H

/*
 * How many read or write requests of one file transfer sftp and scp keep
 * in flight.  It starts at the usual count and doubles once per round
 * (as many replies as requests were allowed) while the round's transfer
 * rate grew by at least an eighth, up to SFTP_PIPE_MAX_BYTES of requests:
 * so it follows what the path and the windows carry.  An upload allows
 * the most from the start (sftp_pipe_full()).  A count the user gave
 * (-R) never changes.
 */
#define SFTP_PIPE_MAX_BYTES	(256 * 1024 * 1024)
#define SFTP_PIPE_MAX_REQUESTS	16384

struct sftp_pipe;

struct sftp_pipe *sftp_pipe_new(u_int, u_int);
void	sftp_pipe_free(struct sftp_pipe *);
u_int	sftp_pipe_limit(const struct sftp_pipe *);
u_int	sftp_pipe_first(const struct sftp_pipe *, uint64_t, uint64_t);
void	sftp_pipe_full(struct sftp_pipe *);
int	sftp_pipe_fixed(const struct sftp_pipe *);
int	sftp_pipe_reply_ready(int);
void	sftp_pipe_reply(struct sftp_pipe *, size_t);

#endif /* SFTP_PIPELINE_H */
