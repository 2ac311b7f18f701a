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
 * sshd's transfer statistics: one line at INFO per authenticated
 * connection when it ends, normally or through cleanup_exit():
 *
 *   Transfer stats: addr=A port=P kex=K cipher_in=C cipher_out=C
 *   mac_in=M mac_out=M comp_in=Z comp_out=Z bytes_in=N bytes_out=N
 *   duration=SECONDS rate_in_Bps=R rate_out_Bps=R user=U client="BANNER"
 *
 * sshd-session.c (sshd.c before 9.8) notes the connection's start
 * (transfer_log_init), hands the connection to this file once the process
 * that carries it after authentication takes over (transfer_log_start)
 * and asks for the line when it ends (transfer_log_end).  The values a
 * peer chooses come last and are bounded, so that the line always fits a
 * log line (1024 bytes) with its counters.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "kex.h"
#include "packet.h"
#include "channels.h"
#include "transfer-log.h"

/* Longest values, in characters, of the fields a peer chooses */
#define STATS_NAME_MAX		64
#define STATS_CLIENT_MAX	256

/* When the connection started, and what its statistics line says of it */
static double conn_start;
static pid_t stats_pid = -1;		/* the process that logs the line */
static char *stats_addr, *stats_client;
static int stats_port;

/*
 * Copy a value for the transfer statistics line, cut to maxlen and with
 * anything that could end the (quoted, if spaces_ok) value early or
 * confuse a parser replaced.
 */
static char *
stats_value(const char *s, size_t maxlen, int spaces_ok)
{
	char *ret, *cp;

	ret = xstrdup(s == NULL ? "" : s);
	if (strlen(ret) > maxlen)
		ret[maxlen] = '\0';
	for (cp = ret; *cp != '\0'; cp++) {
		if (*cp == '"' || *cp == '\\' || (*cp == ' ' && !spaces_ok) ||
		    (u_char)*cp < 0x20 || (u_char)*cp > 0x7e)
			*cp = '?';
	}
	return ret;
}

static const char *
stats_alg(const char *name)
{
	return *name == '\0' ? "none" : name;
}

/* The connection starts now (the duration counts from here). */
void
transfer_log_init(void)
{
	conn_start = monotime_double();
}

/*
 * From here on this process carries the connection and logs its
 * statistics.  Note what the packet layer may no longer know when the
 * connection ends: ssh_packet_disconnect() closes it before cleanup_exit().
 */
void
transfer_log_start(struct ssh *ssh)
{
	char *banner = NULL;

	stats_pid = getpid();
	stats_addr = xstrdup(ssh_remote_ipaddr(ssh));
	stats_port = ssh_remote_port(ssh);
	if (ssh->kex != NULL && ssh->kex->client_version != NULL)
		banner = sshbuf_dup_string(ssh->kex->client_version);
	stats_client = stats_value(banner, STATS_CLIENT_MAX, 1);
	free(banner);
}

/*
 * Log, once per connection, the algorithms in use, the channel payload
 * moved in each direction and the throughput, for user (authenticated, or
 * NULL).  Only in the process that carries the connection after
 * authentication (transfer_log_start()), on normal and abnormal
 * (cleanup_exit) termination alike.
 */
void
transfer_log_end(struct ssh *ssh, const char *user)
{
	static int logged;
	const char *mac[MODE_MAX];
	char *kex, *u;
	u_int64_t ibytes, obytes;
	double elapsed;
	int mode;

	if (logged || ssh == NULL || stats_pid != getpid())
		return;
	logged = 1;

	for (mode = 0; mode < MODE_MAX; mode++) {
		mac[mode] = stats_alg(ssh->mac_name[mode]);
		if (*ssh->cipher_name[mode] != '\0' &&
		    *ssh->mac_name[mode] == '\0')
			mac[mode] = "<implicit>";
	}
	channel_get_payload_bytes(ssh, &ibytes, &obytes);
	if ((elapsed = monotime_double() - conn_start) <= 0)
		elapsed = 0;
	kex = stats_value(stats_alg(ssh->kex_name), STATS_NAME_MAX, 0);
	u = stats_value(user, STATS_NAME_MAX, 0);

	logit("Transfer stats: addr=%s port=%d kex=%s "
	    "cipher_in=%s cipher_out=%s mac_in=%s mac_out=%s "
	    "comp_in=%s comp_out=%s bytes_in=%llu bytes_out=%llu "
	    "duration=%.3f rate_in_Bps=%.0f rate_out_Bps=%.0f "
	    "user=%s client=\"%s\"",
	    stats_addr, stats_port, kex,
	    stats_alg(ssh->cipher_name[MODE_IN]),
	    stats_alg(ssh->cipher_name[MODE_OUT]), mac[MODE_IN], mac[MODE_OUT],
	    stats_alg(ssh->comp_name[MODE_IN]),
	    stats_alg(ssh->comp_name[MODE_OUT]),
	    (unsigned long long)ibytes, (unsigned long long)obytes, elapsed,
	    elapsed > 0 ? ibytes / elapsed : 0,
	    elapsed > 0 ? obytes / elapsed : 0, u, stats_client);
	free(kex);
	free(u);
}
