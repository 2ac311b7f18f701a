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

#ifndef HPN_WINDOW_H
#define HPN_WINDOW_H

/*
 * Largest window we will ever advertise.  The receiving channel's output
 * buffer holds up to a window of data, and its allocation up to twice
 * that before sshbuf packs it; it must stay well under SSHBUF_SIZE_MAX
 * (128 MiB), or sshbuf packs the whole buffer before every append.
 */
#define HPN_WINDOW_MAX		(32*1024*1024)
/* Default for HPNBufferSize, in KiB. */
#define HPN_BUFFER_SIZE_DEFAULT	(HPN_WINDOW_MAX / 1024)
/*
 * HPNBufferSize and TcpRcvBuf accept up to this many KiB, as old HPN-SSH
 * configurations may say; HPNBufferSize acts as HPN_WINDOW_MAX above it.
 */
#define HPN_CONFIG_MAX_KB	65536
/*
 * A stock sender (a peer that is not known to be patched) reads up to its
 * window of data into its channel input buffer, whose limit is
 * CHAN_INPUT_MAX (16 MiB); once the buffer's contents near that limit,
 * sshbuf packs it (moves all of it) before nearly every read, and the
 * sender slows to a crawl.  Under half the limit, sshbuf's ordinary
 * amortised packing remains.  So the part of a stock peer's window that
 * can sit in that buffer is kept to HPN_WINDOW_STOCK_MAX: a stock peer's
 * window is at most this plus the credit in transit, measured as receive
 * rate times minimum round trip (hpn-window.c, hpn_stock_cap()), or this
 * alone where TCP_INFO does not give them.
 */
#define HPN_WINDOW_STOCK_MAX	(8*1024*1024 - 128*1024)
/*
 * How much a patched sender reads ahead into a channel's input buffer,
 * whatever the window, for the same reason.  The data in flight lives in
 * the socket's send buffer, not there.
 */
#define HPN_INPUT_READAHEAD	(4*1024*1024)
/*
 * A patched sender puts its whole window on the path.  Its window is at
 * most this plus what the link carries in a round trip, measured as for a
 * stock peer (hpn-window.c, hpn_patched_cap()): room for the data waiting
 * in the receiver's buffers and for the window to grow as the link proves
 * its rate, without overfilling the link's queue.  Where TCP_INFO does not
 * give the rate and round trip, the window may reach HPNBufferSize.
 */
#define HPN_WINDOW_HEADROOM	(8*1024*1024)
/* How often the socket's receive buffer and TCP_INFO are read, at most. */
#define HPN_POLL_MSEC		100
/*
 * The receive rate for a peer's cap is the lower of those over the
 * last two spans at least this long.
 */
#define HPN_RATE_SPAN_MSEC	250

struct ssh;

void	hpn_window_init(int, int, int);
u_int	hpn_window_target(struct ssh *, u_int);
int	hpn_sock_rcvbuf(int);
void	hpn_set_sock_rcvbuf(int, int);

#endif /* HPN_WINDOW_H */
