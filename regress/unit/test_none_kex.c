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
 * test_none_kex: hand-written KEXINIT proposals that ask for the none
 * cipher or MAC, between two in-memory endpoints (OpenSSH's ssh_api).
 * Before user authentication the key exchange must refuse them, whatever
 * both sides propose; after it, they are negotiated.  Then sshd's pty
 * guard (a pty is refused only where the exchange chose none, and a
 * connection that was granted one never agrees to none) and the freeze
 * that follows the none MAC.  Prints "ok - NAME" or "not ok - NAME" per
 * case and a summary line.
 */

#include "includes.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssherr.h"
#include "ssh_api.h"
#include "sshbuf.h"
#include "sshkey.h"
#include "packet.h"
#include "myproposal.h"
#include "log.h"
#include "kex.h"
#include "none-switch.h"
#include "hpn-window.h"

#include "kex_pair.h"

/* Hand-write the ciphers and MACs of the proposal s sends next */
static int
set_prop(struct ssh *s, const char *enc, const char *mac)
{
	char **prop = NULL;
	int r;

	if ((r = kex_buf2prop(s->kex->my, NULL, &prop)) != 0)
		return r;
	free(prop[PROPOSAL_ENC_ALGS_CTOS]);
	free(prop[PROPOSAL_ENC_ALGS_STOC]);
	free(prop[PROPOSAL_MAC_ALGS_CTOS]);
	free(prop[PROPOSAL_MAC_ALGS_STOC]);
	prop[PROPOSAL_ENC_ALGS_CTOS] = strdup(enc);
	prop[PROPOSAL_ENC_ALGS_STOC] = strdup(enc);
	prop[PROPOSAL_MAC_ALGS_CTOS] = strdup(mac);
	prop[PROPOSAL_MAC_ALGS_STOC] = strdup(mac);
	r = kex_prop2buf(s->kex->my, prop);
	kex_prop_free(prop);
	return r;
}

/* Does the proposal s sends next offer the none cipher? */
static int
offers_none(struct ssh *s)
{
	char **prop = NULL;
	int ret;

	if (kex_buf2prop(s->kex->my, NULL, &prop) != 0)
		return -1;
	ret = strstr(prop[PROPOSAL_ENC_ALGS_CTOS], "none") != NULL ||
	    strstr(prop[PROPOSAL_ENC_ALGS_STOC], "none") != NULL;
	kex_prop_free(prop);
	return ret;
}

/*
 * One case: both sides propose ciphers enc and MACs mac.  If authed, the
 * first key exchange is a normal one and the proposals under test are
 * used for a rekey after both sides are marked authenticated.  want_ok:
 * whether the key exchange under test must succeed.
 */
static void
one_case(const char *name, char *enc, char *mac, int authed, int want_ok,
    struct sshkey *private, struct sshkey *public)
{
	struct ssh *client = NULL, *server = NULL;
	struct kex_params params;
	char buf[256];
	int r;

	init_params(&params, private);
	if (!authed) {
		params.proposal[PROPOSAL_ENC_ALGS_CTOS] = enc;
		params.proposal[PROPOSAL_ENC_ALGS_STOC] = enc;
		params.proposal[PROPOSAL_MAC_ALGS_CTOS] = mac;
		params.proposal[PROPOSAL_MAC_ALGS_STOC] = mac;
	}
	if (start_pair(&client, &server, &params, private, public) != 0) {
		result(name, 0, "setup failed");
		goto out;
	}
	if (authed) {
		if ((r = run_kex(client, server)) != 0) {
			snprintf(buf, sizeof(buf), "first kex: %s",
			    ssh_err(r));
			result(name, 0, buf);
			goto out;
		}
		ssh_packet_set_authenticated(client);
		ssh_packet_set_authenticated(server);
		/* Hand-write the rekey proposal of both sides */
		if (set_prop(client, enc, mac) != 0 ||
		    set_prop(server, enc, mac) != 0) {
			result(name, 0, "set_prop failed");
			goto out;
		}
		if ((r = kex_send_kexinit(client)) != 0) {
			result(name, 0, "kex_send_kexinit failed");
			goto out;
		}
	}
	r = run_kex(client, server);
	snprintf(buf, sizeof(buf), "key exchange %s%s", r == 0 ?
	    "succeeded" : "failed: ", r == 0 ? "" : ssh_err(r));
	result(name, (r == 0) == (want_ok != 0), buf);
 out:
	ssh_free(client);
	ssh_free(server);
}

/*
 * sshd's pty guard on an authenticated pair whose server accepts none
 * (NoneEnabled).  The client proposes cenc as ciphers in the rekey.
 *   PTY_IN_REKEY	the pty request meets a rekey the server started,
 *			before the client's KEXINIT: granted; the exchange
 *			must succeed iff the client does not propose none
 *   PTY_AFTER		the rekey completes first, then the pty request:
 *			refused iff the exchange chose none
 *   PTY_WITHDRAW	pty granted between exchanges: the server's next
 *			KEXINIT no longer offers none, and the exchange
 *			succeeds without it even if the client wants it
 *   PTY_BADPROP	pty granted, then the server's proposal is made
 *			unparsable: it must send no KEXINIT at all
 */
enum pty_when { PTY_IN_REKEY, PTY_AFTER, PTY_WITHDRAW, PTY_BADPROP };

static void
pty_case(const char *name, enum pty_when when, const char *cenc,
    struct sshkey *private, struct sshkey *public)
{
	struct ssh *client = NULL, *server = NULL;
	struct kex_params params;
	const char *mac = "hmac-sha2-256";
	int r, ok, peer_none = strncmp(cenc, "none", 4) == 0;
	char buf[256];

	init_params(&params, private);
	params.proposal[PROPOSAL_MAC_ALGS_CTOS] = (char *)mac;
	params.proposal[PROPOSAL_MAC_ALGS_STOC] = (char *)mac;
	if (authed_pair(name, &client, &server, &params, private, public,
	    0) != 0)
		goto out;
	none_switch_server(server, 1, 0);
	if (offers_none(server) != 1 || set_prop(client, cenc, mac) != 0) {
		result(name, 0, "cannot set up the proposals");
		goto out;
	}
	/* Both grant the pty first, between exchanges. */
	if ((when == PTY_WITHDRAW || when == PTY_BADPROP) &&
	    !none_switch_pty_permitted(server)) {
		result(name, 0, "pty refused");
		goto out;
	}
	switch (when) {
	case PTY_IN_REKEY:
		if ((r = kex_start_rekex(server)) != 0) {
			result(name, 0, "kex_start_rekex failed");
			goto out;
		}
		if (!none_switch_pty_permitted(server)) {
			result(name, 0, "pty refused during the rekey");
			goto out;
		}
		r = run_kex(client, server);
		if (peer_none && r == 0)
			result(name, 0, "server agreed to none after a pty");
		else if (!peer_none && r != 0) {
			snprintf(buf, sizeof(buf), "rekey failed: %s",
			    ssh_err(r));
			result(name, 0, buf);
		} else if (r == 0 && (server->none_flags & NONE_CIPHER))
			result(name, 0, "none chosen");
		else
			result(name, 1, NULL);
		break;
	case PTY_AFTER:
		if ((r = kex_send_kexinit(client)) != 0 ||
		    (r = run_kex(client, server)) != 0) {
			snprintf(buf, sizeof(buf), "rekey failed: %s",
			    ssh_err(r));
			result(name, 0, buf);
			goto out;
		}
		ok = none_switch_pty_permitted(server);
		if (ok == peer_none)
			result(name, 0, ok ? "pty granted over none" :
			    "pty refused without none");
		else
			result(name, 1, NULL);
		break;
	case PTY_WITHDRAW:
		if ((r = kex_start_rekex(server)) != 0) {
			result(name, 0, "kex_start_rekex failed");
			goto out;
		}
		if (offers_none(server) != 0) {
			result(name, 0, "the server still offers none");
			goto out;
		}
		if ((r = run_kex(client, server)) != 0) {
			snprintf(buf, sizeof(buf), "rekey failed: %s",
			    ssh_err(r));
			result(name, 0, buf);
		} else if (server->none_flags & NONE_CIPHER)
			result(name, 0, "none chosen");
		else
			result(name, 1, NULL);
		break;
	case PTY_BADPROP:
		/* A cookie and then garbage: no name-lists to parse */
		sshbuf_reset(server->kex->my);
		if (sshbuf_put(server->kex->my,
		    "0123456789abcdef\xff\xff\xff\xff", 20) != 0) {
			result(name, 0, "sshbuf_put failed");
			goto out;
		}
		r = kex_start_rekex(server);
		if (r == 0 || (server->kex->flags & KEX_INIT_SENT))
			result(name, 0, "KEXINIT sent from an unparsable "
			    "proposal");
		else
			result(name, 1, NULL);
		break;
	}
 out:
	ssh_free(client);
	ssh_free(server);
}

/*
 * After a key exchange that chose the none MAC, both sides refuse the
 * peer's channel opens and requests; before it, they pass.
 */
static void
freeze_case(const char *name, struct sshkey *private, struct sshkey *public)
{
	struct ssh *client = NULL, *server = NULL;
	struct kex_params params;
	int r;

	init_params(&params, private);
	if (start_pair(&client, &server, &params, private, public) != 0 ||
	    run_kex(client, server) != 0) {
		result(name, 0, "setup failed");
		goto out;
	}
	ssh_packet_set_authenticated(client);
	ssh_packet_set_authenticated(server);
	if (set_prop(client, "none,aes128-ctr", "hmac-sha2-256") != 0 ||
	    set_prop(server, "aes128-ctr,none", "hmac-sha2-256") != 0 ||
	    kex_send_kexinit(client) != 0 || run_kex(client, server) != 0) {
		result(name, 0, "none cipher rekey failed");
		goto out;
	}
	if (none_switch_refuse_peer(server, "channel open", "session") ||
	    none_switch_refuse_peer(client, "channel open", "x11")) {
		result(name, 0, "refused with the MAC still on");
		goto out;
	}
	if (set_prop(client, "none,aes128-ctr", "none,hmac-sha2-256") != 0 ||
	    set_prop(server, "aes128-ctr,none", "hmac-sha2-256,none") != 0 ||
	    kex_send_kexinit(client) != 0 ||
	    (r = run_kex(client, server)) != 0) {
		result(name, 0, "none MAC rekey failed");
		goto out;
	}
	if (!none_switch_refuse_peer(server, "channel open", "session") ||
	    !none_switch_refuse_peer(server, "global request",
	    "tcpip-forward") ||
	    !none_switch_refuse_peer(client, "channel open",
	    "auth-agent@openssh.com"))
		result(name, 0, "accepted over the none MAC");
	else
		result(name, 1, NULL);
 out:
	ssh_free(client);
	ssh_free(server);
}

int
main(void)
{
	struct sshkey *private = NULL, *public = NULL;

	if (start_test("test_none_kex", &private, &public) != 0)
		return 1;
	one_case("preauth-control", "aes128-ctr", "hmac-sha2-256", 0, 1,
	    private, public);
	one_case("preauth-cipher-none", "none", "hmac-sha2-256", 0, 0,
	    private, public);
	one_case("preauth-cipher-none-first", "none,aes128-ctr",
	    "hmac-sha2-256", 0, 0, private, public);
	one_case("preauth-mac-none", "aes128-ctr", "none,hmac-sha2-256", 0, 0,
	    private, public);
	one_case("preauth-both-none", "none", "none", 0, 0, private, public);
	one_case("postauth-cipher-none", "none,aes128-ctr", "hmac-sha2-256",
	    1, 1, private, public);
	one_case("postauth-both-none", "none", "none", 1, 1, private, public);
	one_case("postauth-mac-none-needs-cipher-none", "aes128-ctr",
	    "none,hmac-sha2-256", 1, 0, private, public);
	pty_case("pty-in-rekey-peer-lacks-none", PTY_IN_REKEY,
	    "aes128-ctr,aes256-ctr", private, public);
	pty_case("pty-in-rekey-then-peer-wants-none", PTY_IN_REKEY,
	    "none,aes128-ctr", private, public);
	pty_case("pty-after-rekey-without-none", PTY_AFTER,
	    "aes128-ctr", private, public);
	pty_case("pty-after-rekey-to-none", PTY_AFTER,
	    "none,aes128-ctr", private, public);
	pty_case("pty-withdraws-none", PTY_WITHDRAW,
	    "none,aes128-ctr", private, public);
	pty_case("pty-unparsable-proposal", PTY_BADPROP,
	    "aes128-ctr", private, public);
	freeze_case("none-mac-freezes", private, public);
	return end_test(private, public);
}
