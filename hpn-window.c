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
 * HPNBufferSize, nor, for a stock peer, past the cap of hpn_stock_cap().
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
static u_int hpn_stock_max = HPN_WINDOW_STOCK_MAX;	/* current cap */
static u_int hpn_stock_logged;		/* largest cap logged so far */

/*
 * Linux >= 4.8 headers (TCP_REPAIR_WINDOW is as old) have tcpi_min_rtt and
 * tcpi_bytes_received; elsewhere a stock peer keeps the fixed cap.
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
	hpn_stock_max = HPN_WINDOW_STOCK_MAX;
	hpn_stock_logged = 0;
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
 * The largest window a stock peer may have now.  A stock sender reads up
 * to its window of data into its channel input buffer (see
 * HPN_WINDOW_STOCK_MAX); the rest of the credit we grant is in its socket
 * buffer, on the network, with us, or on its way back as window adjusts.
 * Over any stretch of time as long as the round trip, the credit in transit
 * is at least what arrives here in that stretch: at our receive rate R and
 * the path's minimum round trip T, R * T.  So the cap is
 * HPN_WINDOW_STOCK_MAX + R * T (at most hpn_window_max), which keeps the
 * sender's buffer under HPN_WINDOW_STOCK_MAX while the rate holds, and
 * grows as the link proves its rate.
 *
 * T is tcpi_min_rtt.  R counts arrivals at the TCP level
 * (tcpi_bytes_received), not our reads, which come in bursts; but TCP
 * counts data that arrived out of order only when the hole before it is
 * filled, so a span that ends after a loss is repaired also counts data
 * that arrived before it.  R is therefore the lower of the rates over the
 * last two spans of at least HPN_RATE_SPAN_MSEC: the span with the stall
 * before the repair counts less than arrived.  Called at most every
 * HPN_POLL_MSEC; without TCP_INFO the cap stays HPN_WINDOW_STOCK_MAX.
 */
static void
hpn_stock_cap(struct ssh *ssh, double now)
{
	u_int cap = HPN_WINDOW_STOCK_MAX;
	const char *why = "no TCP_INFO";
#ifdef HPN_HAVE_TCP_INFO
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	u_int rtt;
	u_int64_t rate = 0, r2, extra;
	double span = HPN_RATE_SPAN_MSEC / 1000.0;
	int sock, i1, i2;

	if (hpn_window_max <= HPN_WINDOW_STOCK_MAX) {
		why = "HPNBufferSize";
		goto fixed;
	}
	sock = ssh_packet_get_connection_in(ssh);
	memset(&ti, 0, sizeof(ti));
	if (!ssh_packet_connection_is_on_socket(ssh) ||
	    getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    len < offsetof(struct tcp_info, tcpi_min_rtt) +
	    sizeof(ti.tcpi_min_rtt))
		goto fixed;
	rtt = ti.tcpi_min_rtt;			/* microseconds */
	if (rtt == 0 || rtt == ~0U) {
		why = "no round trip measured yet";
		goto fixed;
	}
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
	extra = rate * rtt / 1000000;
	if (extra > hpn_window_max - HPN_WINDOW_STOCK_MAX)
		cap = hpn_window_max;
	else
		cap = HPN_WINDOW_STOCK_MAX + (u_int)extra;
	hpn_stock_max = cap;
	if (cap > hpn_stock_logged) {
		debug2_f("stock peer: window cap %u = %u + rate %llu B/s * "
		    "min_rtt %u us (max %u)", cap, HPN_WINDOW_STOCK_MAX,
		    (unsigned long long)rate, rtt, hpn_window_max);
		hpn_stock_logged = cap;
	}
	return;
 fixed:
#endif /* HPN_HAVE_TCP_INFO */
	if (cap > hpn_window_max)
		cap = hpn_window_max;
	hpn_stock_max = cap;
	if (hpn_stock_logged == 0) {
		debug2_f("stock peer: window cap %u, fixed (%s)", cap, why);
		hpn_stock_logged = cap;
	}
}

/*
 * Returns the window a bulk channel whose window is now cur should have:
 * twice the connection's TCP receive buffer (polled at most every
 * HPN_POLL_MSEC), or the maximum outright when polling is off, never less
 * than cur and never more than the maximum: hpn_window_max, or for a
 * stock peer the cap of hpn_stock_cap().
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
		if (!patched)
			hpn_stock_cap(ssh, now);
		hpn_last_poll = now;
	}
	max = patched ? hpn_window_max : hpn_stock_max;
	if (cur >= max)
		return cur;
	if (!hpn_poll)
		return max;
	want = (u_int)hpn_rcvbuf > max / 2 ? max : (u_int)hpn_rcvbuf * 2;
	return want > cur ? want : cur;
}
