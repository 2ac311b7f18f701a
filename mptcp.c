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
 * Multipath TCP (RFC 8684, Linux 5.6 and later): with UseMPTCP, ssh's
 * connection and sshd's listening sockets are IPPROTO_MPTCP sockets.  The
 * kernel's path manager then adds subflows over the other paths (its
 * endpoints, "ip mptcp endpoint"), and a peer without MPTCP gets plain
 * TCP on the same socket: nothing changes on the wire above TCP.  Where
 * the system has no MPTCP (another system, a kernel without it, or
 * net.mptcp.enabled=0), the socket is a TCP one, with a notice.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#ifdef __linux__
# ifdef __has_include
#  if __has_include(<linux/mptcp.h>)
#   include <linux/mptcp.h>	/* MPTCP_INFO, struct mptcp_info */
#  endif
# endif
# ifndef IPPROTO_MPTCP
#  define IPPROTO_MPTCP	262
# endif
# ifndef SOL_MPTCP
#  define SOL_MPTCP	284
# endif
#endif

#include "log.h"
#include "mptcp.h"

/*
 * A socket(2) for family, type and protocol: with use (UseMPTCP) and a TCP
 * socket of AF_INET or AF_INET6 asked for, a Multipath TCP one where the
 * system allows it, else the TCP one with a notice (once per process).
 */
int
mptcp_socket(int family, int type, int protocol, int use)
{
	static int noticed;
#ifdef IPPROTO_MPTCP
	int sock;
#endif

	if (!use || (family != AF_INET && family != AF_INET6) ||
	    type != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return socket(family, type, protocol);
#ifdef IPPROTO_MPTCP
	if ((sock = socket(family, type, IPPROTO_MPTCP)) != -1) {
		debug("Multipath TCP socket (UseMPTCP)");
		return sock;
	}
	if (!noticed)
		logit("UseMPTCP: no Multipath TCP here (%s), using TCP",
		    strerror(errno));
#else
	if (!noticed)
		logit("UseMPTCP: no Multipath TCP on this system, using TCP");
#endif
	noticed = 1;
	return socket(family, type, protocol);
}

/*
 * Says at debug1 whether the connected socket sock carries Multipath TCP
 * or fell back to TCP (a peer without MPTCP, or a middlebox that strips
 * its options).  Nothing for a TCP socket.
 */
void
mptcp_report(int sock)
{
#if defined(IPPROTO_MPTCP) && defined(SO_PROTOCOL) && defined(MPTCP_INFO)
	struct mptcp_info info;
	socklen_t len = sizeof(info);
	int proto;
	socklen_t plen = sizeof(proto);

	if (getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) == -1 ||
	    proto != IPPROTO_MPTCP)
		return;
	memset(&info, 0, sizeof(info));
	/* Linux answers MPTCP_INFO only while the connection is MPTCP. */
	if (getsockopt(sock, SOL_MPTCP, MPTCP_INFO, &info, &len) == -1
#ifdef MPTCP_INFO_FLAG_FALLBACK
	    || (info.mptcpi_flags & MPTCP_INFO_FLAG_FALLBACK) != 0
#endif
	    ) {
		debug("Multipath TCP: the peer did not take it, plain TCP");
		return;
	}
	debug("Multipath TCP: in use");
#endif
}
