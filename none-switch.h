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


#ifndef NONE_SWITCH_H
#define NONE_SWITCH_H

struct ssh;
struct Channel;

/* struct ssh's none_flags: the connection's none cipher state */
#define NONE_CIPHER		0x0001	/* the last key exchange chose it */
#define NONE_MAC		0x0002	/* a key exchange chose the none MAC */
#define NONE_OFFERED		0x0004	/* server: our proposal offers none */
#define NONE_PTY		0x0008	/* server: a pty was granted */
#define NONE_MAC_WANTED		0x0010	/* client: none MAC once session runs */
#define NONE_CIPHER_TOLD	0x0020	/* warned or logged once */
#define NONE_MAC_TOLD		0x0040

int	none_switch_permitted(int, int);
void	none_switch_client(struct ssh *, int, int, int);
void	none_switch_client_session(struct ssh *);
void	none_switch_server(struct ssh *, int, int);
int	none_switch_pty_permitted(struct ssh *);
int	none_switch_kexinit(struct ssh *);
int	none_switch_kex_check(struct ssh *);
int	none_switch_refuse_peer(struct ssh *, const char *, const char *);
int	none_switch_mux_session(struct ssh *, struct Channel *, int);

#endif /* NONE_SWITCH_H */
