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
#include <signal.h>
#include <stdlib.h>
#include <string.h>

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

static void
unverified(const char *target)
{
	logit("\"%s\": resuming unverified, from its size: "
	    "the server cannot hash files", target);
}

/* The hash in a check-file reply, if it is one we asked for. */
static int
reply_hash(struct sshbuf *reply, int *algp)
{
	char *ext = NULL, *name = NULL;
	int r, ok = 0;

	*algp = -1;
	if ((r = sshbuf_get_cstring(reply, &ext, NULL)) != 0 ||
	    (r = sshbuf_get_cstring(reply, &name, NULL)) != 0) {
		error_fr(r, "parse check-file reply");
		goto out;
	}
	if (strcmp(ext, "check-file") != 0) {
		error("check-file reply: \"%s\", not \"check-file\"", ext);
		goto out;
	}
	ok = match_pattern_list(name, SFTP_RESUME_ALGS, 0) == 1;
	if (!ok || (*algp = sftp_check_alg(name)) == -1 ||
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
	struct {
		u_int id;
		uint64_t idx;
	} reqs[SFTP_RESUME_AHEAD];
	struct sshbuf *reply;
	u_char hash[SFTP_CHECK_MAX_HASH];
	uint64_t nranges, next = 0, bad, idx, off, rlen, done;
	u_int i, n = 0, id, status, failed = SSH2_FX_OK;
	int alg, ret = 0;

	*goodp = len;
	if (len == 0)
		return 0;
	if (!sftp_can_check_file(conn, handle == NULL)) {
		unverified(target);
		return 0;
	}
	if ((reply = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	nranges = (len + SFTP_RESUME_RANGE - 1) / SFTP_RESUME_RANGE;
	bad = nranges;
	for (;;) {
		while (failed == SSH2_FX_OK && ret == 0 && !interrupted &&
		    n < SFTP_RESUME_AHEAD && next < bad) {
			off = next * SFTP_RESUME_RANGE;
			reqs[n].id = sftp_check_file_send(conn, handle,
			    handle_len, path, SFTP_RESUME_ALGS, off,
			    MINIMUM(SFTP_RESUME_RANGE, len - off), 0);
			reqs[n++].idx = next++;
		}
		if (n == 0)
			break;
		status = sftp_check_file_reply(conn, &id, reply);
		for (i = 0; i < n && reqs[i].id != id; i++)
			;
		if (i == n)
			fatal("check-file: reply to unknown request %u", id);
		idx = reqs[i].idx;
		reqs[i] = reqs[--n];
		if (failed != SSH2_FX_OK || ret != 0 || idx >= bad)
			continue;
		if (status != SSH2_FX_OK) {
			failed = status;
			continue;
		}
		if (!reply_hash(reply, &alg)) {
			failed = SSH2_FX_BAD_MESSAGE;
			continue;
		}
		off = idx * SFTP_RESUME_RANGE;
		rlen = MINIMUM(SFTP_RESUME_RANGE, len - off);
		if (sftp_check_range(fd, alg, off, rlen, hash,
		    ssh_digest_bytes(alg), &done) != 0) {
			error("read \"%s\" to hash it: %s",
			    target, strerror(errno));
			ret = -1;
			continue;
		}
		if (done != rlen || memcmp(hash, sshbuf_ptr(reply),
		    ssh_digest_bytes(alg)) != 0) {
			debug_f("range %llu of \"%s\" differs",
			    (unsigned long long)idx, target);
			bad = idx;
		}
	}
	sshbuf_free(reply);
	if (interrupted || ret != 0)
		return -1;
	if (failed == SSH2_FX_OP_UNSUPPORTED) {
		unverified(target);
		return 0;
	}
	if (failed != SSH2_FX_OK) {
		logit("\"%s\": cannot compare it with the source (%s): "
		    "copying it whole", target, fx2txt(failed));
		*goodp = 0;
	} else if (bad == 0) {
		*goodp = 0;
		logit("\"%s\": differs from the source: copying it whole",
		    target);
	} else if (bad < nranges) {
		*goodp = bad * SFTP_RESUME_RANGE;
		logit("\"%s\": differs from the source after %llu bytes: "
		    "copying from there", target,
		    (unsigned long long)*goodp);
	} else
		debug("\"%s\": its %llu bytes match the source",
		    target, (unsigned long long)len);
	return 0;
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
		unverified(path);
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
