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
 * The receive windows of a connection's bulk channels grow beyond stock
 * OpenSSH's fixed 2 MiB.  A connection has one window budget, what its
 * path needs: the receive rate times the minimum round trip (from
 * TCP_INFO) plus headroom, at most HPNBufferSize, plus a stock window for
 * each channel that is not busy.  The windows of all its bulk channels
 * together stay within the budget.
 *
 * channels.c calls hpn_window_update() each time it considers sending a
 * window adjust for a bulk channel (one that started with at least the
 * stock session window).  A channel's window grows only when it has
 * turned over (the channel's consumer has taken a whole window's worth of
 * data since the window last grew) while the channel's output buffer
 * holds under a quarter of the window: a channel whose consumer stalls,
 * or is slower than the link, keeps the window it has.  Growth takes what
 * the budget has left; when a busy channel finds nothing left, the
 * channels above an equal share of the budget give some back, by not
 * returning data their consumers took to the sender as window.
 *
 * A channel's output buffers that held more than HPN_BUFFER_KEEP give
 * their memory back once they have been empty for a while, and glibc's
 * heap its free pages, once per HPN_TRIM_MSEC per process at most.
 *
 * sshd also starts each rekey before the client's limit by what the
 * client may still send (the windows): a client that starts a rekey
 * itself sends no data for two round trips, and for one when sshd does.
 * A downloading client that guesses the key exchange starts it as early,
 * and lends its busy channels a window's worth more just before, for the
 * round trip in which it can send no window adjust (chan_rekey()).
 *
 * What this side sends is held to the path by hpn-hold.c: channels.c asks
 * hpn_window_hold() before each packet of a bulk channel's data.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#ifdef __GLIBC__
# include <malloc.h>		/* malloc_trim */
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
# include <linux/tcp.h>		/* struct tcp_info with tcpi_min_rtt */
#endif

#include "log.h"
#include "misc.h"
#include "packet.h"
#include "sshbuf.h"
#include "channels.h"
#include "kex.h"
#include "version.h"
#include "hpn-window.h"
#include "hpn-hold.h"

/*
 * Linux >= 4.8 headers (TCP_REPAIR_WINDOW is as old) have tcpi_min_rtt and
 * tcpi_bytes_received; elsewhere the budget does not follow the path.
 */
#if defined(__linux__) && defined(TCP_INFO) && defined(TCP_REPAIR_WINDOW)
# define HPN_HAVE_TCP_INFO 1
#endif

/*
 * Samples of the bytes received on the connection, one per poll: enough
 * for two spans of a 3 s round trip polled every HPN_POLL_MSEC.
 */
#define HPN_RATE_SAMPLES	64

/* A bulk channel, by channel id. */
struct hpn_chan {
	u_int win;		/* its window in hw->total; 0: not counted */
	u_int consumed;		/* its local_consumed after the last adjust */
	u_int64_t used;		/* taken by its consumer since it turned over */
	double busy;		/* when its window last turned over */
	int idle;		/* not busy at the last poll */
	u_int held;		/* most its buffers held since given back */
	double drained;		/* when they last became empty; 0: not */
	u_int lent;		/* window lent for a rekey (chan_rekey()) */
	u_int paced;		/* taken, held back from the next adjust */
};

/* A connection's window state, in struct ssh. */
struct hpn_window {
	/* The options. */
	struct {
		int disabled;		/* HPNDisabled */
		u_int max;		/* HPNBufferSize, in bytes */
		int poll;		/* TcpRcvBufPoll */
	} opt;
	/* The connection's socket. */
	struct {
		int rcvbuf;		/* last polled SO_RCVBUF */
		int rmem_max;		/* tcp_rmem's maximum, 0: unknown */
		int rmem_said;		/* said the kernel holds windows back */
		double last_poll;
	} sock;
	/* The path, from TCP_INFO. */
	struct {
		u_int rtt;		/* minimum round trip, us; 0: unknown */
		u_int srtt_max;		/* largest smoothed round trip, us */
		struct {
			double t;		/* monotime_double() */
			u_int64_t bytes;	/* tcpi_bytes_received */
		} rate[HPN_RATE_SAMPLES];
		u_int nrate;		/* samples taken */
	} path;
	/* The peer, from its banner. */
	struct {
		int checked;
		int patched;
	} peer;
	/* The windows doubling while the link fills. */
	struct {
		u_int turned;		/* window last turned over in time */
		int doubling;		/* the last budget doubled a window */
		double doubled;		/* when a budget last did */
		int shrunk;		/* a stock peer's windows went back */
		u_int64_t calm;		/* stock peer: largest undoubled need */
		u_int64_t calm_budget;	/* stock peer: the budget calm allows */
	} ramp;
	/* A stock server's windows going back at a rate (pace_returns()). */
	struct {
		u_int64_t rate;		/* bytes/s; 0: not paced */
		u_int64_t best;		/* the highest receive rate seen */
		double tokens;		/* window that may go back now */
		double last;		/* when tokens last grew */
	} pace;
	/* The budget. */
	u_int budget;
	u_int budget_logged;	/* largest budget logged so far */
	u_int64_t need_logged;	/* largest need logged so far */
	/* The bulk channels. */
	struct hpn_chan *chan;
	u_int nchan;
	u_int64_t total;	/* sum of the counted windows */
	u_int nbusy;		/* busy channels at the last poll */
	double starved;		/* when a busy channel last found none left */
	/* What this side sends (hpn-hold.c). */
	struct hpn_hold *hold;
};

/*
 * The process's malloc_trim() calls (hpn_trim()): the heap is the
 * process's, whatever the number of connections and channels.
 */
static struct {
	double last;		/* when it last ran; 0: never */
	int pending;		/* one is due once HPN_TRIM_MSEC has passed */
	u_int count;		/* calls so far */
} trim;

/* net.ipv4.tcp_rmem's maximum in this network namespace, or 0. */
static int
tcp_rmem_max(void)
{
#ifdef __linux__
	FILE *f;
	int lo, def, hi;

	if ((f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r")) == NULL)
		return 0;
	if (fscanf(f, "%d %d %d", &lo, &def, &hi) != 3)
		hi = 0;
	fclose(f);
	return hi > 0 ? hi : 0;
#else
	return 0;
#endif
}

/*
 * Set up the connection's windows from the options: disabled
 * (HPNDisabled), max_kib (HPNBufferSize) and poll (TcpRcvBufPoll).
 */
void
hpn_window_init(struct ssh *ssh, int disabled, int max_kib, int poll)
{
	struct hpn_window *hw;

	if ((hw = ssh->hpn_window) == NULL &&
	    (hw = ssh->hpn_window = calloc(1, sizeof(*hw))) == NULL)
		fatal_f("calloc failed");
	free(hw->chan);
	hpn_hold_free(hw->hold);
	memset(hw, 0, sizeof(*hw));
	hw->hold = hpn_hold_new();
	hw->opt.disabled = disabled;
	hw->opt.max = max_kib > 0 ? (u_int)max_kib * 1024 : HPN_WINDOW_MAX;
	if (hw->opt.max > HPN_WINDOW_MAX)
		hw->opt.max = HPN_WINDOW_MAX;
	hw->opt.poll = poll;
	hw->sock.rcvbuf = -1;
	hw->sock.rmem_max = tcp_rmem_max();
	hw->budget = HPN_WINDOW_STOCK_MAX;
	debug2_f("%s, max %u, poll %s", disabled ? "disabled" : "enabled",
	    hw->opt.max, poll ? "yes" : "no");
}

/* Frees the connection's window state; packet.c calls it on close. */
void
hpn_window_free(struct ssh *ssh)
{
	struct hpn_window *hw = ssh->hpn_window;

	if (hw == NULL)
		return;
	free(hw->chan);
	hpn_hold_free(hw->hold);
	free(hw);
	ssh->hpn_window = NULL;
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
peer_is_patched(struct ssh *ssh, struct hpn_window *hw)
{
	struct sshbuf *v;
	char *s, *cp;
	size_t len = strlen(SSH_HPN);

	if (hw->peer.checked)
		return hw->peer.patched;
	if (ssh->kex == NULL)
		return 0;
	v = ssh->kex->server ? ssh->kex->client_version :
	    ssh->kex->server_version;
	if (v == NULL || sshbuf_len(v) == 0)
		return 0;
	if ((s = sshbuf_dup_string(v)) == NULL)
		return 0;
	s[strcspn(s, " \r\n")] = '\0';
	hw->peer.patched = (cp = strstr(s, SSH_HPN)) != NULL &&
	    cp[len] == '\0';
	hw->peer.checked = 1;
	debug2_f("peer %s is %s", s, hw->peer.patched ? "patched" : "stock");
	free(s);
	return hw->peer.patched;
}

/*
 * The index of the newest rate sample taken at or before time t, or -1.
 */
static int
rate_sample_before(struct hpn_window *hw, double t)
{
	u_int i, j, n;

	n = hw->path.nrate < HPN_RATE_SAMPLES ? hw->path.nrate :
	    HPN_RATE_SAMPLES;
	for (i = 1; i <= n; i++) {
		j = (hw->path.nrate - i) % HPN_RATE_SAMPLES;
		if (hw->path.rate[j].t <= t)
			return j;
	}
	return -1;
}

/*
 * Measures the path of the connection: sets *ratep to the receive rate in
 * bytes per second (0 until two spans have been seen), *lastp to the rate
 * over the last span alone, *rttp to the minimum round trip and *srttp to
 * the smoothed round trip in microseconds, and returns 0.  Returns -1
 * where the kernel does not tell them (not Linux, not a socket: a
 * ProxyCommand), or 1 while no round trip has been measured yet.
 *
 * The rate counts arrivals at the TCP level (tcpi_bytes_received), not our
 * reads, which come in bursts; but TCP counts data that arrived out of
 * order only when the hole before it is filled, so a span that ends after
 * a loss is repaired also counts data that arrived before it.  The rate is
 * therefore the lower of the rates over the last two spans of at least
 * HPN_RATE_SPAN_MSEC and a minimum round trip: the span with the stall
 * before the repair counts less than arrived.  A call takes a sample
 * only if the last is HPN_POLL_MSEC old: a window that turns over calls
 * this between polls, and at a hundred turnovers a second samples per
 * call would leave the ring spanning less than the two spans a rate
 * needs.  (TCP's own per-round-trip
 * measure, tcpi_rcv_space, is not used: it is the most the application
 * read in one round trip, which a burst of reads after a stall inflates
 * far past what the path carries.)
 */
static int
hpn_path_sample(struct ssh *ssh, struct hpn_window *hw, double now,
    u_int64_t *ratep, u_int64_t *lastp, u_int *rttp, u_int *srttp)
{
#ifdef HPN_HAVE_TCP_INFO
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	u_int64_t rate = 0, last = 0, r2;
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
	if (span < ti.tcpi_min_rtt / 1000000.0)
		span = ti.tcpi_min_rtt / 1000000.0;
	if ((i1 = rate_sample_before(hw, now - span)) != -1 &&
	    (i2 = rate_sample_before(hw, hw->path.rate[i1].t - span)) != -1 &&
	    ti.tcpi_bytes_received >= hw->path.rate[i1].bytes &&
	    hw->path.rate[i1].bytes >= hw->path.rate[i2].bytes) {
		rate = last = (ti.tcpi_bytes_received -
		    hw->path.rate[i1].bytes) / (now - hw->path.rate[i1].t);
		r2 = (hw->path.rate[i1].bytes - hw->path.rate[i2].bytes) /
		    (hw->path.rate[i1].t - hw->path.rate[i2].t);
		if (r2 < rate)
			rate = r2;
	}
	if (hw->path.nrate == 0 || now - hw->path.rate[(hw->path.nrate - 1) %
	    HPN_RATE_SAMPLES].t >= HPN_POLL_MSEC / 1000.0) {
		hw->path.rate[hw->path.nrate % HPN_RATE_SAMPLES].t = now;
		hw->path.rate[hw->path.nrate % HPN_RATE_SAMPLES].bytes =
		    ti.tcpi_bytes_received;
		hw->path.nrate++;
	}
	*ratep = rate;
	*lastp = last;
	*rttp = ti.tcpi_min_rtt;
	*srttp = ti.tcpi_rtt;
	return 0;
#else
	return -1;
#endif /* HPN_HAVE_TCP_INFO */
}

/*
 * How long, in seconds, a channel counts as busy after its window turned
 * over: HPN_BUSY_MSEC, or two round trips if that is longer.
 */
static double
busy_span(struct hpn_window *hw)
{
	double span = HPN_BUSY_MSEC / 1000.0;

	if (span < 2 * (hw->path.rtt / 1000000.0))
		span = 2 * (hw->path.rtt / 1000000.0);
	return span;
}

/* Whether counted channel ch is busy at time now. */
static int
chan_busy(struct hpn_window *hw, struct hpn_chan *ch, double now)
{
	return ch->busy != 0 && now - ch->busy < busy_span(hw);
}

/*
 * The budget for need: plus idle (a stock window for each channel that is
 * not busy), and at least a stock window for each of n counted channels.
 */
static u_int64_t
budget_of(u_int64_t need, u_int64_t idle, u_int n)
{
	u_int64_t budget = need + idle;

	if (budget < (u_int64_t)n * CHAN_SES_WINDOW_DEFAULT)
		budget = (u_int64_t)n * CHAN_SES_WINDOW_DEFAULT;
	return budget;
}

/*
 * Counts the channels with a window, and marks which are busy at time now.
 * Returns how many are counted; sets hw->nbusy.
 */
static u_int
count_channels(struct hpn_window *hw, double now)
{
	u_int i, n = 0;

	hw->nbusy = 0;
	for (i = 0; i < hw->nchan; i++) {
		if (hw->chan[i].win == 0)
			continue;
		n++;
		hw->chan[i].idle = !chan_busy(hw, &hw->chan[i], now);
		if (!hw->chan[i].idle)
			hw->nbusy++;
	}
	return n;
}

/* What the path needs, and its parts, for the budget's log line. */
struct hpn_need {
	u_int64_t need;		/* per_rtt + head */
	u_int64_t calm;		/* the need without doubling a window */
	u_int64_t rate;		/* the receive rate, bytes/s */
	u_int64_t last;		/* the last span's rate */
	u_int64_t per_rtt;	/* rate times the minimum round trip */
	u_int64_t head;		/* headroom */
	u_int rtt, srtt;	/* minimum and smoothed round trip, us */
};

/* Whether this side is a client and its peer a stock server. */
static int
stock_server(struct ssh *ssh, struct hpn_window *hw)
{
	return !hw->peer.patched && ssh->kex != NULL && !ssh->kex->server;
}

/*
 * The rate at which a stock server's windows go back (pace_returns()):
 * once the path has shown a queue, 5/4 of the highest receive rate seen;
 * not while the link fills (the windows double then), nor on a path
 * under HPN_PACE_RTT_MIN.  A stock server sends what an adjust allows at
 * once, at its TCP's pace, and a BBR sender that the window holds back
 * every round trip never leaves its startup (its samples are all
 * application-limited): it paces at 2.89 times the path's rate.  After a
 * loss, the data behind the hole reaches ssh all at once when the hole
 * is repaired, and so did its window, at the sender: more than the
 * link's queue held, so another loss, and the window stalled again,
 * every second.  A stall of the sender itself (its rekey, BBR's
 * PROBE_RTT) still ends in a burst: it had its window.
 */
static void
pace_rate(struct ssh *ssh, struct hpn_window *hw, const struct hpn_need *n,
    int fill)
{
	u_int64_t was = hw->pace.rate;

	if (n->rate > hw->pace.best)
		hw->pace.best = n->rate;
	if (!stock_server(ssh, hw) || fill || hw->pace.best == 0 ||
	    n->rtt < HPN_PACE_RTT_MIN)
		hw->pace.rate = 0;
	else
		hw->pace.rate = hw->pace.best + hw->pace.best / 4;
	if (hw->pace.rate != 0 && was == 0)
		debug2_f("stock server: windows go back paced, at most "
		    "%llu B/s", (unsigned long long)hw->pace.rate);
	else if (hw->pace.rate == 0 && was != 0)
		debug2_f("stock server: windows go back unpaced");
}

/*
 * The need at time now from a measured path: per_rtt plus headroom, at
 * least base; for a patched peer the headroom is per_rtt (hpn-window.h
 * says why).  While the link fills, the windows may double each round
 * trip, as TCP's slow start does: while no queue forms on the path (the
 * smoothed round trip stays near its minimum) and never again once one
 * clearly has (after a loss, a burst of data held back until its repair
 * looks like a faster path).
 * Then the need is twice a window that turned over within a round trip
 * (the window, not the path, limits the transfer, and a rate measured
 * over the past lags it), for a stock sender only while the rate still
 * grows by a quarter or more from one span to the next (once its TCP
 * send buffer is what limits it, what the window gives beyond waits in
 * its channel input buffer); and for a patched sender, while the rate so
 * grows, twice what the last span carried, counted at most twice the
 * span before.  A stock peer's windows go back to the need without the
 * doubling (calm) two round trips after it last applied, and then no
 * longer double.
 */
static void
path_need(struct ssh *ssh, struct hpn_window *hw, double now, u_int base,
    struct hpn_need *n)
{
	u_int64_t ramp, extra, cap;
	int fill, grows;

	hw->path.rtt = n->rtt;
	n->per_rtt = n->rate * n->rtt / 1000000;
	/* A stock sender's buffer limits its headroom (hpn-window.h). */
	n->head = hw->peer.patched && n->per_rtt > base ? n->per_rtt : base;
	if (n->srtt > hw->path.srtt_max)
		hw->path.srtt_max = n->srtt;
	fill = n->srtt < n->rtt + n->rtt / HPN_RAMP_QUEUE &&
	    hw->path.srtt_max < n->rtt + n->rtt / HPN_RAMP_END;
	/*
	 * A window a stock server's consumer took within about a round
	 * trip is what the server's TCP carries in one now; the rate,
	 * measured over past spans, lags it.  The need grows from that
	 * window by the stock headroom, without doubling (so it is calm).
	 * Not for a stock client: its uploads gained nothing from it, and
	 * it cost ssh CPU.
	 */
	if (stock_server(ssh, hw) && hw->ramp.turned > n->per_rtt) {
		extra = hw->ramp.turned - n->per_rtt;
		/*
		 * Once a queue has formed, a window that turns over is a
		 * burst of what waited (the server's rekey, a loss's
		 * repair), not a faster path: no further than the most
		 * calm need so far.
		 */
		if (!fill) {
			cap = hw->ramp.calm > n->per_rtt + n->head ?
			    hw->ramp.calm - n->per_rtt - n->head : 0;
			if (extra > cap)
				extra = cap;
		}
		n->head += extra;
	}
	n->calm = n->per_rtt + n->head;
	pace_rate(ssh, hw, n, fill);
	grows = n->rate > 0 && 4 * n->last >= 5 * n->rate;
	ramp = (n->last < 2 * n->rate ? n->last : 2 * n->rate) *
	    n->rtt / 1000000;
	if (fill && hw->peer.patched && grows &&
	    2 * ramp > n->per_rtt + n->head)
		n->head = 2 * ramp - n->per_rtt;
	if (fill && (hw->peer.patched || (grows && !hw->ramp.shrunk)) &&
	    2 * (u_int64_t)hw->ramp.turned > n->per_rtt + n->head)
		n->head = 2 * (u_int64_t)hw->ramp.turned - n->per_rtt;
	n->need = n->per_rtt + n->head;
	hw->ramp.doubling = n->need > n->calm;
	if (hw->ramp.doubling)
		hw->ramp.doubled = now;
}

/*
 * Logs a budget at debug2 if it or its need is the highest so far; nidle
 * channels are not busy, why (if not NULL) says why the need is fixed.
 */
static void
log_budget(struct hpn_window *hw, const struct hpn_need *n, u_int nidle,
    const char *why)
{
	const char *peer = hw->peer.patched ? "patched" : "stock";
	u_int64_t idle = (u_int64_t)nidle * CHAN_SES_WINDOW_DEFAULT;

	if (hw->budget <= hw->budget_logged && n->need <= hw->need_logged)
		return;
	if (hw->budget > hw->budget_logged)
		hw->budget_logged = hw->budget;
	if (n->need > hw->need_logged)
		hw->need_logged = n->need;
	if (why != NULL) {
		debug2_f("%s peer: window budget %u = need %llu + %llu for %u "
		    "idle channels; need fixed (%s) (max %u)", peer,
		    hw->budget, (unsigned long long)n->need,
		    (unsigned long long)idle, nidle, why, hw->opt.max);
		return;
	}
	debug2_f("%s peer: window budget %u = need %llu + %llu for %u idle "
	    "channels; need = per_rtt %llu + headroom %llu; per_rtt = "
	    "rate %llu B/s * min_rtt %u us (max %u); last rate %llu B/s, "
	    "srtt %u us, largest %u us, turned %u, shrunk %d", peer,
	    hw->budget, (unsigned long long)n->need,
	    (unsigned long long)idle, nidle, (unsigned long long)n->per_rtt,
	    (unsigned long long)n->head, (unsigned long long)n->rate, n->rtt,
	    hw->opt.max, (unsigned long long)n->last, n->srtt,
	    hw->path.srtt_max, hw->ramp.turned, hw->ramp.shrunk);
}

/*
 * Sets the connection's budget: what the path needs (path_need()), at
 * most HPNBufferSize, plus a stock window for each counted channel that
 * is not busy, and never less than a stock window per counted channel.
 * Where no round trip was measured yet the need is the headroom alone;
 * where TCP_INFO does not tell (not Linux, a ProxyCommand) it is fixed at
 * HPN_WINDOW_STOCK_MAX, whatever the peer's banner says: nothing measures
 * what the path carries, and a consumer that stalls would leave a larger
 * budget's worth of data in memory.
 */
static void
hpn_set_budget(struct ssh *ssh, struct hpn_window *hw, double now)
{
	struct hpn_need n;
	u_int64_t budget, idle;
	u_int nchan, base;
	const char *why = NULL;

	base = peer_is_patched(ssh, hw) ? HPN_WINDOW_HEADROOM :
	    HPN_WINDOW_STOCK_MAX;
	nchan = count_channels(hw, now);
	idle = (u_int64_t)(nchan - hw->nbusy) * CHAN_SES_WINDOW_DEFAULT;
	memset(&n, 0, sizeof(n));
	switch (hpn_path_sample(ssh, hw, now, &n.rate, &n.last, &n.rtt,
	    &n.srtt)) {
	case 0:
		path_need(ssh, hw, now, base, &n);
		break;
	case 1:
		hw->ramp.doubling = 0;
		n.calm = n.need = base;
		why = "no round trip measured yet";
		break;
	default:
		hw->ramp.doubling = 0;
		n.calm = n.need = HPN_WINDOW_STOCK_MAX;
		why = "no TCP_INFO";
		break;
	}
	if (n.need > hw->opt.max)
		n.need = hw->opt.max;
	if (n.calm > hw->opt.max)
		n.calm = hw->opt.max;
	if (n.calm > hw->ramp.calm)
		hw->ramp.calm = n.calm;
	budget = budget_of(n.need, idle, nchan);
	hw->budget = budget > UINT_MAX ? UINT_MAX : (u_int)budget;
	hw->ramp.calm_budget = budget_of(hw->ramp.calm, idle, nchan);
	log_budget(hw, &n, nchan - hw->nbusy, why);
}

/* Polls the connection's receive buffer and path; sets the budget. */
static void
hpn_poll(struct ssh *ssh, struct hpn_window *hw, double now)
{
	int sock;

	if (hw->sock.last_poll != 0 &&
	    now - hw->sock.last_poll < HPN_POLL_MSEC / 1000.0)
		return;
	if (hw->opt.poll) {
		sock = ssh_packet_get_connection_in(ssh);
		if (!ssh_packet_connection_is_on_socket(ssh) ||
		    (hw->sock.rcvbuf = hpn_sock_rcvbuf(sock)) <= 0)
			hw->sock.rcvbuf = 0;
	}
	hpn_set_budget(ssh, hw, now);
	hw->sock.last_poll = now;
}

/* The entry of channel c, counting it if it is not yet. */
static struct hpn_chan *
chan_entry(struct hpn_window *hw, Channel *c)
{
	struct hpn_chan *ch;
	u_int n;

	if (c->self < 0)
		return NULL;
	if ((u_int)c->self >= hw->nchan) {
		n = c->self + 16;
		if ((ch = recallocarray(hw->chan, hw->nchan, n,
		    sizeof(*ch))) == NULL)
			fatal_f("recallocarray failed");
		hw->chan = ch;
		hw->nchan = n;
	}
	ch = &hw->chan[c->self];
	if (ch->win == 0) {
		memset(ch, 0, sizeof(*ch));
		ch->win = c->local_window_max;
		ch->consumed = c->local_consumed;
		hw->total += ch->win;
	}
	return ch;
}

/* Sets channel c's window to win, telling the peer with the next adjust. */
static void
chan_resize(struct hpn_window *hw, Channel *c, struct hpn_chan *ch, u_int win)
{
	u_int old = c->local_window_max;

	if (win > old) {
		c->local_consumed += win - old;
		hw->total += win - old;
	} else {
		/* Only data taken but not yet returned as window. */
		c->local_consumed -= old - win;
		hw->total -= old - win;
	}
	c->local_window_max = ch->win = win;
	debug2("channel %d: window %u %s to %u (windows %llu of budget %u)",
	    c->self, old, win > old ? "grows" : "shrinks", win,
	    (unsigned long long)hw->total, hw->budget);
}

/*
 * Shrinks channel c's window towards target, by at most the data its
 * consumer took and that has not yet been returned as window.
 */
static void
chan_give_back(struct hpn_window *hw, Channel *c, struct hpn_chan *ch,
    u_int target)
{
	u_int win = c->local_window_max, give;

	if (win <= target)
		return;
	give = win - target;
	if (give > c->local_consumed)
		give = c->local_consumed;
	chan_resize(hw, c, ch, win - give);
}

/*
 * The window channel c, whose window turned over, may grow to: what the
 * budget has left, less the room it kept for c as an idle channel if it
 * was one at the last poll.  Where the budget follows the path (a round
 * trip was measured), that is all: the kernel autotunes the TCP receive
 * buffer from what we read per round trip, so a window held to it would
 * hold the buffer too.  Elsewhere, when polling, at most twice the
 * connection's TCP receive buffer.  Says once at debug1 when the kernel's
 * limit on that buffer is below what the window may be.
 */
static u_int
grow_target(struct hpn_window *hw, Channel *c, struct hpn_chan *ch)
{
	u_int64_t want, left, used;
	u_int cur = c->local_window_max;

	used = hw->total + (ch->idle ? CHAN_SES_WINDOW_DEFAULT : 0);
	left = hw->budget > used ? hw->budget - used : 0;
	if (cur + left > hw->opt.max)
		left = hw->opt.max > cur ? hw->opt.max - cur : 0;
	if (!hw->opt.poll || hw->sock.rcvbuf <= 0)
		return cur + left;
	want = (u_int64_t)hw->sock.rcvbuf * 2;
	if (want < cur + left && hw->sock.rmem_max > 0 &&
	    hw->sock.rcvbuf >= hw->sock.rmem_max && !hw->sock.rmem_said) {
		debug("channel %d: TCP receive buffer at its limit, "
		    "net.ipv4.tcp_rmem maximum %d (SO_RCVBUF %d): it, not "
		    "the window (up to %llu), holds the transfer", c->self,
		    hw->sock.rmem_max, hw->sock.rcvbuf,
		    (unsigned long long)(cur + left));
		hw->sock.rmem_said = 1;
	}
	if (hw->path.rtt != 0)
		return cur + left;
	return want < cur + left ? want : cur + left;
}

/*
 * Channel c's window turned over and its consumer keeps up: the window,
 * not the consumer, limits the transfer, so it grows to what the budget
 * allows (grow_target()).  One that turned over within about a round trip
 * first sets a budget from it (the link is filling).
 */
static void
chan_turned_over(struct ssh *ssh, struct hpn_window *hw, Channel *c,
    struct hpn_chan *ch, double now)
{
	u_int win;

	if (hw->path.rtt != 0 && ch->busy != 0 &&
	    now - ch->busy < HPN_TURN_RTTS * (hw->path.rtt / 1000000.0)) {
		hw->ramp.turned = c->local_window_max;
		hpn_set_budget(ssh, hw, now);
	} else
		hw->ramp.turned = 0;
	ch->used = 0;
	ch->busy = now;
	if ((win = grow_target(hw, c, ch)) > c->local_window_max) {
		chan_resize(hw, c, ch, win);
		/*
		 * A window that doubles as the link fills reaches the sender
		 * half a round trip from now, and turns over within a round
		 * trip of that if it limits the transfer: then it may double
		 * again.  Only where the rate spans are a round trip: with
		 * shorter round trips than HPN_RATE_SPAN_MSEC, doubling each
		 * round trip overshot the link (docs/windows.md).
		 */
		if (hw->ramp.doubling &&
		    hw->path.rtt >= HPN_RATE_SPAN_MSEC * 1000)
			ch->busy += hw->path.rtt / 2000000.0;
	} else if (c->local_window_max < hw->budget /
	    (hw->nbusy ? hw->nbusy : 1))
		hw->starved = now;
}

/*
 * Whether a stock sender's windows, which doubled while the link filled,
 * should go back now: two round trips after the last doubling, to the
 * largest need without it (ramp.calm), what the sender's input buffer
 * holds without packing (hpn-window.h).
 */
static int
stock_calm_due(struct hpn_window *hw, Channel *c, double now)
{
	return !hw->peer.patched && hw->total > hw->ramp.calm_budget &&
	    now - hw->ramp.doubled > 2 * (hw->path.rtt / 1000000.0) &&
	    c->local_consumed > 0 &&
	    c->local_window_max > CHAN_SES_WINDOW_DEFAULT;
}

/* Takes channel c's window back towards calm by data not yet returned. */
static void
stock_calm_down(struct ssh *ssh, struct hpn_window *hw, Channel *c,
    struct hpn_chan *ch, double now)
{
	u_int win = c->local_window_max, target = CHAN_SES_WINDOW_DEFAULT;

	if (win - target > hw->total - hw->ramp.calm_budget)
		target = win - (hw->total - hw->ramp.calm_budget);
	chan_give_back(hw, c, ch, target);
	if (!hw->ramp.shrunk) {
		hw->ramp.shrunk = 1;
		hw->ramp.turned = 0;
		hpn_set_budget(ssh, hw, now);
	}
}

/* Another busy channel found nothing left: give back to an equal share. */
static void
chan_share(struct hpn_window *hw, Channel *c, struct hpn_chan *ch)
{
	u_int fair = hw->budget / hw->nbusy;

	if (fair < CHAN_SES_WINDOW_DEFAULT)
		fair = CHAN_SES_WINDOW_DEFAULT;
	chan_give_back(hw, c, ch, fair);
}

/*
 * Gives the free pages of glibc's heap back to the system (malloc_trim())
 * if buffers gave their memory back (trim.pending) and the last call was
 * at least HPN_TRIM_MSEC ago; until then the call stays pending, and
 * hpn_window_timeout() wakes the poll for it.
 */
static void
hpn_trim(double now)
{
	if (!trim.pending ||
	    (trim.last != 0 && now - trim.last < HPN_TRIM_MSEC / 1000.0))
		return;
	trim.pending = 0;
	trim.last = now;
	trim.count++;
	debug2_f("malloc_trim %u at %.3f s", trim.count, now);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/*
 * Notes that channel c's output buffers hold buffered bytes at time now.
 * Once they have been empty for as long as a channel stays busy
 * (busy_span()), buffers that held more than HPN_BUFFER_KEEP since they
 * last did so give their memory back, as sshbuf keeps what it allocated,
 * and glibc's malloc gives the free pages of its heap (what the buffers
 * left behind as they grew) back to the system (hpn_trim(), now or once
 * HPN_TRIM_MSEC has passed since it last did): the memory follows what is
 * buffered, not what once was.  Not at each drain: a consumer slower
 * than the link empties and refills its buffers many times a second.
 */
static void
chan_buffered(struct hpn_window *hw, Channel *c, struct hpn_chan *ch,
    u_int buffered, double now)
{
	if (buffered > ch->held)
		ch->held = buffered;
	if (buffered != 0 || ch->held <= HPN_BUFFER_KEEP) {
		ch->drained = 0;
		return;
	}
	if (ch->drained == 0)
		ch->drained = now;
	if (now - ch->drained < busy_span(hw))
		return;
	debug2("channel %d: output empty for %.1f s, buffers that held %u "
	    "bytes give their memory back", c->self, now - ch->drained,
	    ch->held);
	sshbuf_reset(c->output);
	if (c->extended_usage == CHAN_EXTENDED_WRITE)
		sshbuf_reset(c->extended);
	ch->held = 0;
	ch->drained = 0;
	trim.pending = 1;
	hpn_trim(now);
}

/*
 * Whether channels.c's channel_check_window() sends channel c an adjust
 * right after hpn_window_update(): the same condition.
 */
static int
adjust_due(Channel *c)
{
	return (c->local_window_max - c->local_window >
	    c->local_maxpacket * 3 ||
	    c->local_window < c->local_window_max / 2) &&
	    c->local_consumed > 0;
}

/*
 * Notes what channel c's consumer took that channel_check_window() does
 * not return as window right after this: it sends local_consumed as an
 * adjust, and zeroes it, on the same condition as here.
 */
static void
note_consumed(Channel *c, struct hpn_chan *ch)
{
	ch->consumed = adjust_due(c) ? 0 : c->local_consumed;
}

/*
 * The least window channel c's paced adjust gives back, unless it is all
 * there is: three packets' worth (one adjust per packet would cost both
 * ends CPU), and never more than half a burst, which the tokens reach.
 */
static double
pace_least(Channel *c)
{
	return MINIMUM((double)c->local_maxpacket * 3, HPN_PACE_BURST / 2);
}

/*
 * Channel c's window goes back no faster than hw->pace.rate (pace_rate()),
 * and in HPN_PACE_BURST at most at once: what its consumer took beyond
 * that waits in ch->paced, taken back into local_consumed at the next
 * hpn_window_update(), whose poll hpn_window_timeout() wakes.  Less than
 * pace_least() does not go alone.
 */
static void
pace_returns(struct hpn_window *hw, Channel *c, struct hpn_chan *ch,
    double now)
{
	double allow;

	if (hw->pace.rate == 0) {
		hw->pace.tokens = HPN_PACE_BURST;
		hw->pace.last = now;
		return;
	}
	hw->pace.tokens += (now - hw->pace.last) * hw->pace.rate;
	hw->pace.last = now;
	if (hw->pace.tokens > HPN_PACE_BURST)
		hw->pace.tokens = HPN_PACE_BURST;
	if (!adjust_due(c))
		return;
	allow = hw->pace.tokens > 0 ? hw->pace.tokens : 0;
	if (c->local_consumed > allow) {
		if (allow < pace_least(c))
			allow = 0;
		ch->paced = c->local_consumed - (u_int)allow;
		c->local_consumed = (u_int)allow;
	}
	hw->pace.tokens -= c->local_consumed;
}

/*
 * Whether channel c's window is ours to manage: a bulk channel (one that
 * started with at least a stock session window), windows not disabled.
 */
static int
chan_managed(struct hpn_window *hw, Channel *c)
{
	return hw != NULL && !hw->opt.disabled &&
	    c->local_window_max >= CHAN_SES_WINDOW_DEFAULT;
}

/*
 * Whether our client's rekeys guess the key exchange: only where patch
 * 0008 (kex-guess.c) is in too.
 */
static int
kex_guesses(const struct kex *kex)
{
#ifdef KEX_GUESS_OK
	return (kex->flags & KEX_GUESS_OK) != 0;
#else
	return 0;
#endif
}

/*
 * What the rekey must leave room for (ssh_packet_set_rekey_reserve()) when
 * the peer may still send windows of w bytes: those and their packets'
 * framing.
 */
static u_int64_t
rekey_reserve(u_int64_t w)
{
	return w + w / 16;
}

/*
 * A client that guesses its rekey's key exchange (kex_guesses()) sends
 * nothing from its KEXINIT until the server's reply is in, a round trip,
 * not even window adjusts: a sender that the windows hold would run out
 * of window for most of that round trip.  So shortly before such a rekey
 * starts (HPN_REKEY_LEAD), a busy channel from a patched sender is lent
 * as much window again as it has, within HPNBufferSize and the rekey's
 * reserve, the adjust going out ahead of the KEXINIT; once the new keys
 * are in, the loan comes back out of what its consumer takes.  Returns
 * what it lent now.
 */
static u_int
chan_rekey(struct ssh *ssh, struct hpn_window *hw, Channel *c,
    struct hpn_chan *ch, double now)
{
	u_int win = c->local_window_max, lend;
	u_int64_t lead = MAXIMUM(hw->total / 16, HPN_REKEY_LEAD), room;

	if (ch->lent != 0) {
		if (ssh_packet_is_rekeying(ssh) ||
		    ssh_packet_rekey_near(ssh, lead))
			return 0;
		/* Other channels' shares may have taken some of it. */
		if (ch->lent > win - CHAN_SES_WINDOW_DEFAULT)
			ch->lent = win - CHAN_SES_WINDOW_DEFAULT;
		chan_give_back(hw, c, ch, win - ch->lent);
		ch->lent -= win - c->local_window_max;
		return 0;
	}
	if (ssh->kex == NULL || ssh->kex->server || !kex_guesses(ssh->kex) ||
	    !hw->peer.patched || !chan_busy(hw, ch, now) ||
	    hw->opt.max <= hw->total || !ssh_packet_rekey_near(ssh, lead))
		return 0;
	/*
	 * packet.c caps the reserve: windows whose rekey_reserve() is above
	 * the cap would let the sender overrun the limit.
	 */
	room = ssh_packet_rekey_reserve_max(ssh) / 17 * 16;
	if (room <= hw->total)
		return 0;
	lend = MINIMUM(win, hw->opt.max - hw->total);
	if (lend > room - hw->total)
		lend = room - hw->total;
	if (lend < 3 * c->local_maxpacket)
		return 0;
	chan_resize(hw, c, ch, win + lend);
	ch->lent = lend;
	debug2("channel %d: %u of window lent for the rekey", c->self, lend);
	return lend;
}

/*
 * The volume after which packet.c rekeys, in the cipher's blocks, given
 * stock's rule (blocks): for chacha20-poly1305 with a patched peer,
 * HPN_REKEY_CHACHA_BYTES.  Stock's 1 GiB otherwise: a stock peer rekeys
 * there anyway, and sshd's early start (ssh_packet_rekey_early) counts on
 * the peer's limit being the same as ours.  Each way, each rekey, and at
 * most RekeyLimit as ever.  Every rekey at 1 GiB costs the sender a round
 * trip of silence; at 1000 ms a tenth of an upload's time.
 */
u_int64_t
hpn_window_rekey_blocks(struct ssh *ssh, const struct sshenc *enc,
    u_int64_t blocks)
{
	struct hpn_window *hw = ssh->hpn_window;

	if (hw == NULL || hw->opt.disabled || enc->name == NULL ||
	    enc->block_size == 0 ||
	    strcmp(enc->name, "chacha20-poly1305@openssh.com") != 0 ||
	    !peer_is_patched(ssh, hw))
		return blocks;
	debug_f("%s with a patched peer: %llu blocks, not %llu",
	    enc->name, (unsigned long long)(HPN_REKEY_CHACHA_BYTES /
	    enc->block_size), (unsigned long long)blocks);
	return HPN_REKEY_CHACHA_BYTES / enc->block_size;
}

/*
 * Called by channels.c for an open channel before it considers sending a
 * window adjust: grows or shrinks the window of a bulk channel.
 */
void
hpn_window_update(struct ssh *ssh, Channel *c)
{
	struct hpn_window *hw = ssh->hpn_window;
	struct hpn_chan *ch;
	u_int buffered, win, lent;
	u_int64_t windows;
	double now;

	if (!chan_managed(hw, c) || (ch = chan_entry(hw, c)) == NULL)
		return;
	/* What the consumer took since we last looked. */
	if (c->local_consumed >= ch->consumed)
		ch->used += c->local_consumed - ch->consumed;
	if (ch->win != c->local_window_max) {
		hw->total = hw->total - ch->win + c->local_window_max;
		ch->win = c->local_window_max;
	}
	/* What pacing held back is taken but not yet returned again. */
	c->local_consumed += ch->paced;
	ch->paced = 0;
	now = monotime_double();
	hpn_poll(ssh, hw, now);
	hpn_trim(now);
	buffered = sshbuf_len(c->output);
	if (c->extended_usage == CHAN_EXTENDED_WRITE)
		buffered += sshbuf_len(c->extended);
	chan_buffered(hw, c, ch, buffered, now);
	win = c->local_window_max;
	if (ch->used >= win && buffered <= win / 4)
		chan_turned_over(ssh, hw, c, ch, now);
	else if (stock_calm_due(hw, c, now))
		stock_calm_down(ssh, hw, c, ch, now);
	else if (hw->nbusy > 1 && now - hw->starved < 1.0 &&
	    c->local_consumed > 0)
		chan_share(hw, c, ch);
	lent = chan_rekey(ssh, hw, c, ch, now);
	pace_returns(hw, c, ch, now);
	note_consumed(c, ch);
	/*
	 * An uploading client would start each rekey at its limit and then
	 * wait two round trips; sshd starts it while the client may still
	 * send all its windows (and their framing), and it waits one.  A
	 * downloading client that guesses the key exchange (kex_guesses())
	 * starts it as early, so that its guess, not the sender's KEXINIT at
	 * its limit, begins the exchange: the sender then waits one round
	 * trip, not two.  A loan made just now counts from the next call
	 * on, once its adjust is out: the rekey would hold it back.
	 */
	windows = hw->total - lent;
	if (ssh->kex != NULL && (ssh->kex->server || kex_guesses(ssh->kex)))
		ssh_packet_set_rekey_reserve(ssh, rekey_reserve(windows));
}

/*
 * Called by channels.c for an open channel as it prepares to poll: wakes
 * the poll when a held bulk channel may send again (hpn_window_hold()),
 * when channel c's empty buffers are due to give their memory back
 * (chan_buffered()), or a pending malloc_trim() is due (hpn_trim()).
 * Only for a channel that hpn_window_update() will see after the poll, or
 * the poll would not wait at all.
 */
void
hpn_window_timeout(struct ssh *ssh, Channel *c, struct timespec *timeout)
{
	struct hpn_window *hw = ssh->hpn_window;
	struct hpn_chan *ch;
	double left;

	if (hw != NULL && hpn_hold_wakes(hw->hold))
		ptimeout_deadline_ms(timeout, HPN_HOLD_POLL_MSEC);
	if (!chan_managed(hw, c) ||
	    (c->flags & (CHAN_CLOSE_SENT|CHAN_CLOSE_RCVD)) != 0 ||
	    c->self < 0 || (u_int)c->self >= hw->nchan)
		return;
	if (trim.pending) {
		left = trim.last + HPN_TRIM_MSEC / 1000.0 - monotime_double();
		ptimeout_deadline_ms(timeout,
		    left > 0 ? (long)(left * 1000) + 1 : 0);
	}
	ch = &hw->chan[c->self];
	if (ch->paced != 0 && hw->pace.rate != 0) {
		/* When pace_least() may go back (pace_returns()). */
		left = (pace_least(c) - hw->pace.tokens) / hw->pace.rate;
		ptimeout_deadline_ms(timeout,
		    left > 0 ? (long)(left * 1000) + 1 : 0);
	}
	if (ch->win == 0 || ch->drained == 0)
		return;
	left = ch->drained + busy_span(hw) - monotime_double();
	ptimeout_deadline_ms(timeout, left > 0 ? (long)(left * 1000) + 1 : 0);
}

/*
 * Whether a client's rekey may guess the key exchange (kex-guess.c, where
 * that patch is in): with dynamic windows, which it serves, and not with
 * HPNDisabled.
 */
int
hpn_window_kex_guess(struct ssh *ssh)
{
	struct hpn_window *hw = ssh->hpn_window;

	return hw != NULL && !hw->opt.disabled;
}

/*
 * Called by channels.c before it sends len bytes of channel c's data in
 * one packet: whether to hold them back for now (hpn-hold.c).
 */
int
hpn_window_hold(struct ssh *ssh, Channel *c, size_t len)
{
	struct hpn_window *hw = ssh->hpn_window;

	if (hw == NULL || hw->opt.disabled)
		return 0;
	return hpn_hold_ask(hw->hold, ssh, sshbuf_len(c->input), len);
}

/* Called by channels.c when channel c is freed. */
void
hpn_window_forget(struct ssh *ssh, Channel *c)
{
	struct hpn_window *hw = ssh->hpn_window;
	struct hpn_chan *ch;

	if (hw == NULL || c->self < 0 || (u_int)c->self >= hw->nchan)
		return;
	ch = &hw->chan[c->self];
	if (ch->win == 0)
		return;
	hw->total -= ch->win;
	memset(ch, 0, sizeof(*ch));
}
