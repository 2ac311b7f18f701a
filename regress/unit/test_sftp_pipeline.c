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
 * test_sftp_pipeline: the request pipeline of sftp and scp (the tree's
 * sftp-pipeline.c, compiled in here with a fake clock) driving a
 * simulated path: a request sent at time t is answered at t + RTT, or
 * later when the path's rate is what limits it: requests leave one after
 * another, each taking buflen / rate, where the rate is the path's or,
 * while TCP's window is still opening, what the window carries per round
 * trip (ten packets of 9000 bytes at first, twice as much every round
 * trip).  A transfer keeps as many requests in flight as the pipeline
 * allows.
 *
 * Cases: on long fat paths the transfer carries nearly what it would
 * with every request in flight at once, and the count stays within a few
 * times the path's bandwidth-delay product; on a path the initial 64
 * requests fill, and on loopback, it stays near where it started; a
 * count the user gave never changes; it never exceeds the maximum.
 * Prints "ok - NAME" or "not ok - NAME" per case and a summary line;
 * PIPE_TRACE=1 prints when the count grows.
 */

/* The pipeline's clock is ours; the rest (logging) comes from libssh.a. */
#define monotime_ts fake_monotime_ts
#include "sftp-pipeline.c"
#undef monotime_ts

#include <math.h>

#include "unit.h"

#define BUFLEN		261120		/* OpenSSH's requests */
#define RING		32768		/* > SFTP_PIPE_MAX_REQUESTS */
#define SEC		1000000ULL

static uint64_t fake_us;

void
fake_monotime_ts(struct timespec *ts)
{
	ts->tv_sec = fake_us / SEC;
	ts->tv_nsec = (fake_us % SEC) * 1000;
}

struct sim {
	uint64_t rtt_us;
	uint64_t rate;		/* bytes/s the path carries */
	uint64_t dur_us;	/* how long the transfer runs */
	/* Results. */
	u_int peak;		/* the largest count */
	uint64_t bytes;		/* replies' data over dur_us */
};

/*
 * Run a transfer of s->dur_us through a pipeline of count requests of
 * buflen bytes (buflen 0: a fixed count) on the path s describes.
 */
static void
simulate(struct sim *s, u_int count, u_int buflen)
{
	static uint64_t due[RING];
	struct sftp_pipe *p;
	uint64_t last_due, start;
	u_int head = 0, n = 0, limit;
	size_t len = buflen ? buflen : BUFLEN;
	double rate;

	fake_us = 1000 * SEC;
	s->peak = 0;
	s->bytes = 0;
	last_due = start = fake_us;
	p = sftp_pipe_new(count, buflen);
	for (;;) {
		/* Send while the pipeline allows. */
		limit = sftp_pipe_limit(p);
		if (limit > s->peak && getenv("PIPE_TRACE") != NULL)
			printf("# %.3f s: %u requests\n",
			    (fake_us - start) / 1e6, limit);
		s->peak = MAXIMUM(s->peak, limit);
		while (n < limit && n < RING) {
			/* What TCP carries when the last one arrives. */
			rate = 90000 * exp2((double)(last_due - start) /
			    s->rtt_us) * SEC / s->rtt_us;
			if (rate > s->rate || last_due - start > 64 * s->rtt_us)
				rate = s->rate;
			last_due = MAXIMUM(fake_us + s->rtt_us,
			    last_due + (uint64_t)(len * SEC / rate));
			due[(head + n) % RING] = last_due;
			n++;
		}
		/* The next reply. */
		fake_us = due[head];
		if (fake_us - start > s->dur_us)
			break;
		head = (head + 1) % RING;
		n--;
		s->bytes += len;
		sftp_pipe_reply(p, len);
	}
	sftp_pipe_free(p);
}

/*
 * A transfer on path s through the growing pipeline against one with
 * every request in flight at once (so TCP alone limits it): at least
 * pct percent of its data over the same time, and the count at most
 * times the path's bandwidth-delay product in requests.
 */
static void
lfn_case(const char *name, struct sim *s, u_int pct, u_int times)
{
	struct sim ref = *s;
	u_int bdp = s->rate * s->rtt_us / SEC / BUFLEN;

	simulate(&ref, SFTP_PIPE_MAX_REQUESTS, 0);
	simulate(s, 64, BUFLEN);
	result(s->bytes * 100 >= ref.bytes * pct,
	    "%s-rate: %.1f%% of what TCP alone carries (%u%%)", name,
	    100.0 * s->bytes / ref.bytes, pct);
	result(s->peak <= times * bdp,
	    "%s-bounded: at most %u requests (%u times the path's %u)",
	    name, s->peak, times, bdp);
}

int
main(void)
{
	struct sim s;
	struct sftp_pipe *p;
	u_int max = SFTP_PIPE_MAX_BYTES / BUFLEN;

	memset(&s, 0, sizeof(s));
	s.rate = 125000000;		/* 1 Gbit/s */
	s.dur_us = 40 * SEC;
	s.rtt_us = SEC;
	lfn_case("lfn-1000ms", &s, 95, 3);
	s.rtt_us = 600000;
	lfn_case("lfn-600ms", &s, 95, 4);
	s.rtt_us = 100000;
	lfn_case("lfn-100ms", &s, 95, 4);

	/* 1 Gbit/s x 50 ms: 6.25 MB, which 64 requests fill. */
	s.rtt_us = 50000;
	s.dur_us = 10 * SEC;
	simulate(&s, 64, BUFLEN);
	result(s.peak <= 2 * 64, "short-path-stays: peak %u <= 128", s.peak);

	/* Loopback-like: 2 GB/s, 100 us. */
	s.rtt_us = 100;
	s.rate = 2000000000;
	s.dur_us = 5 * SEC;
	simulate(&s, 64, BUFLEN);
	result(s.peak <= 2 * 64, "loopback-stays: peak %u <= 128", s.peak);

	/*
	 * A download starts with the reads the file needs, up to the count;
	 * with a fixed count or no size, with one, as stock.
	 */
	p = sftp_pipe_new(64, BUFLEN);
	result(sftp_pipe_first(p, 0, 0) == 1 && sftp_pipe_first(p, 1, 0) == 1 &&
	    sftp_pipe_first(p, 10 * BUFLEN, 0) == 10 &&
	    sftp_pipe_first(p, 10 * BUFLEN + 1, 0) == 11 &&
	    sftp_pipe_first(p, 1ULL << 30, 0) == 64 &&
	    sftp_pipe_first(p, 1ULL << 30, (1ULL << 30) - 1) == 1 &&
	    sftp_pipe_first(p, 5, 9) == 1,
	    "first-reads: 1 GiB -> %u, 10 requests' worth -> %u, empty -> %u",
	    sftp_pipe_first(p, 1ULL << 30, 0),
	    sftp_pipe_first(p, 10 * BUFLEN, 0), sftp_pipe_first(p, 0, 0));
	sftp_pipe_free(p);
	p = sftp_pipe_new(64, 0);
	result(sftp_pipe_first(p, 1ULL << 30, 0) == 1,
	    "first-reads-fixed: 1 GiB -> %u",
	    sftp_pipe_first(p, 1ULL << 30, 0));
	sftp_pipe_free(p);

	/* -R 64: fixed. */
	s.rtt_us = SEC;
	s.rate = 125000000;
	s.dur_us = 20 * SEC;
	simulate(&s, 64, 0);
	result(s.peak == 64, "fixed-count: peak %u == 64", s.peak);

	/* A path far beyond 256 MiB of requests: at most the maximum. */
	s.rtt_us = 2 * SEC;
	s.rate = 1250000000;
	s.dur_us = 60 * SEC;
	simulate(&s, 64, BUFLEN);
	result(s.peak == max, "maximum: peak %u == %u", s.peak, max);

	return summary();
}
