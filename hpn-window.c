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
 * of the connection, which the kernel grows as it autotunes.  This file
 * holds the socket side of that: reading the buffer size.
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>

int	hpn_sock_rcvbuf(int);

/*
 * Returns the current receive buffer size of socket sock in bytes, or -1
 * if it cannot be read (not a socket, for example).
 */
int
hpn_sock_rcvbuf(int sock)
{
	int val;
	socklen_t len = sizeof(val);

	if (getsockopt(sock, SOL_SOCKET, SO_RCVBUF, &val, &len) == -1)
		return -1;
	return val;
}
