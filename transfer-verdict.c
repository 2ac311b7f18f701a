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
 * What limited a connection's transfer: one line when the connection
 * ends, from ssh at verbose level (ssh -v, and so scp -v and sftp -v) and
 * from sshd at INFO:
 *
 *   Transfer verdict: CAUSE: WHAT; EVIDENCE
 *
 * The loops of ssh and sshd call verdict_poll() each time before they
 * wait.  It notes what the connection waits on until the next call, so
 * that each spell of the loop's time is put down to one or more of:
 *
 *   socket  the packet layer holds data the socket has not taken
 *   held    channel data the peer's window allows waits to be sent
 *   window  channel data waits for the peer's channel window
 *   drain   received data waits for a program on this side to take it
 *   rekey   a key exchange runs while data waits
 *   idle    none of these: this side waits for its own program (a
 *           sender) or for the peer (a receiver)
 *
 * Only the transfer counts: from the first byte that moved, the spells
 * that waited on something, and the idle ones shorter than V_GAP_MAX
 * after which this side moved data its way (see account()).  At the
 * end the side that sent more judges as the sender, the other as the
 * receiver, with, where Linux tells, TCP_INFO (the time TCP had data in
 * flight, and of it the time it waited for the peer's receive window or
 * for its own send buffer), the process's CPU time and the time it waited
 * for a CPU (/proc/self/schedstat, its main thread).  The causes, in the
 * order tried:
 *
 *   cpu                 this process used a CPU or waited for one (on
 *                       a run queue) for V_CPU_SHARE of the time
 *   channel-window      sender: data waited for the peer's channel window
 *   tcp-receive-window  sender: TCP waited for the peer's receive window;
 *                       receiver: its TCP receive buffer reached
 *                       net.ipv4.tcp_rmem's maximum while it waited
 *   send-buffer         sender: TCP waited for its own send buffer
 *   network             sender: the socket took data no faster, neither
 *                       window nor buffer held it: the congestion window
 *   feeder              sender: the program feeding it had nothing more
 *   drain               receiver: its program took the data no faster
 *   sender              receiver: it waited for data: see the sender's
 *   mixed               no cause held for V_SHARE of the time
 *   none                too little moved to tell
 *
 * With ssh's Metrics, the same counters go to MetricsPath every
 * MetricsInterval seconds, a line each (docs/verdict.md).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
# include <linux/tcp.h>		/* struct tcp_info with the chrono stats */
#endif

#include "log.h"
#include "misc.h"
#include "packet.h"
#include "channels.h"
#include "transfer-verdict.h"

/* tcpi_busy_time and its kin came with Linux 4.10; TCP_ZEROCOPY_RECEIVE 4.18 */
#if defined(__linux__) && defined(TCP_INFO) && defined(TCP_ZEROCOPY_RECEIVE)
# define VERDICT_HAVE_TCP_INFO 1
#endif

extern char *__progname;

#define V_SOCKET	0
#define V_HELD		1
#define V_WINDOW	2
#define V_DRAIN		3
#define V_REKEY		4
#define V_IDLE		5
#define V_NSTATE	6

#define V_GAP_MAX	2.0		/* an idle spell this long is no transfer */
#define V_MIN_BYTES	(1024 * 1024)	/* less: too little to tell */
#define V_MIN_ACTIVE	0.2		/* seconds; less: too little to tell */
#define V_SHARE		0.5		/* of the time, to name a cause */
#define V_CPU_SHARE	0.8		/* of the time on (or waiting for) a CPU */
#define V_CPU_WAITED	0.2		/* of the time waiting: say so */
#define V_TCP_SHARE	0.3		/* of TCP's busy time, for its limits */
#define V_TCP_EVERY	1.0		/* seconds between TCP_INFO readings */

static const char *state_names[V_NSTATE] = {
	"socket", "held", "window", "drain", "rekey", "idle"
};

/* One reading of TCP_INFO; times in microseconds. */
struct v_tcp {
	int ok;
	u_int64_t busy, rwnd, sndbuf;
	u_int64_t rate;			/* delivery rate, bytes/s */
	u_int rtt, min_rtt, cwnd, retrans, notsent;
};

/*
 * CPU time, seconds: used by the process (all threads), by its main
 * thread and spent by it waiting for a CPU (-1: unknown).
 */
struct v_cpu {
	double used, run, wait;
};

static struct {
	int on;
	int server;
	pid_t pid;
	int sock;		/* -1: not a TCP socket */
	double start, last, first, tcp_at;
	double gap_out, gap_in;	/* idle since bytes were last sent, received */
	int state;		/* bits of V_*, from the last poll */
	u_int64_t ib0, ob0, ib, ob;
	double t[V_NSTATE];	/* seconds of the transfer in each state */
	double flagged;		/* seconds in one state or more */
	double idle_out;	/* idle spells that ended in bytes sent */
	double idle_in;		/* idle spells that ended in bytes received */
	double active;		/* seconds of the transfer, for its side */
	struct v_tcp tcp0, tcp;
	struct v_cpu cpu0;
	FILE *metrics;
	int interval;
	double next_metric;
} v;

static void
read_tcp(struct v_tcp *t)
{
#ifdef VERDICT_HAVE_TCP_INFO
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (v.sock == -1)
		return;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(v.sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    len < offsetof(struct tcp_info, tcpi_sndbuf_limited) +
	    sizeof(ti.tcpi_sndbuf_limited))
		return;
	t->ok = 1;
	t->busy = ti.tcpi_busy_time;
	t->rwnd = ti.tcpi_rwnd_limited;
	t->sndbuf = ti.tcpi_sndbuf_limited;
	t->rate = ti.tcpi_delivery_rate;
	t->rtt = ti.tcpi_rtt;
	t->min_rtt = ti.tcpi_min_rtt;
	t->cwnd = ti.tcpi_snd_cwnd;
	t->retrans = ti.tcpi_total_retrans;
	t->notsent = ti.tcpi_notsent_bytes;
#endif
}

static void
read_cpu(struct v_cpu *c)
{
	struct rusage ru;
	unsigned long long run, wait;
	FILE *f;

	c->used = 0;
	c->run = c->wait = -1;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		c->used = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000000.0;
	}
	/* Linux: nanoseconds on a CPU, then waiting on a run queue */
	if ((f = fopen("/proc/self/schedstat", "r")) == NULL)
		return;
	if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
		c->run = run / 1e9;
		c->wait = wait / 1e9;
	}
	fclose(f);
}

/* Whether sock is a TCP socket (not Multipath TCP, not a pipe). */
static int
tcp_socket(struct ssh *ssh)
{
	int sock, proto;
	socklen_t len = sizeof(proto);

	if (!ssh_packet_connection_is_on_socket(ssh))
		return -1;
	sock = ssh_packet_get_connection_in(ssh);
#ifdef SO_PROTOCOL
	if (getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 &&
	    proto != IPPROTO_TCP)
		return -1;
#endif
	return sock;
}

static void
metrics_line(double now)
{
	struct v_tcp t;
	struct v_cpu c;
	struct timeval tv;
	int i;

	memset(&t, 0, sizeof(t));
	read_tcp(&t);
	read_cpu(&c);
	gettimeofday(&tv, NULL);
	fprintf(v.metrics, "%lld.%03ld\t%.3f\t%llu\t%llu\t%.3f\t%.3f\t%.3f",
	    (long long)tv.tv_sec, (long)tv.tv_usec / 1000, now - v.start,
	    (unsigned long long)v.ob, (unsigned long long)v.ib,
	    c.used, c.run, c.wait);
	if (t.ok) {
		fprintf(v.metrics, "\t%u\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu"
		    "\t%u", t.rtt, t.min_rtt, t.cwnd, t.retrans,
		    (unsigned long long)t.busy, (unsigned long long)t.rwnd,
		    (unsigned long long)t.sndbuf,
		    (unsigned long long)t.rate, t.notsent);
	} else
		fprintf(v.metrics, "\t-\t-\t-\t-\t-\t-\t-\t-\t-");
	for (i = 0; i < V_IDLE; i++)
		fprintf(v.metrics, "\t%.3f", v.t[i]);
	fprintf(v.metrics, "\t%.3f\t%.3f\n", v.idle_out, v.idle_in);
	if (fflush(v.metrics) != 0) {
		error_f("metrics file: %s; no more metrics", strerror(errno));
		fclose(v.metrics);
		v.metrics = NULL;
	}
}

/*
 * Starts watching the connection (server: sshd, else ssh), with metrics
 * to path every interval seconds where path is not NULL.
 */
void
verdict_start(struct ssh *ssh, int server, const char *path, int interval)
{
	char *file;
	int fd, i;

	memset(&v, 0, sizeof(v));
	v.on = 1;
	v.server = server;
	v.pid = getpid();
	v.sock = tcp_socket(ssh);
	v.start = v.last = monotime_double();
	ssh_packet_get_bytes(ssh, &v.ib, &v.ob);
	if (path == NULL)
		return;
	file = tilde_expand_filename(path, getuid());
	if ((fd = open(file, O_WRONLY|O_CREAT|O_APPEND, 0600)) == -1 ||
	    (v.metrics = fdopen(fd, "a")) == NULL)
		fatal("Cannot open metrics file \"%s\": %s", file,
		    strerror(errno));
	free(file);
	v.interval = interval;
	v.next_metric = v.start + interval;
	fprintf(v.metrics, "# ssh transfer metrics, every %d s, %s\n"
	    "# time\telapsed\tsent\treceived\tcpu\tcpu_main\tcpu_wait"
	    "\trtt_us\tmin_rtt_us\tcwnd\tretrans\tbusy_us\trwnd_limited_us"
	    "\tsndbuf_limited_us\tdelivery_rate\tnotsent", interval,
	    v.sock == -1 ? "no TCP_INFO (not a TCP socket)" : "TCP_INFO");
	for (i = 0; i < V_IDLE; i++)
		fprintf(v.metrics, "\t%s", state_names[i]);
	fprintf(v.metrics, "\tidle_send\tidle_recv\n");
	metrics_line(v.start);
}

/* Ends an idle spell: it counts if shorter than V_GAP_MAX. */
static void
idle_end(double *gap, double *idle)
{
	if (*gap < V_GAP_MAX)
		*idle += *gap;
	*gap = 0;
}

/*
 * Puts the spell since the last poll down to what it waited on.  Idle
 * time is part of the transfer if, within V_GAP_MAX, something waits
 * again or bytes move: for the sender if it sends then (its program fed
 * it), for the receiver if it receives (it waited for data); the peer's
 * packets in between (window adjustments) do not end the sender's
 * spell, nor the receiver's its own.
 */
static void
account(double now, int sent, int received, int next)
{
	double dt = now - v.last;
	int i;

	if (v.first == 0)
		return;
	if (v.state != 0) {
		for (i = 0; i < V_IDLE; i++) {
			if ((v.state & (1 << i)) != 0)
				v.t[i] += dt;
		}
		v.flagged += dt;
	} else {
		v.gap_out += dt;
		v.gap_in += dt;
	}
	if (sent || next != 0)
		idle_end(&v.gap_out, &v.idle_out);
	if (received || next != 0)
		idle_end(&v.gap_in, &v.idle_in);
}

/* Called by the loop before it waits. */
void
verdict_poll(struct ssh *ssh)
{
	u_int64_t ib, ob;
	u_int send, window, drain;
	double now;
	int moved, next = 0;

	if (!v.on || v.pid != getpid())
		return;
	now = monotime_double();
	ssh_packet_get_bytes(ssh, &ib, &ob);
	moved = ib != v.ib || ob != v.ob;

	channel_get_pending(ssh, &send, &window, &drain);
	if (ssh_packet_have_data_to_write(ssh))
		next |= 1 << V_SOCKET;
	if (send > 0)
		next |= 1 << V_HELD;
	if (window > 0)
		next |= 1 << V_WINDOW;
	if (drain > 0)
		next |= 1 << V_DRAIN;
	if (next != 0 && ssh_packet_is_rekeying(ssh))
		next |= 1 << V_REKEY;

	account(now, ob != v.ob, ib != v.ib, next);
	if (moved && v.first == 0) {
		v.first = now;
		v.ib0 = v.ib;
		v.ob0 = v.ob;
		read_tcp(&v.tcp0);
		v.tcp = v.tcp0;
		v.tcp_at = now;
		read_cpu(&v.cpu0);
	}
	v.ib = ib;
	v.ob = ob;
	v.state = next;
	v.last = now;
	/* Keep a recent reading for a connection that ends closed */
	if (v.first != 0 && now - v.tcp_at >= V_TCP_EVERY) {
		read_tcp(&v.tcp);
		v.tcp_at = now;
	}
	if (v.metrics != NULL && now >= v.next_metric) {
		metrics_line(now);
		while (v.next_metric <= now)
			v.next_metric += v.interval;
	}
}

/* Brings the loop's timeout forward to the next metrics line. */
void
verdict_deadline(struct timespec *timeout)
{
	double left;

	if (!v.on || v.metrics == NULL || v.pid != getpid())
		return;
	left = v.next_metric - monotime_double();
	ptimeout_deadline_ms(timeout, left <= 0 ? 0 : (long)(left * 1000) + 1);
}

/* x seconds as a share of the transfer, in per cent (at most 100). */
static double
share(double x)
{
	if (v.active <= 0)
		return 0;
	return x >= v.active ? 100 : 100 * x / v.active;
}

/* The receive buffer of this side's socket, if at tcp_rmem's maximum. */
static int
rcvbuf_at_max(void)
{
	int rcvbuf, lo, def, max = -1;
	socklen_t len = sizeof(rcvbuf);
	FILE *f;

	if (v.sock == -1 || getsockopt(v.sock, SOL_SOCKET, SO_RCVBUF,
	    &rcvbuf, &len) == -1)
		return -1;
	if ((f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r")) == NULL)
		return -1;
	if (fscanf(f, "%d %d %d", &lo, &def, &max) != 3)
		max = -1;
	fclose(f);
	return max > 0 && rcvbuf >= max ? max : -1;
}

/*
 * The cause, as a word and as a sentence for the verdict line.  cpu and
 * wait are shares of the transfer's time (wait -1 if unknown).
 */
static const char *
cause(int sender, double cpu, double wait, const struct v_tcp *dt,
    char *what, size_t len)
{
	double busy = dt->ok ? dt->busy : 0;
	int max;

	if (cpu + (wait > 0 ? wait : 0) >= V_CPU_SHARE) {
		snprintf(what, len, "this side's %s used %.0f%% of a CPU%s",
		    __progname, 100 * cpu, wait >= V_CPU_WAITED ?
		    " and waited for one most of the rest" : "");
		return "cpu";
	}
	if (sender && v.t[V_WINDOW] >= V_SHARE * v.active) {
		snprintf(what, len, "data waited for the peer's channel "
		    "window %.0f%% of the time: the peer's program, or "
		    "the peer, takes it no faster (see the peer's verdict)",
		    share(v.t[V_WINDOW]));
		return "channel-window";
	}
	/* Both are the socket's (held: kept back to what the path takes) */
	if (sender && (v.t[V_SOCKET] >= V_SHARE * v.active ||
	    v.t[V_HELD] >= V_SHARE * v.active)) {
		if (busy > 0 && dt->rwnd >= V_TCP_SHARE * busy) {
			snprintf(what, len, "TCP waited for the peer's "
			    "receive window %.0f%% of the time it was busy "
			    "(the peer's net.ipv4.tcp_rmem or SO_RCVBUF)",
			    100 * dt->rwnd / busy);
			return "tcp-receive-window";
		}
		if (busy > 0 && dt->sndbuf >= V_TCP_SHARE * busy) {
			snprintf(what, len, "TCP waited for this side's send "
			    "buffer %.0f%% of the time it was busy "
			    "(net.ipv4.tcp_wmem)", 100 * dt->sndbuf / busy);
			return "send-buffer";
		}
		if (!dt->ok) {
			snprintf(what, len, "the socket took data no faster "
			    "(no TCP_INFO here to tell the path from the "
			    "peer's TCP window)");
		} else {
			snprintf(what, len, "the path: TCP's congestion "
			    "window (%u segments at a %.1f ms round trip, "
			    "%u retransmitted)", dt->cwnd, dt->rtt / 1000.0,
			    dt->retrans);
		}
		return "network";
	}
	if (sender && v.t[V_IDLE] >= V_SHARE * v.active) {
		snprintf(what, len, "the program feeding the channel on this "
		    "side had nothing to send %.0f%% of the time (its disk, "
		    "its pipe or its CPU)", share(v.t[V_IDLE]));
		return "feeder";
	}
	if (!sender && v.t[V_DRAIN] >= V_SHARE * v.active) {
		snprintf(what, len, "the program draining the channel on "
		    "this side took the data no faster: it waited %.0f%% of "
		    "the time (its disk, its pipe or its CPU)",
		    share(v.t[V_DRAIN]));
		return "drain";
	}
	if (!sender && v.t[V_IDLE] >= V_SHARE * v.active) {
		if ((max = rcvbuf_at_max()) > 0) {
			snprintf(what, len, "this side waited for data %.0f%% "
			    "of the time with its TCP receive buffer at "
			    "net.ipv4.tcp_rmem's maximum, %d bytes",
			    share(v.t[V_IDLE]), max);
			return "tcp-receive-window";
		}
		snprintf(what, len, "this side waited for data %.0f%% of the "
		    "time: the sending side or the path limits it (see the "
		    "sender's verdict)", share(v.t[V_IDLE]));
		return "sender";
	}
	snprintf(what, len, "no one cause held half of the time");
	return "mixed";
}

/* Says once what limited the transfer: ssh at verbose, sshd at INFO. */
void
verdict_end(struct ssh *ssh)
{
	struct v_tcp dt;
	struct v_cpu c;
	u_int64_t in, out;
	double cpu, all, wait;
	char what[512], tcp[256], states[256], waited[32];
	const char *word;
	size_t n;
	int i, sender;

	if (!v.on || v.pid != getpid() || ssh == NULL)
		return;
	/* The channels and the packet layer may be gone: the last poll's */
	account(monotime_double(), 0, 0, 0);
	v.on = 0;
	if (v.metrics != NULL) {
		metrics_line(monotime_double());
		fclose(v.metrics);
		v.metrics = NULL;
	}
	in = v.ib - v.ib0;
	out = v.ob - v.ob0;
	sender = out >= in;
	v.t[V_IDLE] = sender ? v.idle_out : v.idle_in;
	v.active = v.flagged + v.t[V_IDLE];
	if (v.first == 0 || (sender ? out : in) < V_MIN_BYTES ||
	    v.active < V_MIN_ACTIVE) {
		do_log2(v.server ? SYSLOG_LEVEL_INFO : SYSLOG_LEVEL_VERBOSE,
		    "Transfer verdict: none: sent %llu, received %llu bytes in "
		    "%.1f s of transfer, too little to tell",
		    (unsigned long long)out, (unsigned long long)in, v.active);
		return;
	}
	read_tcp(&v.tcp);
	read_cpu(&c);
	/* The main thread's: MT-AES-CTR's threads are not the limit */
	all = (c.used - v.cpu0.used) / v.active;
	cpu = c.run >= 0 && v.cpu0.run >= 0 ?
	    (c.run - v.cpu0.run) / v.active : all;
	wait = c.wait >= 0 && v.cpu0.wait >= 0 ?
	    (c.wait - v.cpu0.wait) / v.active : -1;

	memset(&dt, 0, sizeof(dt));
	tcp[0] = '\0';
	if (v.tcp0.ok && v.tcp.ok) {
		dt = v.tcp;
		dt.busy = v.tcp.busy - v.tcp0.busy;
		dt.rwnd = v.tcp.rwnd - v.tcp0.rwnd;
		dt.sndbuf = v.tcp.sndbuf - v.tcp0.sndbuf;
		dt.retrans = v.tcp.retrans - v.tcp0.retrans;
		snprintf(tcp, sizeof(tcp), "; tcp busy %.0f%%, rwnd-limited "
		    "%.0f%%, sndbuf-limited %.0f%%, rtt %.1f ms (min %.1f), "
		    "cwnd %u, retransmits %u", share(dt.busy / 1e6),
		    share(dt.rwnd / 1e6), share(dt.sndbuf / 1e6),
		    dt.rtt / 1000.0, dt.min_rtt / 1000.0, dt.cwnd, dt.retrans);
	}
	word = cause(sender, cpu, wait, &dt, what, sizeof(what));

	states[0] = '\0';
	for (i = 0, n = 0; i < V_NSTATE && n < sizeof(states); i++) {
		n += snprintf(states + n, sizeof(states) - n, "%s%s %.0f%%",
		    i == 0 ? "" : ", ", state_names[i], share(v.t[i]));
	}
	if (wait < 0)
		strlcpy(waited, "unknown", sizeof(waited));
	else
		snprintf(waited, sizeof(waited), "%.0f%%", 100 * wait);
	do_log2(v.server ? SYSLOG_LEVEL_INFO : SYSLOG_LEVEL_VERBOSE,
	    "Transfer verdict: %s: %s; %s %llu bytes in %.1f s (%.1f Mbit/s), "
	    "cpu %.0f%% (all threads %.0f%%), cpu wait %s; waiting on %s%s",
	    word, what, sender ? "sent" : "received",
	    (unsigned long long)(sender ? out : in), v.active,
	    (sender ? out : in) * 8 / v.active / 1e6, 100 * cpu, 100 * all,
	    waited, states, tcp);
}
