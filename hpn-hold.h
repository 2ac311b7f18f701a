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

#ifndef HPN_HOLD_H
#define HPN_HOLD_H

/*
 * The send hold (hpn-hold.c): a connection's bulk channels held back so
 * that what it queues on the path stays near what the path carries in a
 * round trip.  The figures behind these numbers are in docs/windows.md,
 * "The send hold".
 */

/* Bulk channels are those with this much or more to send. */
#define HPN_HOLD_SMALL		(16*1024)
/*
 * Held while more than the path's product plus 1/this of it, or plus this
 * many milliseconds of the rate where that is more, is queued: ssh
 * refills the socket at most every HPN_HOLD_POLL_MSEC and acknowledgements
 * come in bursts, so a short path needs the milliseconds.
 */
#define HPN_HOLD_EXTRA		32
#define HPN_HOLD_SLACK_MSEC	4
/*
 * ...and less what a queue standing longer than this (or than that
 * 1/HPN_HOLD_EXTRA of a round trip, if less) holds: the rate is read high.
 */
#define HPN_HOLD_QUEUE_MSEC	8
/* ...by at most 1/this of the path's product... */
#define HPN_HOLD_TRIM		8
/*
 * ...counted from this many minimum round trips after the hold began:
 * the queue the windows' last doubling left drains first.
 */
#define HPN_HOLD_SETTLE		2
/* The socket paced at the rate plus 1/this. */
#define HPN_HOLD_PACE		8
/* Never held below this much queued. */
#define HPN_HOLD_MIN		(1024*1024)
/*
 * Until the path fills: held while the socket's unsent bytes and the
 * output buffer hold more than the socket sends in this long.
 */
#define HPN_HOLD_UNSENT_MSEC	8
/*
 * The path filled once the rate grew by less than a quarter in this many
 * minimum round trips on end, and the smoothed round trip is 1/this
 * above the least.
 */
#define HPN_HOLD_PLATEAU	3
#define HPN_HOLD_FILLED		8
/* Not other traffic's while under 1/this above it... */
#define HPN_HOLD_LONG		4
/* ...or for fewer than this many minimum round trips on end. */
#define HPN_HOLD_LONG_SPANS	16
/* Then not holding for this long. */
#define HPN_HOLD_OFF_SEC	60
/* Round trips are this noisy; paths shorter are not held. */
#define HPN_HOLD_JITTER_USEC	2000
#define HPN_HOLD_RTT_USEC	2000
/* How often TCP_INFO is read while bulk channels send, at most... */
#define HPN_HOLD_POLL_MSEC	2
/* ...and logged (debug3). */
#define HPN_HOLD_LOG_MSEC	100
/*
 * A held channel asks again after every poll; once none has for this
 * long (it closed while held), the poll stops waking for it.
 */
#define HPN_HOLD_RENEW_MSEC	500
/* The rate: samples kept, and how many per minimum round trip. */
#define HPN_HOLD_SAMPLES	64
#define HPN_HOLD_PER_SPAN	8
/* The socket's unsent queue: what the path carries in this long... */
#define HPN_HOLD_LOWAT_MSEC	4
/* ...within these bounds (TCP_NOTSENT_LOWAT). */
#define HPN_HOLD_LOWAT_MIN	(128*1024)
#define HPN_HOLD_LOWAT_MAX	(4*1024*1024)

struct ssh;
struct hpn_hold;

struct hpn_hold *hpn_hold_new(void);
void	hpn_hold_free(struct hpn_hold *);
int	hpn_hold_ask(struct hpn_hold *, struct ssh *, size_t, size_t);
int	hpn_hold_wakes(const struct hpn_hold *);

#endif /* HPN_HOLD_H */
