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
 * Dynamic channel receive windows.
 *
 * The receive window a channel advertises follows the TCP receive buffer
 * of the connection, which the kernel grows as it autotunes, instead of
 * stock OpenSSH's fixed 2 MiB.  channels.c asks hpn_window_target() how
 * large a bulk channel's window should be each time it considers sending a
 * window adjust; the answer never shrinks a window and never goes past
 * HPNBufferSize, nor past the cap of hpn_stock_cap() or hpn_patched_cap(),
 * whichever the peer's banner calls for.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
# include <linux/tcp.h>		/* struct tcp_info with tcpi_min_rtt */
#endif

#include "log.h"
#include "misc.h"
#include "packet.h"
#include "sshbuf.h"
#include "kex.h"
#include "version.h"
#include "hpn-window.h"

static int hpn_disabled = 1;		/* until hpn_window_init() */
static u_int hpn_window_max;		/* bytes */
static int hpn_poll = 1;
static int hpn_rcvbuf = -1;		/* last polled SO_RCVBUF */
static double hpn_last_poll;
static int hpn_peer_checked, hpn_peer_patched;
static u_int hpn_cap = HPN_WINDOW_STOCK_MAX;	/* current cap */
static u_int hpn_cap_logged;		/* largest cap logged so far */

/*
 * Linux >= 4.8 headers (TCP_REPAIR_WINDOW is as old) have tcpi_min_rtt and
 * tcpi_bytes_received; elsewhere the caps do not follow the path.
 */
#if defined(__linux__) && defined(TCP_INFO) && defined(TCP_REPAIR_WINDOW)
# define HPN_HAVE_TCP_INFO 1
#endif

#ifdef HPN_HAVE_TCP_INFO
/* Samples of the bytes received on the connection, one per poll. */
#define HPN_RATE_SAMPLES	16
static struct {
	double t;		/* monotime_double() */
	u_int64_t bytes;	/* tcpi_bytes_received */
} hpn_rate[HPN_RATE_SAMPLES];
static u_int hpn_nrate;			/* samples taken */
#endif

/*
 * Set up from the options: disabled (HPNDisabled), max_kib (HPNBufferSize)
 * and poll (TcpRcvBufPoll).
 */
void
hpn_window_init(int disabled, int max_kib, int poll)
{
	hpn_disabled = disabled;
	hpn_window_max = max_kib > 0 ? (u_int)max_kib * 1024 : HPN_WINDOW_MAX;
	if (hpn_window_max > HPN_WINDOW_MAX)
		hpn_window_max = HPN_WINDOW_MAX;
	hpn_poll = poll;
	hpn_rcvbuf = -1;
	hpn_last_poll = 0;
	hpn_cap = HPN_WINDOW_STOCK_MAX;
	hpn_cap_logged = 0;
#ifdef HPN_HAVE_TCP_INFO
	hpn_nrate = 0;
#endif
	debug2_f("%s, max %u, poll %s", disabled ? "disabled" : "enabled",
	    hpn_window_max, poll ? "yes" : "no");
}

/* Returns the current receive buffer size of socket sock in bytes, or -1. */
int
hpn_sock_rcvbuf(int sock)
{
	int val;
	socklen_t len = sizeof(val);

	if (getsockopt(sock, SOL_SOCKET, SO_RCVBUF, &val, &len) == -1)
		return -1;
	return val;
}

/* Sets the receive buffer of socket sock to kib KiB (TcpRcvBuf). */
void
hpn_set_sock_rcvbuf(int sock, int kib)
{
	int val;

	if (kib <= 0)
		return;
	val = kib > INT_MAX / 1024 ? INT_MAX : kib * 1024;
	if (setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)) == -1) {
		error_f("setsockopt SO_RCVBUF %d: %s", val, strerror(errno));
		return;
	}
	debug_f("SO_RCVBUF set to %d, now %d", val, hpn_sock_rcvbuf(sock));
}

/*
 * Whether the peer's banner carries our tag (SSH_HPN at the end of the
 * software version): such a peer reads ahead at most HPN_INPUT_READAHEAD
 * and copes with any window we offer.
 */
static int
peer_is_patched(struct ssh *ssh)
{
	struct sshbuf *v;
	char *s, *cp;
	size_t len = strlen(SSH_HPN);

	if (hpn_peer_checked)
		return hpn_peer_patched;
	if (ssh->kex == NULL)
		return 0;
	v = ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version;
	if (v == NULL || sshbuf_len(v) == 0)
		return 0;
	if ((s = sshbuf_dup_string(v)) == NULL)
		return 0;
	s[strcspn(s, " \r\n")] = '\0';
	hpn_peer_patched = (cp = strstr(s, SSH_HPN)) != NULL &&
	    cp[len] == '\0';
	hpn_peer_checked = 1;
	debug2_f("peer %s is %s", s, hpn_peer_patched ? "patched" : "stock");
	free(s);
	return hpn_peer_patched;
}

#ifdef HPN_HAVE_TCP_INFO
/*
 * The index of the newest rate sample taken at or before time t, or -1.
 */
static int
rate_sample_before(double t)
{
	u_int i, n;

	n = hpn_nrate < HPN_RATE_SAMPLES ? hpn_nrate : HPN_RATE_SAMPLES;
	for (i = 1; i <= n; i++) {
		if (hpn_rate[(hpn_nrate - i) % HPN_RATE_SAMPLES].t <= t)
			return (hpn_nrate - i) % HPN_RATE_SAMPLES;
	}
	return -1;
}
#endif

/*
 * Measures the path of the connection: sets *ratep to the receive rate in
 * bytes per second (0 until two spans have been seen) and *rttp to the
 * minimum round trip in microseconds, and returns 0.  Returns -1 where the
 * kernel does not tell them (not Linux, not a socket: a ProxyCommand), or
 * 1 while no round trip has been measured yet.
 *
 * The rate counts arrivals at the TCP level (tcpi_bytes_received), not our
 * reads, which come in bursts; but TCP counts data that arrived out of
 * order only when the hole before it is filled, so a span that ends after
 * a loss is repaired also counts data that arrived before it.  The rate is
 * therefore the lower of the rates over the last two spans of at least
 * HPN_RATE_SPAN_MSEC: the span with the stall before the repair counts
 * less than arrived.  Called at most every HPN_POLL_MSEC; each call takes
 * a sample.
 */
static int
hpn_path_sample(struct ssh *ssh, double now, u_int64_t *ratep, u_int *rttp)
{
#ifdef HPN_HAVE_TCP_INFO
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	u_int64_t rate = 0, r2;
	double span = HPN_RATE_SPAN_MSEC / 1000.0;
	int sock, i1, i2;

	sock = ssh_packet_get_connection_in(ssh);
	memset(&ti, 0, sizeof(ti));
	if (!ssh_packet_connection_is_on_socket(ssh) ||
	    getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    len < offsetof(struct tcp_info, tcpi_min_rtt) +
	    sizeof(ti.tcpi_min_rtt))
		return -1;
	if (ti.tcpi_min_rtt == 0 || ti.tcpi_min_rtt == ~0U)
		return 1;
	if ((i1 = rate_sample_before(now - span)) != -1 &&
	    (i2 = rate_sample_before(hpn_rate[i1].t - span)) != -1 &&
	    ti.tcpi_bytes_received >= hpn_rate[i1].bytes &&
	    hpn_rate[i1].bytes >= hpn_rate[i2].bytes) {
		rate = (ti.tcpi_bytes_received - hpn_rate[i1].bytes) /
		    (now - hpn_rate[i1].t);
		r2 = (hpn_rate[i1].bytes - hpn_rate[i2].bytes) /
		    (hpn_rate[i1].t - hpn_rate[i2].t);
		if (r2 < rate)
			rate = r2;
	}
	hpn_rate[hpn_nrate % HPN_RATE_SAMPLES].t = now;
	hpn_rate[hpn_nrate % HPN_RATE_SAMPLES].bytes = ti.tcpi_bytes_received;
	hpn_nrate++;
	*ratep = rate;
	*rttp = ti.tcpi_min_rtt;
	return 0;
#else
	return -1;
#endif /* HPN_HAVE_TCP_INFO */
}

/*
 * Sets hpn_cap, the largest window the peer (called peer in the log) may
 * have now: base plus receive rate times minimum round trip, at most
 * hpn_window_max; base alone while no round trip is known; blind where the
 * kernel gives neither.  Each new highest cap is logged at debug2 with its
 * parts.
 */
static void
hpn_set_cap(struct ssh *ssh, double now, const char *peer, u_int base,
    u_int blind)
{
	u_int64_t rate, extra;
	u_int cap, rtt;
	const char *why;

	if (hpn_window_max <= base) {
		cap = hpn_window_max;
		why = "HPNBufferSize";
		goto fixed;
	}
	switch (hpn_path_sample(ssh, now, &rate, &rtt)) {
	case 0:
		break;
	case 1:
		cap = base;
		why = "no round trip measured yet";
		goto fixed;
	default:
		cap = blind < hpn_window_max ? blind : hpn_window_max;
		why = "no TCP_INFO";
		goto fixed;
	}
	extra = rate * rtt / 1000000;
	if (extra > hpn_window_max - base)
		cap = hpn_window_max;
	else
		cap = base + (u_int)extra;
	hpn_cap = cap;
	if (cap > hpn_cap_logged) {
		debug2_f("%s peer: window cap %u = %u + rate %llu B/s * "
		    "min_rtt %u us (max %u)", peer, cap, base,
		    (unsigned long long)rate, rtt, hpn_window_max);
		hpn_cap_logged = cap;
	}
	return;
 fixed:
	hpn_cap = cap;
	if (hpn_cap_logged == 0) {
		debug2_f("%s peer: window cap %u, fixed (%s)", peer, cap, why);
		hpn_cap_logged = cap;
	}
}

/*
 * The cap for a stock peer.  A stock sender reads up to its window of data
 * into its channel input buffer (see HPN_WINDOW_STOCK_MAX); the rest of
 * the credit we grant is in its socket buffer, on the network, with us, or
 * on its way back as window adjusts.  Over any stretch of time as long as
 * the round trip, the credit in transit is at least what arrives here in
 * that stretch: at our receive rate R and the path's minimum round trip T,
 * R * T.  So the cap is HPN_WINDOW_STOCK_MAX + R * T (at most
 * hpn_window_max), which keeps the sender's buffer under
 * HPN_WINDOW_STOCK_MAX while the rate holds, and grows as the link proves
 * its rate.  Without TCP_INFO the cap stays HPN_WINDOW_STOCK_MAX.
 */
static void
hpn_stock_cap(struct ssh *ssh, double now)
{
	hpn_set_cap(ssh, now, "stock", HPN_WINDOW_STOCK_MAX,
	    HPN_WINDOW_STOCK_MAX);
}

/*
 * The cap for a patched peer.  Such a sender copes with any window but
 * puts all of it on the path, and what the link does not carry within a
 * round trip waits in the link's queue: a window much larger than the
 * bandwidth-delay product overfills the queue and loses packets (at
 * 1 Gbit/s and 100 ms, a 32 MiB window lost about six times as many as a
 * 20 MiB one).  So the cap is HPN_WINDOW_HEADROOM + R * T, with R and T as
 * for a stock peer: what the link carries in a round trip, plus room for
 * the data waiting in our buffers and for the window to grow (R * T grows
 * with the window until the link is full), which bounds what stands in
 * the link's queue.  Without TCP_INFO the window follows the TCP receive
 * buffer up to hpn_window_max.
 */
static void
hpn_patched_cap(struct ssh *ssh, double now)
{
	hpn_set_cap(ssh, now, "patched", HPN_WINDOW_HEADROOM,
	    hpn_window_max);
}

/*
 * Returns the window a bulk channel whose window is now cur should have:
 * twice the connection's TCP receive buffer (polled at most every
 * HPN_POLL_MSEC), or the maximum outright when polling is off, never less
 * than cur and never more than the cap of hpn_stock_cap() or
 * hpn_patched_cap() (itself at most hpn_window_max).
 */
u_int
hpn_window_target(struct ssh *ssh, u_int cur)
{
	u_int max, want;
	double now;
	int sock, patched;

	if (hpn_disabled || cur >= hpn_window_max)
		return cur;
	patched = peer_is_patched(ssh);
	now = monotime_double();
	if (hpn_last_poll == 0 ||
	    now - hpn_last_poll >= HPN_POLL_MSEC / 1000.0) {
		if (hpn_poll) {
			sock = ssh_packet_get_connection_in(ssh);
			if (!ssh_packet_connection_is_on_socket(ssh) ||
			    (hpn_rcvbuf = hpn_sock_rcvbuf(sock)) <= 0)
				hpn_rcvbuf = 0;
		}
		if (patched)
			hpn_patched_cap(ssh, now);
		else
			hpn_stock_cap(ssh, now);
		hpn_last_poll = now;
	}
	max = hpn_cap;
	if (cur >= max)
		return cur;
	if (!hpn_poll)
		return max;
	want = (u_int)hpn_rcvbuf > max / 2 ? max : (u_int)hpn_rcvbuf * 2;
	return want > cur ? want : cur;
}
