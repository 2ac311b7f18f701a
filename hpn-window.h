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
 * Largest window we will ever advertise, and HPNBufferSize's upper bound.
 * The receiving channel's output buffer holds up to a window of data (a
 * consumer may stall once the window is granted), and its allocation up
 * to twice that before sshbuf packs it: a channel's output buffers may
 * grow to SSHBUF_SIZE_MAX_WINDOW (1 GiB) for it.
 */
#define HPN_WINDOW_MAX		(512*1024*1024)
/*
 * Default for HPNBufferSize, in KiB: a connection's window budget may
 * reach 256 MiB, what 10 Gbit/s needs at 200 ms.
 */
#define HPN_BUFFER_SIZE_DEFAULT	(256*1024)
/* HPNBufferSize and TcpRcvBuf accept up to this many KiB. */
#define HPN_CONFIG_MAX_KB	(HPN_WINDOW_MAX / 1024)
/*
 * A stock sender (a peer that is not known to be patched) reads up to its
 * window of data into its channel input buffer, whose limit is
 * CHAN_INPUT_MAX (16 MiB); once the buffer's contents near that limit,
 * sshbuf packs it (moves all of it) before nearly every read, and the
 * sender slows to a crawl.  Under half the limit, sshbuf's ordinary
 * amortised packing remains.  So the part of a stock peer's window that
 * can sit in that buffer is kept to HPN_WINDOW_STOCK_MAX: the budget for
 * a stock peer is at most this plus the credit in transit, measured as
 * receive rate times minimum round trip, or for a stock server as a window
 * its consumer took within about a round trip (hpn-window.c), or this
 * alone where TCP_INFO does not give them.  Only while the link fills may its windows double:
 * what its TCP does not yet carry then waits in its TCP send buffer,
 * which Linux grows to twice the congestion window; they shrink back once
 * the doubling ends, and do not double again.
 */
#define HPN_WINDOW_STOCK_MAX	(8*1024*1024 - 128*1024)
/*
 * How much a patched sender reads ahead into a channel's input buffer,
 * whatever the window, for the same reason.  The data in flight lives in
 * the socket's send buffer, not there.
 */
#define HPN_INPUT_READAHEAD	(4*1024*1024)
/*
 * A patched sender puts its whole window on the path, and what the link
 * does not carry within a round trip waits in the link's queue.  Its
 * budget is what the link carries in a round trip (per_rtt, hpn-window.c)
 * plus headroom.  While the link fills (the rate still grows from one
 * round trip to the next and the round trip stays near its minimum: no
 * queue forms), the headroom makes the need twice what the last round
 * trip carried, so that the windows double each round trip as TCP's slow
 * start does.  Then it is per_rtt: the receiver's window adjusts are
 * data that its own TCP sends, and BBR's PROBE_RTT holds them back for a
 * round trip or more (the acknowledgements of a receiver's adjusts wait
 * in the queue in front of the sender's data, so its minimum round trip
 * stays old and the probe comes every 10 s); with half of per_rtt a
 * sender at 1000 ms ran out of window for half a second each time.  The
 * sender, not the window, keeps the link's queue short
 * (hpn_window_hold()).  At least HPN_WINDOW_HEADROOM in either case: room
 * for the data waiting in the receiver's buffers.
 * Where TCP_INFO does not give the rate and round trip, the budget is
 * HPN_WINDOW_STOCK_MAX, as for a stock peer.
 */
#define HPN_WINDOW_HEADROOM	(8*1024*1024)
/*
 * Windows may double each round trip while the smoothed round trip stays
 * under the minimum plus 1/HPN_RAMP_QUEUE of it (beyond, a queue forms),
 * and never again once it has reached the minimum plus 1/HPN_RAMP_END.
 */
#define HPN_RAMP_QUEUE		8
#define HPN_RAMP_END		4
/*
 * A window that turns over (its consumer takes a window's worth) within
 * this many minimum round trips limits the transfer: it may double.
 */
#define HPN_TURN_RTTS		1.25
/*
 * A channel's output buffers that held more than this give their memory
 * back once they have been empty for as long as a channel stays busy.
 */
#define HPN_BUFFER_KEEP		(256*1024)
/*
 * glibc's malloc_trim(), which gives the free pages of the heap back, walks
 * the whole heap (milliseconds on a few hundred MiB): once per this long
 * per process at most, however many channels gave their buffers back.
 */
#define HPN_TRIM_MSEC		1000
/*
 * A client lends window for its guessed rekey (hpn-window.c) when the
 * rekey is due within a sixteenth of the windows, or this if more: more
 * than it reads in one pass of its loop (PACKET_MAX_SIZE).
 */
#define HPN_REKEY_LEAD		(1024*1024)
/*
 * A stock server's windows, once paced (hpn-window.c, pace_rate()), go
 * back in bursts of at most this much: at 2.89 times the path's rate a
 * BBR sender leaves two thirds of it in the path's queue.
 */
#define HPN_PACE_BURST		(2*1024*1024)
/*
 * Not on a path whose minimum round trip is under this, in us (a LAN,
 * loopback): there a burst of HPN_PACE_BURST is more than the path holds
 * anyway, and a copy bound by CPU would only wait longer after its
 * stalls.
 */
#define HPN_PACE_RTT_MIN	2000
/* How often the socket's receive buffer and TCP_INFO are read, at most. */
#define HPN_POLL_MSEC		100
/*
 * The receive rate for a budget is the lower of those over the last two
 * spans at least this long, and at least a minimum round trip: a sender
 * held by its window sends a window's worth in a burst once per round
 * trip, and a shorter span that ends early in a burst sees little of it.
 */
#define HPN_RATE_SPAN_MSEC	250
/*
 * A channel counts as busy for this long after its window last turned
 * over (its consumer took a window's worth of data), or for two round
 * trips if that is longer.
 */
#define HPN_BUSY_MSEC		1000
/*
 * Between patched peers, chacha20-poly1305 rekeys after this many bytes
 * each way, what AES's 16-byte blocks get under RFC 4344's rule (2^32
 * blocks), not the 1 GiB that its nominal 8-byte block gets: ChaCha20 is
 * a stream cipher with a 256-bit key, and each packet has its own nonce
 * (the sequence number, which never repeats under one key: packet.c
 * rekeys after 2^31 packets) and its own Poly1305 key (docs/windows.md).
 */
#define HPN_REKEY_CHACHA_BYTES	(1ULL << 36)

struct ssh;
struct Channel;
struct sshenc;
struct timespec;

void	hpn_window_init(struct ssh *, int, int, int);
void	hpn_window_free(struct ssh *);
void	hpn_window_update(struct ssh *, struct Channel *);
int	hpn_window_hold(struct ssh *, struct Channel *, size_t);
void	hpn_window_forget(struct ssh *, struct Channel *);
void	hpn_window_timeout(struct ssh *, struct Channel *, struct timespec *);
int	hpn_window_kex_guess(struct ssh *);
u_int64_t hpn_window_rekey_blocks(struct ssh *, const struct sshenc *,
	    u_int64_t);
int	hpn_sock_rcvbuf(int);
void	hpn_set_sock_rcvbuf(int, int);

#endif /* HPN_WINDOW_H */
