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
 * tunlink: an emulated long fat link between two network namespaces, for
 * kernels without sch_netem.
 *
 * usage: tunlink -a NETNS-A -A TUN-A -b NETNS-B -B TUN-B
 *            -d ONE-WAY-DELAY-MS -r RATE-MBIT [-q QUEUE-BYTES] [-p PIDFILE]
 *
 * The two TUN devices must already exist (ip tuntap add ... mode tun), one
 * in each namespace (NETNS names as in /var/run/netns).  tunlink attaches to
 * each from inside its namespace, then forwards every packet read from one
 * to the other.  Each direction behaves like a link of the given rate:
 * packets are serialised one after the other at that rate through a
 * drop-tail queue of QUEUE-BYTES (default: one round trip's worth), then
 * delivered DELAY later.  It prints packet and drop counts on SIGTERM.
 */

#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <linux/if.h>
#include <linux/if_tun.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXPKT	65536

struct pkt {
	struct pkt *next;
	uint64_t due;		/* delivery time, ns */
	uint64_t depart;	/* end of serialisation, ns */
	size_t len;
	unsigned char data[];
};

struct dir {
	int in, out;
	struct pkt *head, *tail;
	uint64_t last_depart;	/* when the link is free again */
	uint64_t queued;	/* bytes waiting for serialisation */
	uint64_t npkts, ndrops, nbytes;
};

static volatile sig_atomic_t quit;
static uint64_t delay_ns, queue_max;
static double ns_per_byte;

static void
onsig(int sig)
{
	quit = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int
tun_attach(const char *ns, const char *name)
{
	char path[256];
	struct ifreq ifr;
	int nsfd, fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	if ((nsfd = open(path, O_RDONLY)) == -1 ||
	    setns(nsfd, CLONE_NEWNET) == -1) {
		fprintf(stderr, "tunlink: netns %s: %s\n", ns,
		    strerror(errno));
		exit(1);
	}
	close(nsfd);
	if ((fd = open("/dev/net/tun", O_RDWR)) == -1) {
		fprintf(stderr, "tunlink: /dev/net/tun: %s\n",
		    strerror(errno));
		exit(1);
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		fprintf(stderr, "tunlink: TUNSETIFF %s in %s: %s\n", name, ns,
		    strerror(errno));
		exit(1);
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1) {
		fprintf(stderr, "tunlink: fcntl: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/*
 * Read every packet waiting on d->in and queue it on the link.  Each packet
 * is stamped after its own read: a time taken before the batch would date
 * a packet that arrived while this process waited for a CPU too early, and
 * deliver it before the link's delay (TCP once measured a 600 ms link at
 * 597.8 ms on a loaded 2-core host).  Stamping late only errs towards a
 * longer round trip.
 */
static void
link_input(struct dir *d)
{
	static unsigned char buf[MAXPKT];
	struct pkt *p;
	ssize_t n;
	uint64_t now, start;
	int i;

	for (i = 0; i < 256; i++) {
		if ((n = read(d->in, buf, sizeof(buf))) <= 0)
			return;
		now = now_ns();
		/* Bytes still to serialise ahead of this packet. */
		d->queued = d->last_depart > now ?
		    (uint64_t)((d->last_depart - now) / ns_per_byte) : 0;
		if (d->queued + n > queue_max) {
			d->ndrops++;
			continue;
		}
		if ((p = malloc(sizeof(*p) + n)) == NULL) {
			d->ndrops++;
			continue;
		}
		start = d->last_depart > now ? d->last_depart : now;
		p->depart = start + (uint64_t)(n * ns_per_byte);
		p->due = p->depart + delay_ns;
		d->last_depart = p->depart;
		p->len = n;
		p->next = NULL;
		memcpy(p->data, buf, n);
		if (d->tail != NULL)
			d->tail->next = p;
		else
			d->head = p;
		d->tail = p;
		d->npkts++;
		d->nbytes += n;
	}
}

/* Deliver the packets that are due; returns the next due time or 0. */
static uint64_t
link_output(struct dir *d, uint64_t now)
{
	struct pkt *p;

	while ((p = d->head) != NULL && p->due <= now) {
		/* A full TUN queue on the far side counts as a drop. */
		if (write(d->out, p->data, p->len) != (ssize_t)p->len)
			d->ndrops++;
		d->head = p->next;
		if (d->head == NULL)
			d->tail = NULL;
		free(p);
	}
	return d->head != NULL ? d->head->due : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: tunlink -a netns -A tun -b netns -B tun "
	    "-d delay-ms -r rate-mbit [-q queue-bytes] [-p pidfile]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *nsa = NULL, *nsb = NULL, *tuna = NULL, *tunb = NULL;
	const char *pidfile = NULL;
	double delay_ms = -1, rate_mbit = -1;
	long long qbytes = 0;
	struct dir d[2];
	struct pollfd pfd[2];
	struct timespec ts, *tsp;
	uint64_t now, next, n0, n1;
	FILE *f;
	int ch, fa, fb;

	while ((ch = getopt(argc, argv, "a:A:b:B:d:r:q:p:")) != -1) {
		switch (ch) {
		case 'a': nsa = optarg; break;
		case 'A': tuna = optarg; break;
		case 'b': nsb = optarg; break;
		case 'B': tunb = optarg; break;
		case 'd': delay_ms = atof(optarg); break;
		case 'r': rate_mbit = atof(optarg); break;
		case 'q': qbytes = atoll(optarg); break;
		case 'p': pidfile = optarg; break;
		default: usage();
		}
	}
	if (nsa == NULL || nsb == NULL || tuna == NULL || tunb == NULL ||
	    delay_ms < 0 || rate_mbit <= 0)
		usage();
	delay_ns = (uint64_t)(delay_ms * 1e6);
	ns_per_byte = 8.0 * 1000.0 / rate_mbit;
	/* Default queue: one round trip at the link rate, at least 64 KiB. */
	queue_max = qbytes > 0 ? (uint64_t)qbytes :
	    (uint64_t)(rate_mbit * 1e6 / 8 * 2 * delay_ms / 1000);
	if (queue_max < 65536)
		queue_max = 65536;

	fa = tun_attach(nsa, tuna);
	fb = tun_attach(nsb, tunb);
	memset(d, 0, sizeof(d));
	d[0].in = fa;
	d[0].out = fb;
	d[1].in = fb;
	d[1].out = fa;

	signal(SIGTERM, onsig);
	signal(SIGINT, onsig);
	signal(SIGHUP, onsig);
	if (pidfile != NULL && (f = fopen(pidfile, "w")) != NULL) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
	fprintf(stderr, "tunlink: %s/%s <-> %s/%s, %.1f ms one way, "
	    "%.1f Mbit/s, queue %llu bytes\n", nsa, tuna, nsb, tunb,
	    delay_ms, rate_mbit, (unsigned long long)queue_max);

	while (!quit) {
		now = now_ns();
		n0 = link_output(&d[0], now);
		n1 = link_output(&d[1], now);
		next = n0 == 0 ? n1 : (n1 == 0 || n0 < n1 ? n0 : n1);
		tsp = NULL;
		if (next != 0) {
			next = next > now ? next - now : 0;
			ts.tv_sec = next / 1000000000ULL;
			ts.tv_nsec = next % 1000000000ULL;
			tsp = &ts;
		}
		pfd[0].fd = fa;
		pfd[0].events = POLLIN;
		pfd[1].fd = fb;
		pfd[1].events = POLLIN;
		if (ppoll(pfd, 2, tsp, NULL) == -1) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "tunlink: poll: %s\n", strerror(errno));
			return 1;
		}
		if (pfd[0].revents & POLLIN)
			link_input(&d[0]);
		if (pfd[1].revents & POLLIN)
			link_input(&d[1]);
		if ((pfd[0].revents | pfd[1].revents) & (POLLERR|POLLHUP|POLLNVAL)) {
			fprintf(stderr, "tunlink: device gone\n");
			break;
		}
	}
	fprintf(stderr, "tunlink: a->b %llu packets %llu bytes %llu drops; "
	    "b->a %llu packets %llu bytes %llu drops\n",
	    (unsigned long long)d[0].npkts, (unsigned long long)d[0].nbytes,
	    (unsigned long long)d[0].ndrops, (unsigned long long)d[1].npkts,
	    (unsigned long long)d[1].nbytes, (unsigned long long)d[1].ndrops);
	return 0;
}
