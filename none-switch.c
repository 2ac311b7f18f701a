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
 * the guards that decide whether a switch may happen.
 *
 * The switch is an ordinary key exchange after user authentication: the
 * client puts "none" first in its cipher proposal, still followed by its
 * usual ciphers, and the server adds "none" to its own proposal only if
 * NoneEnabled is set.  A server that does not allow it keeps encrypting.
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
#include "none-switch.h"

#define NONE_ALG	"none"

/* Server: may the none cipher still be offered (no pty granted yet)? */
static int none_offer_allowed = 1;
/* The last key exchange negotiated the none cipher */
static int none_negotiated;
/* Warnings and log lines are given once per connection */
static int none_cipher_told, none_mac_told;

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

/* Edit the proposal that every later KEXINIT of ours will send */
static int
none_edit_proposal(struct ssh *ssh, int cipher, int mac, int first)
{
	char **prop = NULL;
	int r;

	if (ssh->kex == NULL || ssh->kex->my == NULL)
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
 * set and the session has no tty, rekey now preferring the none cipher
 * (and the none MAC if NoneMacEnabled).
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
	if ((r = none_edit_proposal(ssh, 1, mac_enabled, 1)) != 0) {
		error_fr(r, "NoneSwitch: cannot offer the none cipher");
		return;
	}
	debug("NoneSwitch: rekeying to offer the none cipher%s",
	    mac_enabled ? " and MAC" : "");
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

	if (!enabled || !none_offer_allowed ||
	    !none_switch_permitted(ssh_packet_authenticated(ssh), 0))
		return;
	if ((r = none_edit_proposal(ssh, 1, mac_enabled, 0)) != 0) {
		error_fr(r, "NoneEnabled: cannot offer the none cipher");
		return;
	}
	debug("NoneEnabled: the none cipher%s may be used from the next "
	    "key exchange", mac_enabled ? " and MAC" : "");
}

/*
 * Server: a pty is refused while the none cipher is in use or about to
 * be.  Once a pty is granted the none cipher is never offered again.
 */
int
none_switch_pty_permitted(struct ssh *ssh)
{
	char **prop = NULL;
	int r, offered = 0;

	if (none_negotiated)
		return 0;
	if (!none_offer_allowed)
		return 1;
	if (ssh->kex != NULL && ssh->kex->my != NULL &&
	    kex_buf2prop(ssh->kex->my, NULL, &prop) == 0) {
		offered = match_list(NONE_ALG,
		    prop[PROPOSAL_ENC_ALGS_CTOS], NULL) != NULL ||
		    match_list(NONE_ALG,
		    prop[PROPOSAL_ENC_ALGS_STOC], NULL) != NULL;
		kex_prop_free(prop);
	}
	/* A key exchange that may pick none is under way */
	if (offered && ssh_packet_is_rekeying(ssh))
		return 0;
	none_offer_allowed = 0;
	if (offered && (r = none_edit_proposal(ssh, 0, 0, 0)) != 0)
		fatal_fr(r, "cannot withdraw the none cipher");
	return 1;
}

/*
 * Called by the key exchange once algorithms are chosen: the none cipher
 * and MAC are refused before user authentication, and a none MAC only
 * ever goes with the none cipher.  Warns (client) or logs (server) when
 * data is no longer encrypted or authenticated.
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
	none_negotiated = enc_none;
	if (!enc_none)
		return 0;
	if (kex->server) {
		if (!none_cipher_told++)
			logit("None cipher enabled for %s port %d: "
			    "data is not encrypted", ssh_remote_ipaddr(ssh),
			    ssh_remote_port(ssh));
		if (mac_none && !none_mac_told++)
			logit("None MAC enabled for %s port %d: "
			    "data is not authenticated",
			    ssh_remote_ipaddr(ssh), ssh_remote_port(ssh));
	} else {
		if (!none_cipher_told++)
			logit("WARNING: ENABLED NONE CIPHER: "
			    "data is not encrypted");
		if (mac_none && !none_mac_told++)
			logit("WARNING: ENABLED NONE MAC: "
			    "data is not authenticated");
	}
	return 0;
}
