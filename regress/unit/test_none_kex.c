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
 * both sides propose; after it, they are negotiated.  Prints "ok - NAME"
 * or "not ok - NAME" per case and a summary line.
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

static int npass, nfail;

static void
result(const char *name, int ok, const char *why)
{
	if (ok) {
		printf("ok - %s\n", name);
		npass++;
	} else {
		printf("not ok - %s: %s\n", name, why);
		nfail++;
	}
}

/* Move everything "from" has to send into "to"; 0 or an SSH_ERR_* */
static int
flush(struct ssh *from, struct ssh *to)
{
	const u_char *buf;
	u_char type;
	size_t len;
	int r;

	for (;;) {
		if ((r = ssh_packet_next(from, &type)) != 0)
			return r;
		if (type != 0)
			return 0;
		buf = ssh_output_ptr(from, &len);
		if (len == 0)
			return 0;
		if ((r = ssh_output_consume(from, len)) != 0 ||
		    (r = ssh_input_append(to, buf, len)) != 0)
			return r;
	}
}

static int
run_kex(struct ssh *client, struct ssh *server)
{
	int r = 0, i;

	for (i = 0; i < 100 && (!server->kex->done || !client->kex->done);
	    i++) {
		if ((r = flush(server, client)) != 0 ||
		    (r = flush(client, server)) != 0)
			return r;
	}
	return (server->kex->done && client->kex->done) ? 0 :
	    SSH_ERR_INTERNAL_ERROR;
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
	char *prop[PROPOSAL_MAX] = { KEX_CLIENT };
	char **test = NULL;
	char buf[256];
	int r, i;

	memcpy(params.proposal, prop, sizeof(prop));
	params.proposal[PROPOSAL_SERVER_HOST_KEY_ALGS] =
	    (char *)sshkey_ssh_name(private);
	if (!authed) {
		params.proposal[PROPOSAL_ENC_ALGS_CTOS] = enc;
		params.proposal[PROPOSAL_ENC_ALGS_STOC] = enc;
		params.proposal[PROPOSAL_MAC_ALGS_CTOS] = mac;
		params.proposal[PROPOSAL_MAC_ALGS_STOC] = mac;
	}
	if (ssh_init(&client, 0, &params) != 0 ||
	    ssh_init(&server, 1, &params) != 0 ||
	    ssh_add_hostkey(server, private) != 0 ||
	    ssh_add_hostkey(client, public) != 0) {
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
		for (i = 0; i < 2; i++) {
			struct ssh *s = i ? server : client;

			if (kex_buf2prop(s->kex->my, NULL, &test) != 0) {
				result(name, 0, "kex_buf2prop failed");
				goto out;
			}
			free(test[PROPOSAL_ENC_ALGS_CTOS]);
			free(test[PROPOSAL_ENC_ALGS_STOC]);
			free(test[PROPOSAL_MAC_ALGS_CTOS]);
			free(test[PROPOSAL_MAC_ALGS_STOC]);
			test[PROPOSAL_ENC_ALGS_CTOS] = strdup(enc);
			test[PROPOSAL_ENC_ALGS_STOC] = strdup(enc);
			test[PROPOSAL_MAC_ALGS_CTOS] = strdup(mac);
			test[PROPOSAL_MAC_ALGS_STOC] = strdup(mac);
			r = kex_prop2buf(s->kex->my, test);
			kex_prop_free(test);
			if (r != 0) {
				result(name, 0, "kex_prop2buf failed");
				goto out;
			}
		}
		if ((r = kex_send_kexinit(client)) != 0) {
			result(name, 0, "kex_send_kexinit failed");
			goto out;
		}
	}
	r = run_kex(client, server);
	if (want_ok && r != 0) {
		snprintf(buf, sizeof(buf), "key exchange failed: %s",
		    ssh_err(r));
		result(name, 0, buf);
	} else if (!want_ok && r == 0)
		result(name, 0, "key exchange succeeded");
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

	log_init("test_none_kex", SYSLOG_LEVEL_ERROR, SYSLOG_FACILITY_USER, 1);
	if (sshkey_generate(KEY_ED25519, 0, &private) != 0 ||
	    sshkey_from_private(private, &public) != 0) {
		printf("not ok - keygen\n");
		return 1;
	}
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
	sshkey_free(private);
	sshkey_free(public);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}
