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
 * test_kex_guess: the client's guessed key exchange on a rekey (patch
 * 0008, kex-guess.c: its KEXINIT says first_kex_packet_follows and the
 * KEX_ECDH_INIT follows at once).  Between two in-memory endpoints
 * (OpenSSH's ssh_api): a rekey the client starts does guess; until the
 * server's KEXINIT is in, a KEX_ECDH_REPLY is a protocol error, as without
 * a guess (a server that sent one first once reached kex_derive_keys()
 * with no new keys); the guessed exchange then completes, and the
 * connection rekeys again.  And (patch 0003) once the server has answered
 * the guess with its NEWKEYS, its key exchange no longer holds its other
 * messages back: one sent before the client's NEWKEYS is in goes out at
 * once, and the client reads it after the exchange.  The first rekey
 * does not guess (the server's first methods have not been seen twice);
 * once the server lists another method first, or drops a guess because
 * its first methods changed, the client guesses no more on the
 * connection, and its rekeys still complete.
 * Prints "ok - NAME" or "not ok - NAME" per case and a summary line.
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
#include "ssh2.h"
#include "dispatch.h"
#include "hpn-window.h"

#include "kex_pair.h"

/* The server sends a KEX_ECDH_REPLY of junk, as a hostile server may. */
static int
send_early_reply(struct ssh *server)
{
	u_char junk[64];
	int r;

	memset(junk, 0x5a, sizeof(junk));
	if ((r = sshpkt_start(server, SSH2_MSG_KEX_ECDH_REPLY)) != 0 ||
	    (r = sshpkt_put_string(server, junk, sizeof(junk))) != 0 ||
	    (r = sshpkt_put_string(server, junk, sizeof(junk))) != 0 ||
	    (r = sshpkt_put_string(server, junk, sizeof(junk))) != 0 ||
	    (r = sshpkt_send(server)) != 0)
		return r;
	return 0;
}

#define CASE_GUESS	0
#define CASE_EARLY	1	/* the server's reply before its KEXINIT */
#define CASE_RESUME	2	/* the server sends before the exchange ends */

/*
 * The server's answer to the guess, then a CHANNEL_DATA message from it
 * before the client's NEWKEYS is in: it must go out at once, and the
 * client must read it, under the new keys, after the exchange.
 */
static int
resume_check(struct ssh *client, struct ssh *server, char *buf, size_t len)
{
	const u_char *p;
	size_t n;
	u_char type = 0;
	u_int32_t id;
	char *s = NULL;
	int r, i;

	if ((r = flush(client, server)) != 0 ||
	    (r = flush(server, client)) != 0) {
		snprintf(buf, len, "the server's answer: %s", ssh_err(r));
		return -1;
	}
	if (!ssh_packet_is_rekeying(server) || server->kex->done) {
		snprintf(buf, len, "the exchange ended before the client's "
		    "NEWKEYS");
		return -1;
	}
	if (ssh_packet_kex_holds_output(server)) {
		snprintf(buf, len, "the key exchange holds the server's output "
		    "after its NEWKEYS");
		return -1;
	}
	if ((r = sshpkt_start(server, SSH2_MSG_CHANNEL_DATA)) != 0 ||
	    (r = sshpkt_put_u32(server, 7)) != 0 ||
	    (r = sshpkt_put_cstring(server, "resumed")) != 0 ||
	    (r = sshpkt_send(server)) != 0) {
		snprintf(buf, len, "CHANNEL_DATA: %s", ssh_err(r));
		return -1;
	}
	if ((p = ssh_output_ptr(server, &n)) == NULL || n == 0) {
		snprintf(buf, len, "CHANNEL_DATA was queued, not sent");
		return -1;
	}
	if ((r = flush(server, client)) != 0) {
		snprintf(buf, len, "flush: %s", ssh_err(r));
		return -1;
	}
	for (i = 0; i < 10 && type == 0; i++) {
		if ((r = ssh_packet_next(client, &type)) != 0) {
			snprintf(buf, len, "the client's read: %s",
			    ssh_err(r));
			return -1;
		}
	}
	if (type != SSH2_MSG_CHANNEL_DATA || !client->kex->done) {
		snprintf(buf, len, "the client read type %u, exchange %s",
		    type, client->kex->done ? "done" : "not done");
		return -1;
	}
	if ((r = sshpkt_get_u32(client, &id)) != 0 ||
	    (r = sshpkt_get_cstring(client, &s, NULL)) != 0 ||
	    id != 7 || strcmp(s, "resumed") != 0) {
		snprintf(buf, len, "CHANNEL_DATA garbled: %s", ssh_err(r));
		free(s);
		return -1;
	}
	free(s);
	return 0;
}

/*
 * A rekey the client starts, with what (CASE_*) the server does about
 * the guess besides answering it.
 */
static void
rekey_case(const char *name, int what, struct sshkey *private,
    struct sshkey *public)
{
	struct ssh *client = NULL, *server = NULL;
	struct kex_params params;
	char buf[256];
	int r, i;

	init_params(&params, private);
	if (authed_pair(name, &client, &server, &params, private, public,
	    1) != 0)
		goto out;
	/*
	 * The client guesses once the server listed the algorithms in use
	 * first twice and its own proposal puts them first: on the second
	 * rekey, or (9.2p1) on the third.
	 */
	for (i = 0; i < 4; i++) {
		if ((r = kex_start_rekex(client)) != 0) {
			snprintf(buf, sizeof(buf), "kex_start_rekex: %s",
			    ssh_err(r));
			result(name, 0, buf);
			goto out;
		}
		if ((client->kex->flags & KEX_GUESS_SENT) != 0)
			break;
		if ((r = run_kex(client, server)) != 0) {
			snprintf(buf, sizeof(buf), "unguessed rekey: %s",
			    ssh_err(r));
			result(name, 0, buf);
			goto out;
		}
	}
	if ((client->kex->flags & KEX_GUESS_SENT) == 0) {
		result(name, 0, "the client did not guess");
		goto out;
	}
	if (what == CASE_RESUME &&
	    resume_check(client, server, buf, sizeof(buf)) != 0) {
		result(name, 0, buf);
		goto out;
	}
	if (what == CASE_EARLY) {
		if (client->dispatch[SSH2_MSG_KEX_ECDH_REPLY] !=
		    &kex_protocol_error) {
			result(name, 0, "KEX_ECDH_REPLY is accepted before "
			    "the server's KEXINIT");
			goto out;
		}
		if ((r = send_early_reply(server)) != 0 ||
		    (r = flush(server, client)) != 0) {
			snprintf(buf, sizeof(buf), "early reply: %s",
			    ssh_err(r));
			result(name, 0, buf);
			goto out;
		}
		if (client->kex->done ||
		    (client->kex->flags & KEX_GUESS_SENT) == 0) {
			result(name, 0, "the early reply changed the exchange");
			goto out;
		}
	}
	if ((r = run_kex(client, server)) != 0) {
		snprintf(buf, sizeof(buf), "guessed rekey: %s", ssh_err(r));
		result(name, 0, buf);
		goto out;
	}
	/* And the connection still rekeys. */
	if ((r = kex_start_rekex(client)) != 0 ||
	    (r = run_kex(client, server)) != 0) {
		snprintf(buf, sizeof(buf), "next rekey: %s", ssh_err(r));
		result(name, 0, buf);
		goto out;
	}
	result(name, 1, NULL);
 out:
	ssh_free(client);
	ssh_free(server);
}

/* Swaps the server's first two KEX methods for its next KEXINITs. */
static int
swap_first(struct ssh *server)
{
	char **prop = NULL, *a, *b, *s = NULL;
	int r;

	if ((r = kex_buf2prop(server->kex->my, NULL, &prop)) != 0)
		return r;
	a = prop[PROPOSAL_KEX_ALGS];
	if ((b = strchr(a, ',')) == NULL) {
		r = SSH_ERR_INTERNAL_ERROR;
		goto out;
	}
	*b++ = '\0';
	if (asprintf(&s, "%.*s,%s%s", (int)strcspn(b, ","), b, a,
	    b + strcspn(b, ",")) == -1) {
		r = SSH_ERR_ALLOC_FAIL;
		goto out;
	}
	free(prop[PROPOSAL_KEX_ALGS]);
	prop[PROPOSAL_KEX_ALGS] = s;
	r = kex_prop2buf(server->kex->my, prop);
 out:
	kex_prop_free(prop);
	return r;
}

/*
 * What dispatch.c does and ssh_api's ssh_packet_next() does not: the
 * server skips the packet that follows a KEXINIT whose guess it drops
 * (dispatch_skip_packets).  server_kexinit() is the server's KEXINIT
 * handler for the exchange whose guess it drops.
 */
static dispatch_fn *skipped_fn;

static int
skip_guess(int type, u_int32_t seq, struct ssh *ssh)
{
	ssh->dispatch[type] = skipped_fn;
	ssh->dispatch_skip_packets--;
	return 0;
}

static int
server_kexinit(int type, u_int32_t seq, struct ssh *ssh)
{
	int r;

	if ((r = kex_input_kexinit(type, seq, ssh)) != 0)
		return r;
	if (ssh->dispatch_skip_packets) {
		skipped_fn = ssh->dispatch[SSH2_MSG_KEX_ECDH_INIT];
		ssh->dispatch[SSH2_MSG_KEX_ECDH_INIT] = skip_guess;
	}
	return 0;
}

/*
 * The server's first KEX method changes: before the first rekey's KEXINIT
 * (CASE_CHANGED: the client never guesses), or in its answer to the first
 * guess (CASE_DROPPED: the server drops the guess, the exchange completes
 * without it).  Either way the server's first method is back for the
 * next four rekeys, which complete with no guess.
 */
#define CASE_CHANGED	0
#define CASE_DROPPED	1
static void
backoff_case(const char *name, int what, struct sshkey *private,
    struct sshkey *public)
{
	struct ssh *client = NULL, *server = NULL;
	struct kex_params params;
	char buf[256];
	int r, i, guessed = 0;

	init_params(&params, private);
	if (authed_pair(name, &client, &server, &params, private, public,
	    1) != 0)
		goto out;
	if (what == CASE_CHANGED && (r = swap_first(server)) != 0)
		goto fail;
	for (i = 0; i < 4 && !guessed; i++) {
		if ((r = kex_start_rekex(client)) != 0)
			goto fail;
		if ((client->kex->flags & KEX_GUESS_SENT) != 0) {
			if (i == 0) {
				result(name, 0, "the first rekey guessed");
				goto out;
			}
			if (what == CASE_CHANGED) {
				result(name, 0, "guessed after the server's "
				    "first method changed");
				goto out;
			}
			guessed = 1;
			if ((r = swap_first(server)) != 0)
				goto fail;
			server->dispatch[SSH2_MSG_KEXINIT] = &server_kexinit;
		}
		if ((r = run_kex(client, server)) != 0)
			goto fail;
	}
	if (what == CASE_DROPPED && !guessed) {
		result(name, 0, "the client did not guess");
		goto out;
	}
	if ((client->kex->flags & KEX_GUESS_NEVER) == 0) {
		result(name, 0, "the client did not stop guessing");
		goto out;
	}
	if ((r = swap_first(server)) != 0)
		goto fail;
	for (i = 0; i < 4; i++) {
		if ((r = kex_start_rekex(client)) != 0)
			goto fail;
		if ((client->kex->flags & KEX_GUESS_SENT) != 0) {
			result(name, 0, "guessed again");
			goto out;
		}
		if ((r = run_kex(client, server)) != 0)
			goto fail;
	}
	result(name, 1, NULL);
	goto out;
 fail:
	snprintf(buf, sizeof(buf), "rekey: %s", ssh_err(r));
	result(name, 0, buf);
 out:
	ssh_free(client);
	ssh_free(server);
}

int
main(void)
{
	struct sshkey *private = NULL, *public = NULL;

	if (start_test("test_kex_guess", &private, &public) != 0)
		return 1;
	rekey_case("guessed-rekey", CASE_GUESS, private, public);
	rekey_case("reply-before-kexinit-refused", CASE_EARLY, private,
	    public);
	rekey_case("server-sends-after-its-newkeys", CASE_RESUME, private,
	    public);
	backoff_case("changed-first-method-no-guess", CASE_CHANGED, private,
	    public);
	backoff_case("dropped-guess-no-more", CASE_DROPPED, private, public);
	return end_test(private, public);
}
