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
 * kex_pair.h: two in-memory SSH endpoints (OpenSSH's ssh_api) for the key
 * exchange tests, included once by each: result() prints a case's
 * "ok - NAME" or "not ok - NAME: WHY" and counts it, flush() moves one
 * side's output into the other, run_kex() runs an exchange to its end,
 * init_params() and start_pair() set a pair up with the client's default
 * proposal, start_test() sets up logging and a host key, end_test()
 * prints the summary line and frees the key.
 */

#ifndef HPN_KEX_PAIR_H
#define HPN_KEX_PAIR_H

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

/* params: the client's default proposal, with private's host key type. */
static void
init_params(struct kex_params *params, struct sshkey *private)
{
	char *prop[PROPOSAL_MAX] = { KEX_CLIENT };

	memcpy(params->proposal, prop, sizeof(prop));
	params->proposal[PROPOSAL_SERVER_HOST_KEY_ALGS] =
	    (char *)sshkey_ssh_name(private);
}

/* A client and a server with params and the host key; 0 on success. */
static int
start_pair(struct ssh **client, struct ssh **server,
    struct kex_params *params, struct sshkey *private, struct sshkey *public)
{
	if (ssh_init(client, 0, params) != 0 ||
	    ssh_init(server, 1, params) != 0 ||
	    ssh_add_hostkey(*server, private) != 0 ||
	    ssh_add_hostkey(*client, public) != 0)
		return -1;
	return 0;
}

/*
 * A pair set up from params and through its first key exchange, both
 * sides authenticated, as a rekey test starts; with windows, the client's
 * dynamic windows too (hpn_window_init(), as ssh does after connecting:
 * they allow the guessed key exchange).  0, or -1 once name has failed.
 */
static int
authed_pair(const char *name, struct ssh **client, struct ssh **server,
    struct kex_params *params, struct sshkey *private, struct sshkey *public,
    int windows)
{
	char buf[256];
	int r;

	if (start_pair(client, server, params, private, public) != 0) {
		result(name, 0, "setup failed");
		return -1;
	}
	if (windows)
		hpn_window_init(*client, 0, 0, 0);
	if ((r = run_kex(*client, *server)) != 0) {
		snprintf(buf, sizeof(buf), "first kex: %s", ssh_err(r));
		result(name, 0, buf);
		return -1;
	}
	ssh_packet_set_authenticated(*client);
	ssh_packet_set_authenticated(*server);
	return 0;
}

/* Logging for program prog and an Ed25519 host key; 0 on success. */
static int
start_test(const char *prog, struct sshkey **private, struct sshkey **public)
{
	log_init(prog, SYSLOG_LEVEL_ERROR, SYSLOG_FACILITY_USER, 1);
	if (sshkey_generate(KEY_ED25519, 0, private) != 0 ||
	    sshkey_from_private(*private, public) != 0) {
		printf("not ok - keygen\n");
		return -1;
	}
	return 0;
}

/* The summary line; the exit status. */
static int
end_test(struct sshkey *private, struct sshkey *public)
{
	sshkey_free(private);
	sshkey_free(public);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail != 0;
}

#endif /* HPN_KEX_PAIR_H */
