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

#ifndef SFTP_STREAMS_H
#define SFTP_STREAMS_H

/*
 * More SFTP sessions for one scp or sftp: each its own channel, with
 * its own window, and its own sftp-server on the server.  sftp-batch.c
 * spreads its files over them (its lanes).  The extra streams are
 * session channels of the same connection, through a control socket
 * of the client's own (ssh -M), so no second login; and, where the user
 * asks for them (-X connections=N), connections of their own that log
 * in without a prompt (BatchMode).
 */
#define SFTP_STREAMS_MAX	64
#define SFTP_STREAMS_AUTO	8	/* at most, by default */

struct sftp_conn;

int	sftp_streams_option(const char *);
void	sftp_streams_ssh(arglist *, const arglist *);
void	sftp_streams_direct(const char *);
void	sftp_streams_early(void);
u_int	sftp_streams_max(void);
int	sftp_streams_auto(void);
struct sftp_conn *sftp_streams_get(struct sftp_conn *, u_int, u_int, int);
int	sftp_streams_opening(void);
void	sftp_streams_lost(struct sftp_conn *);
void	sftp_streams_close(void);
void	sftp_streams_cleanup(void);

#endif /* SFTP_STREAMS_H */
