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
 * None cipher switching: bulk data may travel unencrypted after an
 * encrypted authentication, only when both sides opt in.  This file holds
 * the guards that decide whether a switch may happen, and what a
 * connection that switched may still do.
 *
 * The switch is an ordinary key exchange after user authentication: the
 * client puts "none" first in its cipher proposal, still followed by its
 * usual ciphers, and the server adds "none" to its own proposal only if
 * NoneEnabled is set.  A server that does not allow it keeps encrypting.
 *
 * The none MAC (NoneMacEnabled on both sides) comes in a second key
 * exchange, which the client starts only once its session has been set
 * up (the request for the command, shell or subsystem sent).  From the
 * key exchange that chose the none MAC on, nothing authenticates what
 * arrives, so both sides freeze the connection: sshd opens no channel,
 * starts no session and honours no global request, and ssh accepts no
 * channel (agent, X11, remote forwarding) or global request from the
 * server.  Only the sessions set up before the switch carry on.
 *
 * The state is per connection, in struct ssh's none_flags (NONE_*).
 */

#include "includes.h"

#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "log.h"
#include "ssherr.h"
#include "sshbuf.h"
#include "match.h"
#include "cipher.h"
#include "digest.h"
#include "mac.h"
#include "kex.h"
#include "packet.h"
#include "compat.h"
#include "channels.h"
#include "none-switch.h"

#define NONE_ALG	"none"

#define WARN_CIPHER	"WARNING: ENABLED NONE CIPHER: data is not encrypted"
#define WARN_MAC	"WARNING: ENABLED NONE MAC: data is not authenticated"

/*
 * The none cipher is never allowed before user authentication, nor on a
 * session that has a tty.
 */
int
none_switch_permitted(int authenticated, int have_tty)
{
	return authenticated && !have_tty;
}

/*
 * Rewrite one algorithm list of our proposal: drop any "none", then put
 * it back first (client), last (server) or not at all.
 */
static int
none_edit_list(char **listp, int add, int first)
{
	char *cp, *ret;

	if ((cp = match_filter_denylist(*listp, NONE_ALG)) == NULL)
		return SSH_ERR_ALLOC_FAIL;
	if (!add)
		ret = cp;
	else {
		if (*cp == '\0')
			ret = xstrdup(NONE_ALG);
		else if (first)
			xasprintf(&ret, "%s,%s", NONE_ALG, cp);
		else
			xasprintf(&ret, "%s,%s", cp, NONE_ALG);
		free(cp);
	}
	free(*listp);
	*listp = ret;
	return 0;
}

/*
 * Edit the proposal that every later KEXINIT of ours will send.  Only
 * between key exchanges: the KEXINIT of one under way must stay as sent,
 * since the exchange hash covers it.
 */
static int
none_edit_proposal(struct ssh *ssh, int cipher, int mac, int first)
{
	char **prop = NULL;
	int r;

	if (ssh->kex == NULL || ssh->kex->my == NULL)
		return SSH_ERR_INTERNAL_ERROR;
	if ((ssh->kex->flags & KEX_INIT_SENT) != 0)
		return SSH_ERR_INTERNAL_ERROR;
	if ((r = kex_buf2prop(ssh->kex->my, NULL, &prop)) != 0)
		return r;
	if ((r = none_edit_list(&prop[PROPOSAL_ENC_ALGS_CTOS],
	    cipher, first)) != 0 ||
	    (r = none_edit_list(&prop[PROPOSAL_ENC_ALGS_STOC],
	    cipher, first)) != 0 ||
	    (r = none_edit_list(&prop[PROPOSAL_MAC_ALGS_CTOS],
	    cipher && mac, first)) != 0 ||
	    (r = none_edit_list(&prop[PROPOSAL_MAC_ALGS_STOC],
	    cipher && mac, first)) != 0)
		goto out;
	r = kex_prop2buf(ssh->kex->my, prop);
 out:
	kex_prop_free(prop);
	return r;
}

/*
 * Client, after user authentication: if NoneEnabled and NoneSwitch are
 * set and the session has no tty, rekey now preferring the none cipher.
 * With NoneMacEnabled, the none MAC waits for none_switch_client_session.
 */
void
none_switch_client(struct ssh *ssh, int enabled, int mac_enabled,
    int have_tty)
{
	int r;

	if (!enabled)
		return;
	if (!none_switch_permitted(ssh_packet_authenticated(ssh), have_tty)) {
		if (have_tty)
			logit("NoneSwitch: the session has a tty, "
			    "data stays encrypted");
		else
			error_f("not authenticated");
		return;
	}
	if (ssh->compat & SSH_BUG_NOREKEY) {
		logit("NoneSwitch: the server cannot rekey, "
		    "data stays encrypted");
		return;
	}
	if ((r = none_edit_proposal(ssh, 1, 0, 1)) != 0) {
		error_fr(r, "NoneSwitch: cannot offer the none cipher");
		return;
	}
	if (mac_enabled)
		ssh->none_flags |= NONE_MAC_WANTED;
	debug("NoneSwitch: rekeying to offer the none cipher");
	if ((r = kex_start_rekex(ssh)) != 0)
		fatal_fr(r, "kex_start_rekex");
}

/*
 * Client, once the request that starts its session (command, shell or
 * subsystem) is sent: with NoneMacEnabled and the none cipher in use,
 * rekey again offering the none MAC.  sshd has seen the session's
 * requests by then, and takes no new ones once the MAC is gone.
 */
void
none_switch_client_session(struct ssh *ssh)
{
	int r;

	if ((ssh->none_flags & NONE_MAC_WANTED) == 0)
		return;
	ssh->none_flags &= ~NONE_MAC_WANTED;
	if ((ssh->none_flags & NONE_CIPHER) == 0) {
		debug("NoneSwitch: the server kept a cipher, "
		    "so the MAC stays too");
		return;
	}
	if (ssh->kex == NULL || !ssh->kex->done ||
	    (ssh->kex->flags & KEX_INIT_SENT) != 0) {
		logit("NoneSwitch: a key exchange is under way, "
		    "the MAC stays");
		return;
	}
	if ((r = none_edit_proposal(ssh, 1, 1, 1)) != 0) {
		error_fr(r, "NoneSwitch: cannot offer the none MAC");
		return;
	}
	debug("NoneSwitch: session started, rekeying to offer the none MAC");
	if ((r = kex_start_rekex(ssh)) != 0)
		fatal_fr(r, "kex_start_rekex");
}

/*
 * Server, after user authentication: with NoneEnabled, accept the none
 * cipher (and the none MAC if NoneMacEnabled) in later key exchanges.
 */
void
none_switch_server(struct ssh *ssh, int enabled, int mac_enabled)
{
	int r;

	if (!enabled || (ssh->none_flags & NONE_PTY) != 0 ||
	    !none_switch_permitted(ssh_packet_authenticated(ssh), 0))
		return;
	if ((r = none_edit_proposal(ssh, 1, mac_enabled, 0)) != 0) {
		error_fr(r, "NoneEnabled: cannot offer the none cipher");
		return;
	}
	ssh->none_flags |= NONE_OFFERED;
	debug("NoneEnabled: the none cipher%s may be used from the next "
	    "key exchange", mac_enabled ? " and MAC" : "");
}

/*
 * Server: may a session get a pty?  Not on a connection whose last key
 * exchange chose the none cipher (in use, or from that exchange's
 * NEWKEYS on).  Otherwise yes, even while a key exchange is under way
 * whose algorithms are not chosen yet: from now on the connection never
 * agrees to none (none_switch_kex_check refuses it, that exchange
 * included) and our next KEXINIT no longer offers it (none_switch_kexinit).
 */
int
none_switch_pty_permitted(struct ssh *ssh)
{
	if ((ssh->none_flags & NONE_CIPHER) != 0) {
		logit("Refusing pty request from %s port %d: the connection "
		    "uses the none cipher", ssh_remote_ipaddr(ssh),
		    ssh_remote_port(ssh));
		return 0;
	}
	ssh->none_flags |= NONE_PTY;
	return 1;
}

/*
 * Called before each KEXINIT we send: once a pty was granted, the none
 * cipher and MAC are withdrawn from our proposal.  A proposal that
 * cannot be edited fails the key exchange rather than offer none.
 */
int
none_switch_kexinit(struct ssh *ssh)
{
	int r;

	if ((ssh->none_flags & (NONE_PTY|NONE_OFFERED)) !=
	    (NONE_PTY|NONE_OFFERED))
		return 0;
	if ((r = none_edit_proposal(ssh, 0, 0, 0)) != 0) {
		error_fr(r, "cannot withdraw the none cipher");
		return r;
	}
	ssh->none_flags &= ~NONE_OFFERED;
	debug("NoneEnabled: a pty was granted, the none cipher is no "
	    "longer offered");
	return 0;
}

/* Warn (client) or log (server), once per connection and algorithm */
static void
none_tell(struct ssh *ssh, int flag, const char *what, const char *warning)
{
	if ((ssh->none_flags & flag) != 0)
		return;
	ssh->none_flags |= flag;
	if (ssh->kex->server)
		logit("None %s enabled for %s port %d: data is not %s", what,
		    ssh_remote_ipaddr(ssh), ssh_remote_port(ssh),
		    strcmp(what, "MAC") == 0 ? "authenticated" : "encrypted");
	else
		logit("%s", warning);
}

/*
 * Called by the key exchange once algorithms are chosen: the none cipher
 * and MAC are refused before user authentication, a none MAC only ever
 * goes with the none cipher, and sshd refuses the none cipher on a
 * connection that was granted a pty.  Records the choice in none_flags;
 * a none MAC freezes the connection for good.
 */
int
none_switch_kex_check(struct ssh *ssh)
{
	struct kex *kex = ssh->kex;
	struct newkeys *nk;
	int mode, enc_none = 0, mac_none = 0;

	for (mode = 0; mode < MODE_MAX; mode++) {
		if ((nk = kex->newkeys[mode]) == NULL)
			continue;
		if (nk->enc.name != NULL &&
		    strcmp(nk->enc.name, NONE_ALG) == 0)
			enc_none = 1;
		if (cipher_authlen(nk->enc.cipher) == 0 &&
		    nk->mac.name != NULL &&
		    strcmp(nk->mac.name, NONE_ALG) == 0) {
			if (strcmp(nk->enc.name, NONE_ALG) != 0) {
				error("kex: refusing the none MAC with "
				    "cipher %s", nk->enc.name);
				return SSH_ERR_NO_MAC_ALG_MATCH;
			}
			mac_none = 1;
		}
	}
	if ((enc_none || mac_none) && !ssh_packet_authenticated(ssh)) {
		error("kex: refusing the none %s before user authentication",
		    enc_none ? "cipher" : "MAC");
		return enc_none ? SSH_ERR_NO_CIPHER_ALG_MATCH :
		    SSH_ERR_NO_MAC_ALG_MATCH;
	}
	if (enc_none && kex->server && (ssh->none_flags & NONE_PTY) != 0) {
		error("kex: refusing the none cipher from %s port %d: "
		    "a pty was granted on this connection",
		    ssh_remote_ipaddr(ssh), ssh_remote_port(ssh));
		return SSH_ERR_NO_CIPHER_ALG_MATCH;
	}
	if (enc_none)
		ssh->none_flags |= NONE_CIPHER;
	else
		ssh->none_flags &= ~NONE_CIPHER;
	if (mac_none)
		ssh->none_flags |= NONE_MAC;
	if (enc_none)
		none_tell(ssh, NONE_CIPHER_TOLD, "cipher", WARN_CIPHER);
	if (mac_none)
		none_tell(ssh, NONE_MAC_TOLD, "MAC", WARN_MAC);
	return 0;
}

/*
 * Once a key exchange chose the none MAC, anyone on the path can write
 * into the connection: a request of the peer that would open a channel,
 * start a session or act on a global request is refused.  what and name
 * describe it for the log ("channel open", "session"); global requests
 * (keepalives among them) are logged at debug level only.  Returns 1 if
 * the request must be refused.
 */
int
none_switch_refuse_peer(struct ssh *ssh, const char *what, const char *name)
{
	if ((ssh->none_flags & NONE_MAC) == 0)
		return 0;
	do_log2(strcmp(what, "global request") == 0 ?
	    SYSLOG_LEVEL_DEBUG1 : SYSLOG_LEVEL_INFO,
	    "Refusing %s \"%.100s\" from %s port %d: the connection uses "
	    "the none MAC", what, name, ssh_remote_ipaddr(ssh),
	    ssh_remote_port(ssh));
	return 1;
}

/* Append one line to what a mux client's stderr will get */
static void
none_mux_line(Channel *c, const char *line, int raw)
{
	int r;

	if (c->extended == NULL || c->extended_usage != CHAN_EXTENDED_WRITE)
		return;
	if ((r = sshbuf_putf(c->extended, "%s%s", line,
	    raw ? "\r\n" : "\n")) != 0)
		fatal_fr(r, "sshbuf_putf");
}

/*
 * ssh ControlMaster, before it sets up a mux client's session on channel
 * c: on a connection that uses the none cipher, the client's own stderr
 * gets the warnings the master printed when it switched, and a session
 * that wanted a tty does not get one.  Returns 1 if the master must not
 * request the tty.
 */
int
none_switch_mux_session(struct ssh *ssh, Channel *c, int want_tty)
{
	if ((ssh->none_flags & NONE_CIPHER) == 0)
		return 0;
	none_mux_line(c, WARN_CIPHER, want_tty);
	if ((ssh->none_flags & NONE_MAC) != 0)
		none_mux_line(c, WARN_MAC, want_tty);
	if (!want_tty)
		return 0;
	none_mux_line(c, "NoneSwitch: the connection uses the none cipher, "
	    "no tty for this session", want_tty);
	debug_f("channel %d: no tty over the none cipher", c->self);
	return 1;
}
