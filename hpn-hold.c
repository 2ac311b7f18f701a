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
 * The send hold: what this side sends.
 *
 * Whatever a connection has queued ahead of an interactive channel's data
 * (in ssh's output buffer, in the socket, and in the queue of the path's
 * narrowest link) delays that data.  With windows the size of the path
 * (hpn-window.c) a bulk channel keeps half a round trip or more queued in
 * the link, and a keystroke or a new session's request waits behind it.
 * So channels.c asks hpn_hold_ask() (through hpn_window_hold()) before it
 * sends a packet of a channel's data, and a bulk channel (one with
 * HPN_HOLD_SMALL or more to send) waits while the connection has queued
 * what the path carries for now.  Smaller sends are never held, so they
 * go first.  A sending-side change: it works with any peer.
 *
 * The states (enum hold_state), and what moves one to the next:
 *
 *   RAMP     The path has not filled: the congestion window limits the
 *            rate, not the path, and what waits is in the socket.  Held
 *            while the socket's unsent bytes and the output buffer hold
 *            more than HPN_HOLD_UNSENT_MSEC of the rate the socket sends
 *            at (send_unsent()), which leaves TCP data to send at all
 *            times.  -> ON once the rate grew by less than a quarter in
 *            each of HPN_HOLD_PLATEAU minimum round trips and a queue
 *            stands (the smoothed round trip 1/HPN_HOLD_FILLED above the
 *            minimum), on a path of HPN_HOLD_RTT_USEC or more.
 *   ON       Held while the socket and the output buffer hold what the
 *            path carries in a minimum round trip plus 1/HPN_HOLD_EXTRA
 *            of it (or HPN_HOLD_SLACK_MSEC of the rate where that is
 *            more), less what a queue that still stands holds
 *            (send_trim()).  The socket is paced 1/HPN_HOLD_PACE above
 *            the rate and its unsent queue kept to HPN_HOLD_LOWAT_MSEC
 *            (TCP_NOTSENT_LOWAT), so that a refill after a stall does not
 *            queue a burst.  A path that carries more is found at that
 *            pace, since the rate is read high.  -> SUSPECT when the
 *            smoothed round trip is 1/HPN_HOLD_LONG or more above the
 *            minimum.
 *   SUSPECT  As ON, while a long round trip may still be our own queue
 *            draining.  -> ON when it is short again; -> OFF when it
 *            stayed long for HPN_HOLD_LONG_SPANS minimum round trips: the
 *            queue is other traffic's, and holding would only cede the
 *            path to it.
 *   OFF      As RAMP, unpaced, for HPN_HOLD_OFF_SEC.  -> RAMP then.
 *   NEVER    No TCP_INFO or SIOCOUTQ here, or not a plain TCP socket
 *            (Multipath TCP's TCP_INFO is one subflow's): never held.
 *
 * Which fields are meaningful where (hold_check() asserts the marked):
 *
 *   field               RAMP      ON        SUSPECT   OFF       NEVER
 *   plateau_*           updated   kept      kept      kept      -
 *   trim, span_*        -         used      used      -         -
 *   long_since          0 *       0 *       set *     0 *       -
 *   off_until           past      past      past      ahead *   -
 *   pace                0 *       set       set       0 *       -
 *   room                unsent    cap       cap       unsent    max *
 *
 * The rate, bw, is sampled in every state but NEVER (send_rate()).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
# include <linux/sockios.h>	/* SIOCOUTQ */
# include <linux/tcp.h>		/* struct tcp_info with tcpi_delivered */
#endif

#include "log.h"
#include "misc.h"
#include "packet.h"
#include "sshbuf.h"
#include "hpn-hold.h"

/* TCP_INFO with tcpi_delivered (Linux >= 4.18, as TCP_ZEROCOPY_RECEIVE). */
#if defined(__linux__) && defined(TCP_INFO) && defined(SIOCOUTQ) && \
    defined(TCP_NOTSENT_LOWAT) && defined(SO_MAX_PACING_RATE) && \
    defined(TCP_ZEROCOPY_RECEIVE)
# define HPN_HAVE_SEND_HOLD 1
#endif

enum hold_state {
	HOLD_RAMP = 0,		/* the path not yet filled */
	HOLD_ON,		/* held to what the path carries */
	HOLD_SUSPECT,		/* held, the round trip long */
	HOLD_OFF,		/* the queue was other traffic's */
	HOLD_NEVER,		/* no means to measure: never held */
};

/* A connection's send hold, in its struct hpn_window. */
struct hpn_hold {
	enum hold_state state;
	double last;		/* when TCP_INFO was last read */
	struct {
		double t;		/* monotime_double() */
		u_int64_t acked;	/* tcpi_bytes_acked */
		u_int64_t delivered;	/* tcpi_delivered, in bytes */
		u_int64_t rate;		/* over the span before t */
	} s[HPN_HOLD_SAMPLES];
	u_int n;		/* samples taken */
	u_int32_t segs;		/* tcpi_delivered at the last sample */
	u_int64_t delivered;	/* times tcpi_snd_mss, summed */
	u_int64_t bw;		/* largest rate of the last samples */
	u_int rtt;		/* tcpi_min_rtt, us */
	u_int64_t plateau_bw;	/* the rate a quarter above which... */
	double plateau_t;	/* ...it was last checked... */
	u_int plateau_n;	/* ...and has not grown for so many */
	double long_since;	/* SUSPECT: since when */
	double off_until;	/* OFF: until when */
	int64_t room;		/* what bulk channels may still queue */
	u_int64_t trim;		/* taken off the cap: a queue stood */
	u_int span_srtt;	/* the least tcpi_rtt in this span... */
	double span_t;		/* ...which began then */
	int lowat;		/* TCP_NOTSENT_LOWAT set; 0: not */
	u_int64_t pace;		/* SO_MAX_PACING_RATE set; 0: not */
	double held;		/* when a bulk channel was last held;
				   0: the last one asked was not */
	double capped;		/* when one was last held (kept) */
	double logged;		/* when a sample was last logged */
};

struct hpn_hold *
hpn_hold_new(void)
{
	struct hpn_hold *h;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		fatal_f("calloc failed");
	h->state = HOLD_RAMP;
	h->room = INT64_MAX;
	return h;
}

void
hpn_hold_free(struct hpn_hold *h)
{
	free(h);
}

/*
 * Whether the poll should wake within HPN_HOLD_POLL_MSEC: a held channel
 * asks again after each poll and renews h->held; one that closed while
 * held does not, and the wake-ups stop.
 */
int
hpn_hold_wakes(const struct hpn_hold *h)
{
	return h != NULL && h->held != 0 &&
	    monotime_double() - h->held < HPN_HOLD_RENEW_MSEC / 1000.0;
}

#ifdef HPN_HAVE_SEND_HOLD
static const char *
hold_state_name(enum hold_state s)
{
	switch (s) {
	case HOLD_RAMP:
		return "ramp";
	case HOLD_ON:
		return "on";
	case HOLD_SUSPECT:
		return "suspect";
	case HOLD_OFF:
		return "off";
	case HOLD_NEVER:
		return "never";
	}
	return "?";
}

#define HOLD_RULE(h, cond) do { \
	if (!(cond)) \
		fatal_f("state %s: %s", hold_state_name((h)->state), #cond); \
} while (0)

/* Asserts the marked entries of the table at the top of the file. */
static void
hold_check(const struct hpn_hold *h, double now)
{
	HOLD_RULE(h, (h->long_since != 0) == (h->state == HOLD_SUSPECT));
	HOLD_RULE(h, (now < h->off_until) == (h->state == HOLD_OFF) ||
	    h->state == HOLD_NEVER);
	switch (h->state) {
	case HOLD_RAMP:
	case HOLD_OFF:
		HOLD_RULE(h, h->pace == 0);
		break;
	case HOLD_NEVER:
		HOLD_RULE(h, h->room == INT64_MAX);
		break;
	case HOLD_ON:
	case HOLD_SUSPECT:
		break;
	}
}

static void
hold_enter(struct hpn_hold *h, enum hold_state s)
{
	debug3_f("%s -> %s", hold_state_name(h->state), hold_state_name(s));
	h->state = s;
}

/*
 * Takes a sample of the bytes acknowledged, with the rate over the span
 * (a minimum round trip) that ends at it, every 1/HPN_HOLD_PER_SPAN of a
 * span; bw is the largest rate of the last HPN_HOLD_SAMPLES samples:
 * what the path carries, read high rather than low, since a rate read
 * low would lower the cap and so the rate read next.  The rate is the
 * lower of two: the cumulative tcpi_bytes_acked jumps when a loss is
 * repaired, and tcpi_delivered, the segments acknowledged or selectively
 * acknowledged, counts a short segment as a whole one.  A span in which
 * no bulk channel was held and the socket had less than HPN_HOLD_SMALL
 * unsent measured what fed the channels, not the path: its rate may
 * raise bw, not lower it, so a slow feeder's phase does not leave the
 * cap at its rate when the data comes fast again (the cap grows by only
 * 1/HPN_HOLD_EXTRA a round trip).
 */
static void
send_rate(struct hpn_hold *h, double now, u_int64_t acked,
    u_int64_t delivered, u_int32_t notsent)
{
	double span = h->rtt / 1000000.0, dt;
	u_int i, j, n = h->n;
	u_int64_t rate = 0, r2, bw = 0;

	if (n > 0 && now - h->s[(n - 1) % HPN_HOLD_SAMPLES].t <
	    span / HPN_HOLD_PER_SPAN)
		return;
	for (i = n; i > 0 && n - i < HPN_HOLD_SAMPLES - 1; i--) {
		j = (i - 1) % HPN_HOLD_SAMPLES;
		if ((dt = now - h->s[j].t) >= span) {
			if (acked >= h->s[j].acked &&
			    delivered >= h->s[j].delivered) {
				rate = (acked - h->s[j].acked) / dt;
				r2 = (delivered - h->s[j].delivered) / dt;
				if (r2 < rate)
					rate = r2;
			}
			if (h->capped < h->s[j].t &&
			    notsent < HPN_HOLD_SMALL && rate < h->bw)
				rate = h->bw;	/* the feeder's */
			break;
		}
	}
	j = n % HPN_HOLD_SAMPLES;
	h->s[j].t = now;
	h->s[j].acked = acked;
	h->s[j].delivered = delivered;
	h->s[j].rate = rate;
	h->n = ++n;
	for (i = 0; i < HPN_HOLD_SAMPLES && i < n; i++)
		if (h->s[i].rate > bw)
			bw = h->s[i].rate;
	h->bw = bw;
}

/* Sets the socket's pacing limit (0: none) if it moved by 1/32. */
static void
send_pace(struct hpn_hold *h, int sock, u_int64_t pace)
{
	unsigned long v = pace == 0 ? ~0UL : (unsigned long)pace;

	if (pace == h->pace || (pace != 0 && h->pace != 0 &&
	    pace < h->pace + h->pace / 32 && pace > h->pace - h->pace / 32))
		return;
	if (setsockopt(sock, SOL_SOCKET, SO_MAX_PACING_RATE,
	    &v, sizeof(v)) == -1)
		debug_f("SO_MAX_PACING_RATE: %s", strerror(errno));
	h->pace = pace;
}

/*
 * Moves the state on from the round trips (the table at the top of the
 * file); whether bulk channels are held to the path (ON, SUSPECT).
 */
static int
send_holding(struct hpn_hold *h, int sock, double now, u_int srtt)
{
	u_int rtt = h->rtt;

	switch (h->state) {
	case HOLD_OFF:
		if (now < h->off_until)
			return 0;
		hold_enter(h, HOLD_RAMP);
		/* FALLTHROUGH */
	case HOLD_RAMP:
		if (h->plateau_t == 0 || now - h->plateau_t >= rtt / 1e6) {
			if (h->bw >= h->plateau_bw + h->plateau_bw / 4) {
				h->plateau_bw = h->bw;
				h->plateau_n = 0;
			} else
				h->plateau_n++;
			h->plateau_t = now;
		}
		if (h->bw == 0 || h->plateau_n < HPN_HOLD_PLATEAU ||
		    srtt <= rtt + rtt / HPN_HOLD_FILLED +
		    HPN_HOLD_JITTER_USEC || rtt < HPN_HOLD_RTT_USEC)
			return 0;
		hold_enter(h, HOLD_ON);
		h->trim = 0;
		h->span_srtt = 0;
		h->span_t = now + HPN_HOLD_SETTLE * rtt / 1e6;
		debug("Holding bulk channels to what the path carries in "
		    "a round trip (%llu bytes): a queue stood on it (round "
		    "trip %u ms, at least %u ms)", (unsigned long long)
		    (h->bw * rtt / 1000000), srtt / 1000, rtt / 1000);
		return 1;
	case HOLD_ON:
	case HOLD_SUSPECT:
		if (srtt <= rtt + rtt / HPN_HOLD_LONG + HPN_HOLD_JITTER_USEC) {
			if (h->state == HOLD_SUSPECT)
				hold_enter(h, HOLD_ON);
			h->long_since = 0;
			return 1;
		}
		if (h->state == HOLD_ON) {
			hold_enter(h, HOLD_SUSPECT);
			h->long_since = now;
		}
		if (now - h->long_since < HPN_HOLD_LONG_SPANS * rtt / 1e6)
			return 1;
		debug("Not holding bulk channels for %d s: the round trip "
		    "stays at %u ms (at least %u ms) with them held, so the "
		    "queue is other traffic's", HPN_HOLD_OFF_SEC,
		    srtt / 1000, rtt / 1000);
		hold_enter(h, HOLD_OFF);
		h->long_since = 0;
		h->off_until = now + HPN_HOLD_OFF_SEC;
		send_pace(h, sock, 0);
		return 0;
	case HOLD_NEVER:
		break;
	}
	return 0;
}

/*
 * The cap rests on the rate read high, so more than its 1/HPN_HOLD_EXTRA
 * may stand queued on the path.  Once a minimum round trip, the least
 * smoothed round trip (tcpi_rtt) seen in it tells what queue stood all
 * along; while that is above its mark (1/HPN_HOLD_EXTRA of the round
 * trip, at most HPN_HOLD_QUEUE_MSEC), half of the excess, in bytes at the
 * rate, comes off the cap, up to 1/HPN_HOLD_TRIM of the path's product.
 * Under half the mark (the path drained, as in BBR's probe of the round
 * trip), an eighth of it goes back.  A trim never outlasts a queue, so it
 * cannot pull the rate down with it.  The first spans begin
 * HPN_HOLD_SETTLE round trips after the hold did: until then the queue is
 * what the windows' last doubling left, which the cap drains.
 */
static void
send_trim(struct hpn_hold *h, double now, u_int srtt, u_int64_t bdp)
{
	u_int rtt = h->rtt, mark, standing;
	u_int64_t most = bdp / HPN_HOLD_TRIM;

	if (now < h->span_t)
		return;
	if (h->span_srtt == 0 || srtt < h->span_srtt)
		h->span_srtt = srtt;
	if (now - h->span_t < rtt / 1e6)
		return;
	mark = rtt / HPN_HOLD_EXTRA;
	if (mark > HPN_HOLD_QUEUE_MSEC * 1000)
		mark = HPN_HOLD_QUEUE_MSEC * 1000;
	standing = h->span_srtt > rtt ? h->span_srtt - rtt : 0;
	if (standing > mark)
		h->trim += h->bw * (standing - mark) / 2000000;
	else if (standing < mark / 2)
		h->trim -= h->trim / 8;
	if (h->trim > most)
		h->trim = most;
	debug3_f("least round trip %u us in the last %u us: trim %llu",
	    h->span_srtt, rtt, (unsigned long long)h->trim);
	h->span_srtt = 0;
	h->span_t = now;
}

/*
 * RAMP and OFF: sets room to what keeps the socket's unsent bytes and the
 * output buffer to HPN_HOLD_UNSENT_MSEC of the rate it sends at (the
 * delivery rate, or the pacing rate where higher, as in a start).
 */
static void
send_unsent(struct hpn_hold *h, const struct tcp_info *ti, size_t obuf)
{
	u_int64_t rate = h->bw, allow;

	if (h->rtt < HPN_HOLD_RTT_USEC)
		return;
	if (ti->tcpi_pacing_rate != ~0ULL && ti->tcpi_pacing_rate > rate)
		rate = ti->tcpi_pacing_rate;
	allow = rate * HPN_HOLD_UNSENT_MSEC / 1000;
	if (allow < HPN_HOLD_MIN)
		allow = HPN_HOLD_MIN;
	h->room = (int64_t)allow - (int64_t)ti->tcpi_notsent_bytes -
	    (int64_t)obuf;
}

/* Reads the connection's TCP_INFO and send queue; sets room. */
static void
send_sample(struct hpn_hold *h, struct ssh *ssh, double now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	u_int64_t bdp, cap, want;
	size_t obuf;
	int sock, queued, lowat, proto = 0;
	socklen_t plen = sizeof(proto);

	h->last = now;
	h->room = INT64_MAX;
	sock = ssh_packet_get_connection_out(ssh);
	memset(&ti, 0, sizeof(ti));
	if (!ssh_packet_connection_is_on_socket(ssh) ||
	    getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) == -1 ||
	    proto != IPPROTO_TCP ||
	    getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    len < offsetof(struct tcp_info, tcpi_delivered) +
	    sizeof(ti.tcpi_delivered) ||
	    ioctl(sock, SIOCOUTQ, &queued) == -1) {
		debug_f("not holding bulk channels: not a TCP socket with "
		    "TCP_INFO");
		hold_enter(h, HOLD_NEVER);
		hold_check(h, now);
		return;
	}
	if (ti.tcpi_min_rtt == 0 || ti.tcpi_min_rtt == ~0U)
		return;
	h->rtt = ti.tcpi_min_rtt;
	h->delivered += (u_int64_t)(ti.tcpi_delivered - h->segs) *
	    ti.tcpi_snd_mss;
	h->segs = ti.tcpi_delivered;
	send_rate(h, now, ti.tcpi_bytes_acked, h->delivered,
	    ti.tcpi_notsent_bytes);
	obuf = sshbuf_len(ssh_packet_get_output(ssh));
	if (!send_holding(h, sock, now, ti.tcpi_rtt)) {
		send_unsent(h, &ti, obuf);
		hold_check(h, now);
		return;
	}
	bdp = h->bw * h->rtt / 1000000;
	send_trim(h, now, ti.tcpi_rtt, bdp);
	cap = bdp + MAXIMUM(bdp / HPN_HOLD_EXTRA,
	    h->bw * HPN_HOLD_SLACK_MSEC / 1000) -
	    MINIMUM(h->trim, bdp / HPN_HOLD_TRIM);
	if (cap < HPN_HOLD_MIN)
		cap = HPN_HOLD_MIN;
	h->room = (int64_t)cap - queued - (int64_t)obuf;
	send_pace(h, sock, h->bw + h->bw / HPN_HOLD_PACE);
	hold_check(h, now);
	want = h->bw * HPN_HOLD_LOWAT_MSEC / 1000;
	if (want < HPN_HOLD_LOWAT_MIN)
		want = HPN_HOLD_LOWAT_MIN;
	if (want > HPN_HOLD_LOWAT_MAX)
		want = HPN_HOLD_LOWAT_MAX;
	lowat = (int)want;
	if (now - h->logged >= HPN_HOLD_LOG_MSEC / 1000.0) {
		debug3_f("rate %llu B/s, min_rtt %u us, srtt %u us, cap %llu, "
		    "queued %d + %zu", (unsigned long long)h->bw,
		    h->rtt, ti.tcpi_rtt, (unsigned long long)cap, queued,
		    obuf);
		h->logged = now;
	}
	if (h->lowat != 0 && lowat <= 2 * h->lowat && lowat >= h->lowat / 2)
		return;
	if (setsockopt(sock, IPPROTO_TCP, TCP_NOTSENT_LOWAT,
	    &lowat, sizeof(lowat)) == -1) {
		debug_f("TCP_NOTSENT_LOWAT: %s", strerror(errno));
		return;
	}
	h->lowat = lowat;
}
#endif /* HPN_HAVE_SEND_HOLD */

/*
 * Whether to hold back len bytes of a channel's data that has pending
 * bytes to send in all (the poll wakes within HPN_HOLD_POLL_MSEC while one
 * is held: hpn_hold_wakes()).
 */
int
hpn_hold_ask(struct hpn_hold *h, struct ssh *ssh, size_t pending,
    size_t len)
{
#ifdef HPN_HAVE_SEND_HOLD
	double now;

	if (h == NULL || h->state == HOLD_NEVER || pending < HPN_HOLD_SMALL)
		return 0;
	now = monotime_double();
	if (now - h->last >= HPN_HOLD_POLL_MSEC / 1000.0)
		send_sample(h, ssh, now);
	if (h->room <= 0) {
		h->held = h->capped = now;
		return 1;
	}
	h->held = 0;
	h->room -= len;
#endif
	return 0;
}
