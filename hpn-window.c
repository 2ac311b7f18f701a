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
 * HPNBufferSize (nor past HPN_WINDOW_STOCK_MAX for a stock peer).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Returns the window a bulk channel whose window is now cur should have:
 * twice the connection's TCP receive buffer (polled at most every
 * HPN_POLL_MSEC), or the maximum outright when polling is off, never less
 * than cur and never more than the maximum.
 */
u_int
hpn_window_target(struct ssh *ssh, u_int cur)
{
	u_int max, want;
	double now;
	int sock;

	if (hpn_disabled)
		return cur;
	max = hpn_window_max;
	if (!peer_is_patched(ssh) && max > HPN_WINDOW_STOCK_MAX)
		max = HPN_WINDOW_STOCK_MAX;
	if (cur >= max)
		return cur;
	if (!hpn_poll)
		return max;
	now = monotime_double();
	if (hpn_rcvbuf == -1 || now - hpn_last_poll >= HPN_POLL_MSEC / 1000.0) {
		sock = ssh_packet_get_connection_in(ssh);
		if (!ssh_packet_connection_is_on_socket(ssh) ||
		    (hpn_rcvbuf = hpn_sock_rcvbuf(sock)) <= 0)
			hpn_rcvbuf = 0;
		hpn_last_poll = now;
	}
	want = (u_int)hpn_rcvbuf > max / 2 ? max : (u_int)hpn_rcvbuf * 2;
	return want > cur ? want : cur;
}
