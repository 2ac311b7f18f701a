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
 * lfnperf: raw TCP goodput and round-trip time over the emulated link.
 *
 *   lfnperf -s ADDR PORT [FILE]     receive forever, discard, ack each
 *                                   connection's end with one byte; with
 *                                   FILE, write one connection's data there
 *                                   and exit
 *   lfnperf -c ADDR PORT BYTES|@FILE
 *                                   send BYTES (or FILE), print
 *                                   "BYTES SECONDS MB/s"
 *   lfnperf -r ADDR PORT COUNT      print the smallest TCP connect time in
 *                                   ms over COUNT tries (one round trip)
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
addr(struct sockaddr_in *sin, const char *a, const char *p)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(atoi(p));
	if (inet_pton(AF_INET, a, &sin->sin_addr) != 1) {
		fprintf(stderr, "lfnperf: bad address %s\n", a);
		exit(2);
	}
}

static int
server(const char *a, const char *p, const char *file)
{
	struct sockaddr_in sin;
	static char buf[1 << 18];
	int s, c, fd = -1, on = 1;
	ssize_t n;

	if (file != NULL &&
	    (fd = open(file, O_WRONLY|O_CREAT|O_TRUNC, 0644)) == -1) {
		perror(file);
		return 1;
	}

	addr(&sin, a, p);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, 16) == -1) {
		perror("lfnperf: listen");
		return 1;
	}
	for (;;) {
		if ((c = accept(s, NULL, NULL)) == -1) {
			if (errno == EINTR)
				continue;
			perror("lfnperf: accept");
			return 1;
		}
		while ((n = read(c, buf, sizeof(buf))) > 0 ||
		    (n == -1 && errno == EINTR)) {
			if (fd != -1 && n > 0 && write(fd, buf, n) != n) {
				perror(file);
				return 1;
			}
		}
		(void)write(c, "k", 1);
		close(c);
		if (fd != -1)
			return close(fd) == 0 ? 0 : 1;
	}
}

static int
dial(const char *a, const char *p)
{
	struct sockaddr_in sin;
	int s;

	addr(&sin, a, p);
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		perror("lfnperf: connect");
		exit(1);
	}
	return s;
}

static int
client(const char *a, const char *p, const char *what)
{
	static char buf[1 << 18];
	long long left, bytes = 0;
	double t0, t;
	ssize_t n, len, off;
	char k;
	int s, fd = -1;

	if (*what == '@') {
		if ((fd = open(what + 1, O_RDONLY)) == -1) {
			perror(what + 1);
			return 1;
		}
		left = 1;
	} else
		left = bytes = atoll(what);
	memset(buf, 0x5a, sizeof(buf));
	t0 = now();
	s = dial(a, p);
	while (left > 0) {
		len = left < (long long)sizeof(buf) ? left : (long long)sizeof(buf);
		if (fd != -1) {
			if ((len = read(fd, buf, sizeof(buf))) <= 0)
				break;
		}
		for (off = 0; off < len; off += n) {
			n = write(s, buf + off, len - off);
			if (n == -1 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0) {
				perror("lfnperf: write");
				return 1;
			}
		}
		if (fd != -1)
			bytes += len;
		else
			left -= len;
	}
	shutdown(s, SHUT_WR);
	if (read(s, &k, 1) != 1) {
		fprintf(stderr, "lfnperf: no end ack\n");
		return 1;
	}
	t = now() - t0;
	printf("%lld %.3f %.2f\n", bytes, t, bytes / t / 1e6);
	return 0;
}

static int
rtt(const char *a, const char *p, int count)
{
	double best = 1e9, t;
	int i, s;

	for (i = 0; i < count; i++) {
		t = now();
		s = dial(a, p);
		t = now() - t;
		shutdown(s, SHUT_WR);
		close(s);
		if (t < best)
			best = t;
	}
	printf("%.1f\n", best * 1000);
	return 0;
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "-s") == 0)
		return server(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 5 && strcmp(argv[1], "-c") == 0)
		return client(argv[2], argv[3], argv[4]);
	if (argc == 5 && strcmp(argv[1], "-r") == 0)
		return rtt(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: lfnperf -s addr port [file] | -c addr port bytes|@file | "
	    "-r addr port count\n");
	return 2;
}
