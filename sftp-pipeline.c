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
 * The request pipeline of one sftp/scp file transfer (sftp-client.c).
 *
 * Stock keeps at most 64 requests in flight: 16 MiB of 255 KiB reads or
 * writes, which fills 1 Gbit/s for 130 ms of round trip and no more.
 * Here the count doubles once per round while that still raises the
 * transfer rate.  A round is as many replies as requests were allowed
 * when it began: about one round trip when the pipeline is what limits
 * the transfer.  When something else limits it (the peer's windows, the
 * link, a disk), a round brings no more than the last, and the count
 * stays where it is; it grows again when the rate does.  It never
 * shrinks: what it costs is requests of a few dozen bytes, since the
 * data itself is held back by the channel's window on either side.  An
 * upload, whose requests carry that data, allows its maximum at once; a
 * download sends its first reads at once (sftp_pipe_first()).
 */

#include "includes.h"

#include <sys/types.h>

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "misc.h"
#include "xmalloc.h"
#include "sftp-pipeline.h"

struct sftp_pipe {
	u_int limit;		/* requests allowed in flight */
	u_int max;		/* at most; limit if it is fixed */
	u_int round_left;	/* replies until this round ends */
	size_t buflen;		/* bytes per request */
	uint64_t round_bytes;	/* what this round's replies carried */
	uint64_t round_start;	/* now_us() when it began */
	uint64_t last_rate;	/* bytes/s of the last round; 0 before */
};

static uint64_t
now_us(void)
{
	struct timespec ts;

	monotime_ts(&ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * A pipeline of count requests of buflen bytes; with buflen 0 (a count
 * the user chose) it stays at count.
 */
struct sftp_pipe *
sftp_pipe_new(u_int count, u_int buflen)
{
	struct sftp_pipe *p;

	p = xcalloc(1, sizeof(*p));
	p->limit = p->max = count > 0 ? count : 1;
	if (buflen > 0 && p->limit < SFTP_PIPE_MAX_REQUESTS) {
		p->max = MAXIMUM(p->limit,
		    MINIMUM(SFTP_PIPE_MAX_BYTES / buflen,
		    SFTP_PIPE_MAX_REQUESTS));
		p->buflen = buflen;
	}
	p->round_left = p->limit;
	p->round_start = now_us();
	return p;
}

void
sftp_pipe_free(struct sftp_pipe *p)
{
	free(p);
}

u_int
sftp_pipe_limit(const struct sftp_pipe *p)
{
	return p->limit;
}

/*
 * How many reads a download of a file of size bytes, from offset, starts
 * with.  Stock sends one and adds one per full reply; each of the first
 * replies (255 KiB: three of TCP's first windows) then leaves TCP idle
 * for the round trip in which the next reads travel.  A count that is not
 * fixed starts with as many reads as the rest of the file needs, up to
 * the count (64: the 16 MiB stock has in flight a few round trips
 * later).  A fixed count, or a size the server did not give, starts with
 * one read, as stock does.
 */
u_int
sftp_pipe_first(const struct sftp_pipe *p, uint64_t size, uint64_t offset)
{
	uint64_t need;

	if (sftp_pipe_fixed(p) || size <= offset)
		return 1;
	need = (size - offset + p->buflen - 1) / p->buflen;
	return (u_int)MINIMUM(need, p->limit);
}

/*
 * An upload's writes carry their data, which the channel's window holds
 * back: that window, which grows with the path, is what limits the data
 * in flight, and a count growing in front of it only lags it.  So an
 * upload's pipeline allows its maximum from the start (a fixed count
 * stays as it is).  A download's replies are held by the server instead,
 * in sftp-server's output queue, so its count grows with the rate.
 */
void
sftp_pipe_full(struct sftp_pipe *p)
{
	if (p->buflen == 0 || p->limit == p->max)
		return;
	p->limit = p->max;
	debug_f("%u requests of %zu bytes in flight", p->limit, p->buflen);
}

/*
 * Whether a reply can be read from fd now.  An upload whose count is not
 * fixed reads each status as soon as it is in, not only once its count
 * of writes is out: with every request allowed, a failed write would
 * otherwise be seen only after up to SFTP_PIPE_MAX_BYTES more.
 */
int
sftp_pipe_reply_ready(int fd)
{
	struct pollfd pfd;

	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	return poll(&pfd, 1, 0) == 1 &&
	    (pfd.revents & (POLLIN|POLLHUP|POLLERR)) != 0;
}

/*
 * Whether the count is fixed (the user's, or the server's limit).  Only
 * then does an upload wait for its first write's status before it sends
 * more, as stock does: on a long path that round trip leaves TCP's
 * window idle while it should be opening.
 */
int
sftp_pipe_fixed(const struct sftp_pipe *p)
{
	return p->buflen == 0;
}

/* A round ended: grow if its rate beat the last round's by an eighth. */
static void
sftp_pipe_round(struct sftp_pipe *p, uint64_t now)
{
	uint64_t us = MAXIMUM(now - p->round_start, 1);
	uint64_t rate = p->round_bytes * 1000000 / us;

	if (p->last_rate != 0 && rate >= p->last_rate + p->last_rate / 8 &&
	    p->limit < p->max) {
		p->limit = MINIMUM(p->limit * 2, p->max);
		debug_f("%u requests of %zu bytes in flight (%llu KiB/s)",
		    p->limit, p->buflen, (unsigned long long)rate / 1024);
	}
	p->last_rate = MAXIMUM(p->last_rate, rate);
	p->round_left = p->limit;
	p->round_bytes = 0;
	p->round_start = now;
}

/* A reply that completed len bytes of the transfer. */
void
sftp_pipe_reply(struct sftp_pipe *p, size_t len)
{
	if (p->max == p->limit)
		return;
	p->round_bytes += len;
	if (p->round_left > 1) {
		p->round_left--;
		return;
	}
	sftp_pipe_round(p, now_us());
}
