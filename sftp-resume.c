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
 * Verified resume for sftp and scp (sftp-client.c's sftp_download() and
 * sftp_upload() with their resume flag).  The part of the file that the
 * target already has is cut into ranges of SFTP_RESUME_RANGE bytes; the
 * server hashes its copy of each (check-file-handle on the open file for
 * a download, check-file-name for an upload), a few ranges in flight at
 * once, while the client hashes its own copy of the ranges whose replies
 * have come.  The copy goes on from the start of the first range whose
 * hashes differ (the target is cut there), or from the target's end if
 * all match: a corrupted or foreign prefix is sent again, and a good one
 * is not.
 *
 * Replies may come in any order.  A server that cannot hash (no
 * check-file extension, or none of our algorithms) gets stock's resume,
 * which trusts the target's size, and a warning; one that fails to hash
 * gets the whole file again.
 */

#include "includes.h"

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "digest.h"
#include "log.h"
#include "match.h"
#include "misc.h"
#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "sftp-check.h"
#include "sftp-resume.h"

extern volatile sig_atomic_t interrupted;

/* The hash in a check-file reply, if it is one we asked for. */
static int
reply_hash(struct sshbuf *reply, int *algp)
{
	char *ext = NULL, *name = NULL;
	size_t want;
	int r, ok = 0;

	*algp = -1;
	if ((r = sshbuf_get_cstring(reply, &ext, NULL)) != 0) {
		error_fr(r, "parse check-file reply");
		goto out;
	}
	/*
	 * The draft's form: "check-file", the algorithm, the hash.  ProFTPD
	 * leaves out "check-file"; MINA SSHD sends the hash as a string.
	 */
	if (strcmp(ext, "check-file") != 0) {
		name = ext;
		ext = NULL;
	} else if ((r = sshbuf_get_cstring(reply, &name, NULL)) != 0) {
		error_fr(r, "parse check-file reply");
		goto out;
	}
	ok = match_pattern_list(name, SFTP_RESUME_ALGS, 0) == 1;
	if (ok && (*algp = sftp_check_alg(name)) != -1) {
		want = ssh_digest_bytes(*algp);
		if (sshbuf_len(reply) == want + 4 &&
		    PEEK_U32(sshbuf_ptr(reply)) == want)
			(void)sshbuf_consume(reply, 4);
	}
	if (!ok || *algp == -1 ||
	    sshbuf_len(reply) != ssh_digest_bytes(*algp)) {
		error("check-file reply: a hash \"%s\" of %zu bytes, "
		    "not one asked for", name, sshbuf_len(reply));
		ok = 0;
	}
 out:
	free(ext);
	free(name);
	return ok;
}

/*
 * Whether an extension of the server's VERSION is a list of the requests
 * it knows ("supported" of filexfer 5, "supported2" of filexfer 6, as
 * MINA SSHD states check-file) naming check-file: SFTP_RESUME_BY_*, or 0.
 */
int
sftp_resume_listed(const char *name, const u_char *value, size_t len)
{
	struct sshbuf *b;
	char *ext;
	u_int n;
	int r, found = 0;

	if ((strcmp(name, "supported") != 0 &&
	    strcmp(name, "supported2") != 0) ||
	    (b = sshbuf_from(value, len)) == NULL)
		return 0;
	if (strcmp(name, "supported") == 0) {
		/* Four masks and the largest read, then names to the end. */
		if (sshbuf_consume(b, 5 * 4) != 0)
			goto out;
		n = UINT_MAX;
	} else {
		/* Four masks, the largest read, two block vectors. */
		if (sshbuf_consume(b, 5 * 4 + 2 * 2) != 0 ||
		    sshbuf_get_u32(b, &n) != 0)
			goto out;
		/* The attribute extensions' names, then the requests'. */
		while (n-- > 0) {
			if (sshbuf_skip_string(b) != 0)
				goto out;
		}
		if (sshbuf_get_u32(b, &n) != 0)
			goto out;
	}
	while (n-- > 0 && sshbuf_len(b) > 0) {
		if ((r = sshbuf_get_cstring(b, &ext, NULL)) != 0)
			break;
		if (strcmp(ext, "check-file-handle") == 0)
			found |= SFTP_RESUME_BY_HANDLE;
		else if (strcmp(ext, "check-file-name") == 0)
			found |= SFTP_RESUME_BY_NAME;
		free(ext);
	}
 out:
	sshbuf_free(b);
	return found;
}

/*
 * Whether a server that lists no check-file answers one: check-file-name
 * of ".", a directory, is refused as unknown (OP_UNSUPPORTED) by a server
 * that has none, and for what it is by one that has it.
 */
int
sftp_resume_probe(struct sftp_conn *conn)
{
	struct sshbuf *reply;
	u_int id, rid, status;

	if ((reply = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	id = sftp_check_file_send(conn, NULL, 0, ".", SFTP_RESUME_ALGS,
	    0, 1, 0);
	status = sftp_check_file_reply(conn, &rid, reply);
	sshbuf_free(reply);
	if (rid != id)
		fatal("check-file: reply to %u, not %u", rid, id);
	debug3_f("check-file-name \".\": %s", status == SSH2_FX_OK ?
	    "a hash" : fx2txt(status));
	return status != SSH2_FX_OP_UNSUPPORTED &&
	    status != SSH2_FX_BAD_MESSAGE;
}

/* A comparison of the len bytes at the start of local fd with the source. */
struct sftp_resume {
	char *target;		/* the file that resumes, in messages */
	int fd;
	int verify;		/* the server can hash it */
	uint64_t len, nranges;
	uint64_t next;		/* the next range to ask for */
	uint64_t bad;		/* the first range that differs so far */
	struct {
		u_int id;
		uint64_t idx;
	} reqs[SFTP_RESUME_AHEAD];
	u_int n;		/* requests in flight */
	u_int failed;		/* the server's first error */
	int read_errno;		/* reading fd failed */
};

/*
 * Start comparing the first len bytes of local fd with the remote file,
 * which the requests name (by_name) or give by its handle.
 */
struct sftp_resume *
sftp_resume_new(struct sftp_conn *conn, const char *target, int fd,
    uint64_t len, int by_name)
{
	struct sftp_resume *r;

	r = xcalloc(1, sizeof(*r));
	r->target = xstrdup(target);
	r->fd = fd;
	r->len = len;
	r->verify = sftp_can_check_file(conn, by_name);
	r->nranges = (len + SFTP_RESUME_RANGE - 1) / SFTP_RESUME_RANGE;
	r->bad = r->nranges;
	r->failed = SSH2_FX_OK;
	return r;
}

void
sftp_resume_free(struct sftp_resume *r)
{
	if (r == NULL)
		return;
	free(r->target);
	free(r);
}

/*
 * Whether a request for the range at *offp of *lenp bytes is to be sent
 * now; its id goes to sftp_resume_sent().
 */
int
sftp_resume_want(struct sftp_resume *r, uint64_t *offp, uint64_t *lenp)
{
	if (!r->verify || r->failed != SSH2_FX_OK || r->read_errno != 0 ||
	    interrupted || r->n >= SFTP_RESUME_AHEAD || r->next >= r->bad)
		return 0;
	*offp = r->next * SFTP_RESUME_RANGE;
	*lenp = MINIMUM(SFTP_RESUME_RANGE, r->len - *offp);
	return 1;
}

void
sftp_resume_sent(struct sftp_resume *r, u_int id)
{
	r->reqs[r->n].id = id;
	r->reqs[r->n++].idx = r->next++;
}

/* Whether replies are still to come. */
int
sftp_resume_waiting(const struct sftp_resume *r)
{
	return r->n != 0;
}

/*
 * The reply to request id: the server's status, and if SSH2_FX_OK, its
 * data after the request id in reply.  The range's own bytes are hashed
 * now, so both ends hash at once.
 */
void
sftp_resume_reply(struct sftp_resume *r, u_int id, u_int status,
    struct sshbuf *reply)
{
	u_char hash[SFTP_CHECK_MAX_HASH];
	uint64_t idx, off, rlen, done;
	u_int i;
	int alg;

	for (i = 0; i < r->n && r->reqs[i].id != id; i++)
		;
	if (i == r->n)
		fatal("check-file: reply to unknown request %u", id);
	idx = r->reqs[i].idx;
	r->reqs[i] = r->reqs[--r->n];
	/*
	 * Past a range the server cannot hash (OP_UNSUPPORTED) the others
	 * are still compared: one found to differ wins (sftp_resume_end()).
	 */
	if ((r->failed != SSH2_FX_OK &&
	    r->failed != SSH2_FX_OP_UNSUPPORTED) ||
	    r->read_errno != 0 || idx >= r->bad)
		return;
	if (status != SSH2_FX_OK) {
		if (r->failed == SSH2_FX_OK ||
		    status != SSH2_FX_OP_UNSUPPORTED)
			r->failed = status;
		return;
	}
	if (!reply_hash(reply, &alg)) {
		r->failed = SSH2_FX_BAD_MESSAGE;
		return;
	}
	off = idx * SFTP_RESUME_RANGE;
	rlen = MINIMUM(SFTP_RESUME_RANGE, r->len - off);
	if (sftp_check_range(r->fd, alg, off, rlen, hash,
	    ssh_digest_bytes(alg), &done) != 0) {
		r->read_errno = errno ? errno : EIO;
		return;
	}
	if (done != rlen || memcmp(hash, sshbuf_ptr(reply),
	    ssh_digest_bytes(alg)) != 0) {
		debug_f("range %llu of \"%s\" differs",
		    (unsigned long long)idx, r->target);
		r->bad = idx;
	}
}

/*
 * Once no reply is to come: how many bytes from the start match the
 * source in *goodp, and what to tell the user in *msgp (if not NULL).
 * Returns 0, or -1 if the copy must stop (interrupted, or fd unreadable;
 * then *msgp is an error).
 */
int
sftp_resume_end(struct sftp_resume *r, uint64_t *goodp, char **msgp)
{
	*goodp = r->len;
	*msgp = NULL;
	if (r->read_errno != 0) {
		xasprintf(msgp, "read \"%s\" to hash it: %s",
		    r->target, strerror(r->read_errno));
		return -1;
	}
	if (interrupted)
		return -1;
	if (r->len == 0)
		return 0;
	/* A range found to differ wins over one the server could not hash. */
	if (r->verify && r->bad < r->nranges &&
	    r->failed == SSH2_FX_OP_UNSUPPORTED)
		r->failed = SSH2_FX_OK;
	if (!r->verify || r->failed == SSH2_FX_OP_UNSUPPORTED) {
		xasprintf(msgp, "\"%s\": resuming unverified, from its size: "
		    "the server cannot hash files", r->target);
	} else if (r->failed != SSH2_FX_OK) {
		xasprintf(msgp, "\"%s\": cannot compare it with the source "
		    "(%s): copying it whole", r->target, fx2txt(r->failed));
		*goodp = 0;
	} else if (r->bad == 0) {
		*goodp = 0;
		xasprintf(msgp, "\"%s\": differs from the source: "
		    "copying it whole", r->target);
	} else if (r->bad < r->nranges) {
		*goodp = r->bad * SFTP_RESUME_RANGE;
		xasprintf(msgp, "\"%s\": differs from the source after "
		    "%llu bytes: copying from there", r->target,
		    (unsigned long long)*goodp);
	} else
		debug("\"%s\": its %llu bytes match the source",
		    r->target, (unsigned long long)r->len);
	return 0;
}

/*
 * How many bytes from the start of local fd, of len, are the same in the
 * remote file (open as handle, or named path if handle is NULL) in
 * *goodp.  target names the file that resumes, in messages.  Returns 0,
 * or -1 if the copy must stop (interrupted, or fd unreadable).
 */
int
sftp_resume_prefix(struct sftp_conn *conn, const u_char *handle,
    size_t handle_len, const char *path, const char *target, int fd,
    uint64_t len, uint64_t *goodp)
{
	struct sftp_resume *r;
	struct sshbuf *reply;
	uint64_t off, rlen;
	u_int id, status;
	char *msg;
	int ret;

	if ((reply = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	r = sftp_resume_new(conn, target, fd, len, handle == NULL);
	for (;;) {
		while (sftp_resume_want(r, &off, &rlen)) {
			sftp_resume_sent(r, sftp_check_file_send(conn, handle,
			    handle_len, path, SFTP_RESUME_ALGS, off, rlen, 0));
		}
		if (!sftp_resume_waiting(r))
			break;
		status = sftp_check_file_reply(conn, &id, reply);
		sftp_resume_reply(r, id, status, reply);
	}
	ret = sftp_resume_end(r, goodp, &msg);
	if (msg != NULL && ret != 0)
		error("%s", msg);
	else if (msg != NULL)
		logit("%s", msg);
	free(msg);
	sftp_resume_free(r);
	sshbuf_free(reply);
	return ret;
}

/*
 * Resume an upload of local_path (fd, of lsize bytes) to path: its
 * remote attributes in *c, its size cut to where it stops matching (the
 * remote file too), or 0 if there is none yet.  Without check-file-name,
 * stock's rule: the remote file must exist and be smaller, and is taken
 * as it is, with a warning.
 */
int
sftp_resume_upload(struct sftp_conn *conn, const char *path,
    const char *local_path, int fd, uint64_t lsize, Attrib *c)
{
	int verify = sftp_can_check_file(conn, 1);
	uint64_t good;
	Attrib a;

	if (sftp_stat(conn, path, verify, c) != 0) {
		if (!verify)
			return -1;
		attrib_clear(c);
		return 0;
	}
	if (!verify) {
		if (c->size >= lsize) {
			error("resume \"%s\": destination file "
			    "same size or larger", local_path);
			return -1;
		}
		logit("\"%s\": resuming unverified, from its size: "
		    "the server cannot hash files", path);
		return 0;
	}
	if (c->size > lsize) {
		error("resume \"%s\": destination file larger", local_path);
		return -1;
	}
	if (sftp_resume_prefix(conn, NULL, 0, path, path, fd, c->size,
	    &good) != 0)
		return -1;
	if (good < c->size) {
		attrib_clear(&a);
		a.flags = SSH2_FILEXFER_ATTR_SIZE;
		a.size = good;
		if (sftp_setstat(conn, path, &a) != 0)
			return -1;
		c->size = good;
	}
	return 0;
}
