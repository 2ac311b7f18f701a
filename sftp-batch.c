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
 * Many files over one SFTP connection at once (sftp-batch.h).
 *
 * Copying a file one at a time costs several round trips that carry no
 * data: the open, the wait for the last write's status or for the read
 * that finds the end of the file, the close.  Here each file goes
 * through the same steps, but the steps of up to max_files files are in
 * flight together, so a round trip is paid once per max_files files
 * rather than several times per file.
 *
 * The engine's rules, whatever order a server applies requests in (it
 * must answer each, but may run them on threads: Go's pkg/sftp runs one
 * file's reads and writes beside its other requests):
 *  1. Only requests that cannot conflict are in flight together for one
 *     file: reads, or writes, of ranges that do not overlap.
 *  2. A request whose effect depends on another's waits for its status:
 *     an upload's size, attributes and close are sent once every write
 *     is answered (finish_upload()); a download closes once every read
 *     is answered (finish_download()).
 *  3. An upload's open does not truncate.  Its data goes first, then its
 *     size: the whole file's, or, for a file left unfinished, what is
 *     known to be its source's (kept_end()).  A server that cannot set a
 *     size gets the file again, its open truncating (restart_upload()).
 *  4. No two files share a handle: a server that hands out one still in
 *     use (Erlang's ssh_sftpd does) gets one file at a time from then on,
 *     and both files of the clash are copied again (handle_clash()).
 *  5. A file is reported whole only when every byte of it was answered
 *     with success; else it is cut back to kept_end() and named.
 *  6. A file split into parts (batch_split()) is written or read by
 *     several handles at once, each a range of it on its own lane: its
 *     size, attributes and close wait for every part's close, and it
 *     is whole only when every range is (kept_end() walks them).
 * Other files keep the pipe full meanwhile.  A download sends its open,
 * then reads up to the size its directory listing gave and one more for
 * the end of the file; the rest of a short reply is always asked for.
 * File data is requested for the oldest file first, so files finish
 * roughly in order.  The progress meter shows the whole batch's bytes
 * and rate, named after the oldest file still open, once more than one
 * is under way (meter_show()).
 *
 * A destination is changed only once its file's data is under way: an
 * upload writes over what is there and sets its size last, and a
 * download opens its local file when the first data comes.  So an
 * interrupt (after which no file starts, the data of those under way
 * stops and each open handle is closed) or a lost connection
 * (sftp_batch_lost()) leaves the files not yet started as they were,
 * and names as failed each one it cut short, as sftp_upload() and
 * sftp_download() name theirs.  Two files of one destination go one
 * after the other, so the later source is the one that stays.
 *
 * Errors are reported as sftp_upload() and sftp_download() report them;
 * a file that fails does not stop the others.
 *
 * The replies of other requests sent while the batch runs (sftp_mkdir(),
 * sftp_readdir() of the next directory) pass through get_msg(), which
 * hands ours to sftp_batch_reply().
 *
 * scp and sftp give one batch several arguments (scp a b host:, a glob
 * of sftp's put or get).  Lines for the user ("Uploading", "Entering"),
 * an argument's failure line, what sftp and scp log meanwhile (batch_log())
 * and each file's errors are queued between the files, so they come in
 * the order a copy of one file at a time gives them.
 *
 * Several lanes (sftp-streams.c) carry a batch against a server whose
 * channel window holds each session back: files are spread over them,
 * and once no file waits to start, the largest range still to send of
 * a file under way is split, its upper half a part of the file on
 * another lane (batch_split()): one big file, or the last ones of a
 * tree, fill every lane.
 *
 * With SFTP_BATCH_RESUME (patch 0010) each file's target part is first
 * compared with its source (sftp-resume.c), and its data goes on from
 * where they stop matching (resume_fill() and what follows it).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/statvfs.h>
#ifdef HAVE_SYS_RESOURCE_H
#include <sys/resource.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "atomicio.h"
#include "misc.h"
#include "sshbuf.h"
#include "ssherr.h"
#include "progressmeter.h"
#include "utf8.h"
#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"
#include "sftp-pipeline.h"
#include "sftp-batch.h"
#include "sftp-streams.h"
#ifdef SFTP_CLIENT_CHECK_FILE
#include "sftp-resume.h"	/* with patch 0010 only */
#endif

extern volatile sig_atomic_t interrupted;
extern int showprogress;

/*
 * A file's states, in the order it goes through them (some skip a few),
 * and what moves it on:
 *   QUEUED    not started; batch_fill() starts it when there is room.
 *   STATING   a named download: its stat sent; -> OPENING (its open).
 *   SIZING    a resumed upload: its target's stat sent; -> CHECKING.
 *   CHECKING  resumed: the hashes of its target's part asked
 *             (sftp-resume.c); a download's handle is open, and with a
 *             tail its data flows; -> OPENING (an upload) or DATA.
 *   OPENING   its open sent (a verified resumed upload's gate with it,
 *             send_gate_open()); -> DATA on the handle.
 *   DATA      reads or writes under way; -> CLOSING once every one is
 *             answered and none is wanted (finish_upload(),
 *             finish_download()).
 *   CLOSING   its close sent; -> DONE once every reply is in, or OPENING
 *             again for an upload whose size the server cannot set.
 *   DONE      reported; reaped once first in line (batch_reap()).
 *
 * States only move on, but for two: CLOSING -> OPENING (above) and
 * DATA -> CHECKING (a resumed download compares once its handle is
 * open).  A failure moves a file to CLOSING if it has a handle, else to
 * DONE.  xfer_enter() checks each move.
 *
 * What each state allows of a file that is not clashed (xfer_assert()
 * checks it after every reply):
 *             QUEUED STATING SIZING CHECKING OPENING DATA CLOSING DONE
 *   lane      -      yes     yes    yes      yes     yes  yes     yes
 *   handle    -      -       -      dl       -       yes  yes     any
 *   fd        -      -       yes    any      any     any  any     -
 *   nreqs     0      0       0      tail     0       any  0       0
 *   asked_all -      -       -      any      refused any  any     any
 *   res.cmp   -      -       -      yes      any     any  any     any
 *   dl.at_end -      -       -      any      -       any  any     any
 *   up.reopen -      -       -      -        -       -    any     any
 *   res.gate  -      -       -      -        any     any  refused any
 *   close_id  -      -       -      -        -       -    yes     any
 * ("-": not set; "dl": a download's only; "tail": with res.tail only;
 * "refused": with res.gate -1 only.)  A part (batch_split(): parent set)
 * is OPENING, DATA, CLOSING or DONE, has no fd (its file's is used) and
 * nothing of a resumed file's; its file has nparts set and stays in
 * DATA until every part is DONE, is reaped with them, and keeps what is
 * the whole file's (fd, size, failed, cut_short, dst_changed, out).
 * Ranges chain in the order of their offsets (next_part), each starting
 * where the last ends; only the last ends at RANGE_EOF.  In every
 * state: no reads or writes while res.gate is set; res.unchecked and
 * res.tail_sent only with res.tail, res.tail only with a part, the
 * range to copy again inside the part; the handle exactly while
 * opened; cut_short only with dst_changed and failed.  A clashed file
 * (handle_clash()) keeps what it had while its requests end.  A note is
 * QUEUED or DONE, with nothing else set.
 */
enum xfer_state {
	XFER_QUEUED = 0,
	XFER_STATING,
	XFER_SIZING,
	XFER_CHECKING,
	XFER_OPENING,
	XFER_DATA,
	XFER_CLOSING,
	XFER_DONE
};

struct xfer;

/* A file or directory the user named (sftp_batch_arg()). */
struct xarg {
	char *failmsg;		/* logged once its files are in, if any failed */
	int failed;
	TAILQ_ENTRY(xarg) tq;
};
TAILQ_HEAD(xargs, xarg);

/* Notes: entries of the queue that are not files (struct xnote). */
#define NOTE_SAY	1	/* print its text when its turn comes */
#define NOTE_END	2	/* the end of an argument: its failure line */
#define NOTE_LOG	3	/* log its text when its turn comes */

/* How the meter shows a file (meter_show()). */
#define METER_OWN	1	/* a meter of its own, as stock's */
#define METER_NAMED	2	/* the whole batch's meter names it */

/*
 * The progress meter of a batch (meter_show(), meter_stop()); only ever
 * onwards, but for WHOLE_ON <-> WHOLE_OFF.  States:
 * METER_BY_FILE	each file its own (METER_OWN), one at a time; no
 *			file METER_NAMED
 * METER_WHOLE_OFF	the whole batch's, not on the terminal now (before
 *			its first file, after a line of another's)
 * METER_WHOLE_ON	the whole batch's, started (start_progress_meter()
 *			of meter_label and &meter.done), named after the
 *			oldest file still open
 */
enum batch_meter { METER_BY_FILE = 0, METER_WHOLE_OFF, METER_WHOLE_ON };

/*
 * What the whole batch's meter is named: progressmeter.c keeps the
 * pointer, so it is never freed (one meter runs at a time).
 */
static char meter_label[256];

/* Where the last range of a file ends: the end of the file. */
#define RANGE_EOF	UINT64_MAX

/* What an upload's FSETSTAT of its size is for (finish_upload()). */
#define TRUNC_SIZE	1	/* the whole file's size */
#define TRUNC_TRIM	2	/* cut an unfinished file back */

/* A request in flight. */
struct xreq {
	u_int id;		/* unique on its lane */
	uint64_t sent_us;	/* now_us() when it was sent */
	u_char type;		/* SSH2_FXP_* */
	struct xfer *xfer;
	struct lane *lane;	/* the stream it went on */
	uint64_t offset;	/* reads and writes */
	size_t len;
	size_t cost;		/* what it counts in data_bytes */
	int truncate;		/* an upload's final size (TRUNC_*), or 0 */
	int gate;		/* a resumed upload's appending open, or
				   its close (send_gate_open()) */
	int redo;		/* a read of a resumed file's range again */
	TAILQ_ENTRY(xreq) tq;
};
TAILQ_HEAD(xreqs, xreq);

/*
 * A stream: one SFTP session of the batch's (sftp-streams.c opens all
 * but the first).  A file goes on one lane from its start to its end:
 * its handle is that session's.  Lane 0 is the connection the batch was
 * made for: sftp-client.c's own requests (listings, mkdir) go there,
 * and its loss ends the copy as it ends stock's; another lane's loss
 * copies its files again on the others (lane_drop()).  What is sent
 * on a lane is queued in out, and written as the lane takes it
 * (lane_flush()): one lane whose peer's window is shut does not hold
 * the others back.  Lane 0's queue is empty whenever sftp-client.c may
 * send on that connection itself (batch_leave()).
 */
struct lane {
	u_int n;		/* 0: the batch's own connection */
	struct sftp_conn *conn;
	int fd_in, fd_out;
	struct sshbuf *out;	/* sent, not yet written */
	struct sshbuf *in;	/* read, not yet a whole reply (not lane 0) */
	struct sftp_pipe *pipe;
	struct xreqs reqs;	/* in flight, in the order sent */
	uint64_t data_bytes;	/* what their reads and writes carry */
	u_int nfiles;		/* files on it, not done */
	int lost;		/* its session ended (not lane 0) */
};

/* A line held until the files before its own are done (xfer_msg()). */
struct xmsg {
	LogLevel level;
	char *line;
};

/* A note in the queue between files (note_add(), batch_log()). */
struct xnote {
	int kind;		/* NOTE_* */
	LogLevel level;		/* NOTE_LOG's */
	char *text;		/* NOTE_SAY's line, NOTE_LOG's message */
};

/*
 * An entry of the batch's queues: a file, a note between files (note is
 * set, and nothing else but arg), or a directory to finish (b->dirs: its
 * src, dst, a and mode).
 */
struct xfer {
	struct xnote *note;
	struct xarg *arg;	/* the argument it belongs to, if any */
	char *src, *dst;
	Attrib a;		/* upload: what to set; download: the remote's */
	int named;		/* named by the user, not found in a directory */
	int mode;		/* a directory's final mode, or -1 */

	/* Where it is (the table at enum xfer_state). */
	enum xfer_state state;
	struct lane *lane;	/* the stream it goes on */
	int fd;			/* the local file */
	u_char *handle;
	size_t handle_len;
	int opened;		/* the remote open succeeded */
	u_int open_id;		/* its open's request id */
	u_int close_id;		/* its close's request id, or 0 */

	/* Its data. */
	uint64_t size;		/* local size (upload), listed size (download) */
	uint64_t offset;	/* of the next read or write */
	uint64_t highwater;	/* contiguous end of what was acknowledged */
	uint64_t maxack;	/* highest end acknowledged */
	int reordered;		/* replies came out of order */
	u_int nreqs;		/* reads or writes in flight */
	u_int inflight;		/* requests of any kind in flight */
	int asked_all;		/* no more data to request */
	u_int status;		/* the first error status of a read/write */
	int dst_changed;	/* the destination file was changed */
	int failed;
	int cut_short;		/* left unfinished by an interrupt or a lost
				   connection, with its destination changed */
	int clashed;		/* its handle is another file's too: copied
				   again (handle_clash()), its requests moot */

	/* Its range of the file, and the file's parts (batch_split()). */
	struct xfer *parent;	/* a part: the file it is part of */
	struct xfer *next_part;	/* the range after this one, or NULL */
	u_int nparts;		/* the file's: parts not yet DONE */
	int split;		/* the file's: parts were made of it */
	uint64_t start, end;	/* this range: [start, end); the last one
				   ends at RANGE_EOF */

	/* A download's. */
	struct {
		int stat_needed;	/* no attributes from a listing */
		int probing;		/* a read past the listed size is in
					   flight */
		int seen_zerolen;	/* a read answered with no data */
		int at_end;		/* a read found the end of the file */
		int got_data;		/* data came (sftp_download()'s
					   lmodified) */
		int write_errno;	/* the local write's error */
	} dl;

	/* An upload's. */
	struct {
		int trunc_at_open;	/* its open truncates */
		int reopen;		/* the server cannot set its size: open
					   it again, truncating, once every
					   reply is in (restart_upload()) */
	} up;

	/* A resumed file's (SFTP_BATCH_RESUME). */
	struct {
		uint64_t part;		/* what its target had */
		uint64_t start;		/* where its part stops matching */
		struct sftp_resume *cmp;	/* the comparison */
		int tail;		/* its data past the part flows while
					   the part is compared */
		int unchecked;		/* its part is not compared yet */
		int tail_sent;		/* upload: its tail is all sent */
		uint64_t redo, redo_end;	/* the part's range that
						   differs, to copy again */
		u_int redo_reqs;	/* reads or writes of it in flight */
		int gate;		/* upload: its appending open, the
					   server's leave to resume, in
					   flight (1) or refused (-1); no
					   data meanwhile */
	} res;

	/* What the user sees of it. */
	struct {
		struct xmsg *msgs;	/* lines held until those before are
					   done */
		u_int nmsgs;
		int metered;		/* METER_OWN or METER_NAMED, or 0 */
		off_t progress;		/* bytes done, for the meter (set by
					   progress_set()) */
	} out;

	TAILQ_ENTRY(xfer) tq;
};
TAILQ_HEAD(xfers, xfer);

static struct xfer *xfer_new(struct sftp_batch *, const char *,
    const char *);
static struct xfer *note_new(struct sftp_batch *, int, const char *);

/* A rule of the engine (the comment at the top) that must hold. */
#define XFER_RULE(x, cond, rule) do { \
	if (!(cond)) \
		fatal_f("\"%s\": rule %d broken: %s", (x)->dst, rule, #cond); \
} while (0)
static void batch_step(struct sftp_batch *);
static void meter_stop(struct sftp_batch *, int);
static void lane_drop(struct sftp_batch *, struct lane *);
static struct xfer *whole(struct xfer *);

/* The file's destination, for messages; a note has none. */
static const char *
xfer_name(const struct xfer *x)
{
	return x->dst == NULL ? "" : x->dst;
}

static const char *
xfer_state_name(enum xfer_state state)
{
	static const char *names[] = { "QUEUED", "STATING", "SIZING",
	    "CHECKING", "OPENING", "DATA", "CLOSING", "DONE" };

	return (u_int)state < sizeof(names) / sizeof(*names) ?
	    names[state] : "?";
}

/* The file a range is of: a part's parent, or the file itself. */
static const struct xfer *
whole_c(const struct xfer *x)
{
	return x->parent != NULL ? x->parent : x;
}

/* whole_c(), for a range that is changed. */
static struct xfer *
whole(struct xfer *x)
{
	return (struct xfer *)whole_c(x);
}

/* Whether the file is split into parts. */
static int
xfer_split(const struct xfer *x)
{
	return x->parent != NULL || x->next_part != NULL;
}

/* Where the range's data ends, as far as the file's size is known. */
static uint64_t
range_end(const struct xfer *x)
{
	return MINIMUM(x->end, x->size);
}

/* What the table at enum xfer_state allows, or fatal. */
#define XFER_LEGAL(x, cond) do { \
	if (!(cond)) \
		fatal_f("\"%s\" in state %s: not %s", xfer_name(x), \
		    xfer_state_name((x)->state), #cond); \
} while (0)
#define IN(x, states)	(((1 << (x)->state) & (states)) != 0)
#define S_(name)	(1 << XFER_##name)

/* Moves x to state (the moves the comment at enum xfer_state allows). */
static void
xfer_enter(struct xfer *x, enum xfer_state state)
{
	if (state <= x->state &&
	    !(x->state == XFER_CLOSING && state == XFER_OPENING) &&
	    !(x->state == XFER_DATA && state == XFER_CHECKING))
		fatal_f("\"%s\": %s -> %s", xfer_name(x),
		    xfer_state_name(x->state), xfer_state_name(state));
	debug3_f("\"%s\": %s -> %s", xfer_name(x),
	    xfer_state_name(x->state), xfer_state_name(state));
	x->state = state;
}

/* The table at enum xfer_state, for file x of a download or upload. */
static void
xfer_assert(const struct xfer *x, int download)
{
	if (x->note != NULL) {
		XFER_LEGAL(x, IN(x, S_(QUEUED)|S_(DONE)) &&
		    x->handle == NULL && x->fd == -1 && x->inflight == 0);
		return;
	}
	XFER_LEGAL(x, (x->lane != NULL) == (x->state != XFER_QUEUED));
	XFER_LEGAL(x, x->nreqs <= x->inflight);
	XFER_LEGAL(x, x->highwater <= x->maxack);
	XFER_LEGAL(x, (x->handle != NULL) == (x->opened != 0));
	XFER_LEGAL(x, !x->cut_short || (x->dst_changed && x->failed));
	XFER_LEGAL(x, !x->res.unchecked || x->res.tail);
	XFER_LEGAL(x, !x->res.tail_sent || x->res.tail);
	XFER_LEGAL(x, !x->res.tail || x->res.part != 0);
	XFER_LEGAL(x, x->res.redo <= x->res.redo_end);
	XFER_LEGAL(x, x->res.redo_end == 0 || x->res.redo_end == x->res.part);
	XFER_LEGAL(x, x->res.redo_reqs <= x->nreqs);
	XFER_LEGAL(x, x->res.gate == 0 || x->nreqs == 0);
	XFER_LEGAL(x, x->start <= x->offset || x->state == XFER_QUEUED);
	XFER_LEGAL(x, (x->end == RANGE_EOF) == (x->next_part == NULL));
	XFER_LEGAL(x, x->next_part == NULL ||
	    x->next_part->start == x->end);
	XFER_LEGAL(x, x->parent == NULL || (x->parent->parent == NULL &&
	    x->fd == -1 && x->nparts == 0 && x->res.part == 0 &&
	    IN(x, S_(OPENING)|S_(DATA)|S_(CLOSING)|S_(DONE))));
	if (x->clashed)
		return;
	XFER_LEGAL(x, x->nparts == 0 || x->state == XFER_DATA);
	XFER_LEGAL(x, x->handle == NULL ||
	    IN(x, S_(DATA)|S_(CLOSING)|S_(DONE)) ||
	    (x->state == XFER_CHECKING && download));
	XFER_LEGAL(x, x->handle != NULL || !IN(x, S_(DATA)|S_(CLOSING)));
	XFER_LEGAL(x, x->fd == -1 || !IN(x, S_(QUEUED)|S_(STATING)|S_(DONE)));
	XFER_LEGAL(x, x->fd != -1 || x->state != XFER_SIZING);
	XFER_LEGAL(x, x->nreqs == 0 || x->state == XFER_DATA ||
	    (x->state == XFER_CHECKING && x->res.tail));
	XFER_LEGAL(x, !x->asked_all ||
	    !IN(x, S_(QUEUED)|S_(STATING)|S_(SIZING)|S_(OPENING)) ||
	    (x->state == XFER_OPENING && x->res.gate == -1));
	XFER_LEGAL(x, x->res.cmp == NULL ||
	    !IN(x, S_(QUEUED)|S_(STATING)|S_(SIZING)));
	XFER_LEGAL(x, x->res.cmp != NULL || x->state != XFER_CHECKING);
	XFER_LEGAL(x, !x->dl.at_end ||
	    !IN(x, S_(QUEUED)|S_(STATING)|S_(SIZING)|S_(OPENING)));
	XFER_LEGAL(x, !x->up.reopen || IN(x, S_(CLOSING)|S_(DONE)));
	XFER_LEGAL(x, x->res.gate == 0 ||
	    IN(x, S_(OPENING)|S_(DATA)|S_(DONE)) ||
	    (x->state == XFER_CLOSING && x->res.gate == -1));
	XFER_LEGAL(x, (x->close_id != 0) == (x->state == XFER_CLOSING) ||
	    x->state == XFER_DONE);
}

struct sftp_batch {
	struct sftp_conn *conn;
	int flags;
	struct sftp_xfer_params params;
	u_int max_files;
	struct xfers queued;	/* in the order they were added */
	struct xfers active;	/* started, in the same order */
	struct xfers dirs;	/* to finish once their files are in */
	struct xargs args;	/* the arguments so far */
	struct xarg *arg;	/* the current one, or NULL */
	u_int nqueued, nactive;
	u_int nfiles, peak;	/* files added; most open at once */
	struct lane *lanes[SFTP_STREAMS_MAX];
	u_int nlanes;
	u_int max_lanes;	/* what sftp-streams.c allows */
	u_int nreqs;		/* in flight on every lane */
	int grow;		/* more lanes may open: files wait for one
				   (lane_pick()) */
	u_int to_open;		/* lanes to open before judging again */
	u_int judged_no;	/* judgements that more would not help */
	u_int judged_low;	/* rounds judged too slow to tell */
	uint64_t split_after;	/* now_us() before which batch_split()
				   does not look */
	uint64_t rtt_us;	/* the quickest reply, sent to answered */
	uint64_t rate_start;	/* now_us() when the rate's span began */
	uint64_t rate_bytes;	/* data answered since */
	uint64_t last_rate;	/* bytes/s of the last round, or 0 */
	struct sshbuf *msg;	/* what we send */
	struct sshbuf *reply;	/* what we read ourselves */
	u_char *data;		/* one upload request's data */
	int trunc_open;		/* upload: truncate at open, not later */
	int one_file;		/* the server reused a handle in use: one
				   file at a time, as stock copies */
	int foreign;		/* in sftp-client.c's wait for its reply:
				   a listing's handle may be open */
	sshsig_t sigpipe;	/* the handler before the batch */
	int direct;		/* batch_log() logs at once */
	int failed;

	/*
	 * The meter of the whole batch (meter_show()): the sum of every
	 * file's bytes and size, named after the oldest file (meter_label).
	 */
	struct {
		enum batch_meter state;
		off_t done;	/* the sum of every file's out.progress */
		off_t size;	/* of every file started */
	} meter;
};

static int
batch_download(const struct sftp_batch *b)
{
	return (b->flags & SFTP_BATCH_DOWNLOAD) != 0;
}

static u_int
batch_buflen(const struct sftp_batch *b)
{
	return batch_download(b) ? b->params.download_buflen :
	    b->params.upload_buflen;
}

/*
 * What sftp and scp log while files are in flight (a directory they
 * cannot read, a file they skip) waits for the lines and files queued
 * before it, as it would in a copy of one file at a time; what is more
 * verbose than logit(), and fatal(), goes out at once.
 */
static void
batch_log(LogLevel level, int forced, const char *msg, void *ctx)
{
	struct sftp_batch *b = ctx;
	struct xfer *x;

	/* Here log.c has no handler: sshlogdirect() logs at once. */
	if (b->direct || level == SYSLOG_LEVEL_FATAL ||
	    level > SYSLOG_LEVEL_INFO ||
	    (TAILQ_EMPTY(&b->active) && TAILQ_EMPTY(&b->queued))) {
		sshlogdirect(level, forced, "%s", msg);
		return;
	}
	x = note_new(b, NOTE_LOG, msg);
	x->note->level = level;
	TAILQ_INSERT_TAIL(&b->queued, x, tq);
}

/* The batch's own lines: logged now, past batch_log()'s queue. */
static void
batch_logdirect(struct sftp_batch *b, LogLevel level, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	xvasprintf(&line, fmt, ap);
	va_end(ap);
	b->direct = 1;
	sshlogdirect(level, 0, "%s", line);
	b->direct = 0;
	free(line);
}

/* Files at once: what the server allows, and our own descriptors. */
static u_int
batch_max_files(const struct sftp_xfer_params *p)
{
	u_int n = SFTP_BATCH_MAX_FILES;
#if defined(HAVE_GETRLIMIT) && defined(RLIMIT_NOFILE)
	struct rlimit rlim;

	if (getrlimit(RLIMIT_NOFILE, &rlim) != -1 &&
	    rlim.rlim_cur != RLIM_INFINITY && rlim.rlim_cur < 2 * n + 64)
		n = rlim.rlim_cur > 96 ? (rlim.rlim_cur - 64) / 2 : 16;
#endif
	if (!p->has_limits)
		n = MINIMUM(n, SFTP_BATCH_SAFE_FILES);
	else if (p->open_handles != 0)
		n = MINIMUM(n, MAXIMUM(p->open_handles / 2, 1));
	return n;
}

/* What a lane may hold unwritten before its files wait to send more. */
#define LANE_OUT_MAX	(1024 * 1024)

/* Under a rate limit, the fewest requests in flight (stock's count). */
#define LIMIT_MIN_REQS	64

static struct lane *
lane_new(struct sftp_batch *b, struct sftp_conn *conn, u_int n)
{
	struct lane *l;

	l = xcalloc(1, sizeof(*l));
	l->n = n;
	l->conn = conn;
	sftp_conn_fds(conn, &l->fd_in, &l->fd_out);
	if ((l->out = sshbuf_new()) == NULL || (l->in = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	TAILQ_INIT(&l->reqs);
	l->pipe = sftp_pipe_new(b->params.num_requests,
	    b->params.fixed_requests ? 0 : batch_buflen(b));
	/* As sftp_upload(): the window, not the pipe, holds uploads back. */
	if (!batch_download(b))
		sftp_pipe_full(l->pipe);
	/* sftp-client.c's own reads and writes wait out EAGAIN (atomicio). */
	if (set_nonblock(l->fd_out) == -1 ||
	    (n != 0 && set_nonblock(l->fd_in) == -1))
		fatal_f("set_nonblock: %s", strerror(errno));
	b->lanes[b->nlanes++] = l;
	return l;
}

static void
lane_free(struct lane *l)
{
	struct xreq *q;

	if (l == NULL)
		return;
	while ((q = TAILQ_FIRST(&l->reqs)) != NULL) {
		TAILQ_REMOVE(&l->reqs, q, tq);
		free(q);
	}
	if (!l->lost) {
		unset_nonblock(l->fd_out);
		if (l->n != 0)
			unset_nonblock(l->fd_in);
	}
	sftp_pipe_free(l->pipe);
	sshbuf_free(l->out);
	sshbuf_free(l->in);
	free(l);
}

/* The lane's session ended; lane_drop() copies its files again. */
static void
lane_broken(struct sftp_batch *b, struct lane *l, const char *what)
{
	if (l->n == 0) {
		/* As sftp-client.c's send_msg() and get_msg() end. */
		sftp_batch_lost(b);
		fatal("%s", what);
	}
	if (l->lost)
		return;
	debug_f("stream %u: %s", l->n, what);
	l->lost = 1;
	sshbuf_reset(l->out);
	unset_nonblock(l->fd_out);
}

/*
 * Write what the lane takes now; with block, all of it.  0, or -1 if
 * the lane's session ended.
 */
static int
lane_flush(struct sftp_batch *b, struct lane *l, int block)
{
	struct pollfd pfd;
	ssize_t n;
	char *what;

	while (!l->lost && sshbuf_len(l->out) > 0) {
		n = write(l->fd_out, sshbuf_ptr(l->out), sshbuf_len(l->out));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!block)
				return 0;
			pfd.fd = l->fd_out;
			pfd.events = POLLOUT;
			(void)poll(&pfd, 1, -1);
			continue;
		}
		if (n <= 0) {
			xasprintf(&what, "Couldn't send packet: %s",
			    n == 0 ? "EOF" : strerror(errno));
			lane_broken(b, l, what);
			free(what);
			return -1;
		}
		if (sshbuf_consume(l->out, n) != 0)
			fatal_f("sshbuf_consume failed");
	}
	return l->lost ? -1 : 0;
}

/* Queue b->msg on the lane, and write what it takes now. */
static void
lane_send(struct sftp_batch *b, struct lane *l)
{
	u_char mlen[4];
	struct iovec iov[2];
	ssize_t n;
	int r;

	if (l->lost) {
		sshbuf_reset(b->msg);
		return;
	}
	/* A rate limit (-l) is sftp-client.c's, on lane 0 only. */
	if (l->n == 0 && b->params.limit_bps != 0) {
		(void)lane_flush(b, l, 1);
		sftp_send_msg(l->conn, b->msg);
		return;
	}
	if (sshbuf_len(b->msg) > SFTP_MAX_MSG_LENGTH)
		fatal("Outbound message too long %zu", sshbuf_len(b->msg));
	/* Nothing queued: written at once, and only the rest queued. */
	if (sshbuf_len(l->out) == 0) {
		put_u32(mlen, sshbuf_len(b->msg));
		iov[0].iov_base = mlen;
		iov[0].iov_len = sizeof(mlen);
		iov[1].iov_base = (u_char *)sshbuf_ptr(b->msg);
		iov[1].iov_len = sshbuf_len(b->msg);
		while ((n = writev(l->fd_out, iov, 2)) == -1 && errno == EINTR)
			;
		if (n == -1)
			n = 0;	/* an error: lane_flush() meets it again */
		if ((size_t)n < sizeof(mlen) &&
		    (r = sshbuf_put(l->out, mlen + n, sizeof(mlen) - n)) != 0)
			fatal_fr(r, "queue");
		n = (size_t)n < sizeof(mlen) ? 0 : n - sizeof(mlen);
		if ((r = sshbuf_put(l->out, sshbuf_ptr(b->msg) + n,
		    sshbuf_len(b->msg) - n)) != 0)
			fatal_fr(r, "queue");
	} else if ((r = sshbuf_put_stringb(l->out, b->msg)) != 0)
		fatal_fr(r, "queue");
	sshbuf_reset(b->msg);
	(void)lane_flush(b, l, 0);
}

/*
 * Control goes back to sftp-client.c, which may send on the batch's
 * own connection: what is queued there goes out first.
 */
static void
batch_leave(struct sftp_batch *b)
{
	(void)lane_flush(b, b->lanes[0], 1);
}

/* Whether a lane takes new files. */
static int
lane_open(const struct lane *l)
{
	return !l->lost;
}

/*
 * Whether a lane has work enough for now: what it was given backs up on
 * this side (its peer's window is shut), or it has a file with at least
 * LANES_BIG still to send.  A new file then goes to another lane.
 */
#define LANES_BIG	(1024 * 1024)
static int
lane_full(const struct sftp_batch *b, const struct lane *l)
{
	const struct xfer *x;

	if (sshbuf_len(l->out) >= LANE_OUT_MAX / 2)
		return 1;
	TAILQ_FOREACH(x, &b->active, tq) {
		if (x->lane == l && !x->clashed && x->state != XFER_DONE &&
		    !x->asked_all && range_end(x) >= x->offset + LANES_BIG)
			return 1;
	}
	return 0;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	monotime_ts(&ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * By default (sftp_streams_auto()) another stream opens only while the
 * lanes look held by the peer's channel window.  The rate is taken over
 * rounds of a round trip (and LANES_ROUND_MIN); once a round is no
 * faster than the last by an eighth (TCP's start is over), each lane's
 * share of it, times the round trip, is judged: about what a stock
 * server's window holds (2 MiB), not the much more of a long path that
 * the data fill, nor the little of a loopback copy or a busy CPU.  A
 * round of TCP's start can look like its end (its ACKs come in bursts):
 * less than LANES_BDP_LOW is taken as "not yet" LANES_JUDGE_LOW times
 * before it counts as no (a path slower than one window).
 * 1 yes, 0 no, -1 not yet.
 */
#define LANES_ROUND_MIN	(20 * 1000)		/* us */
#define LANES_BDP_LOW	(512 * 1024)
#define LANES_BDP_HIGH	(5 * 512 * 1024)	/* 2.5 MiB */
#define LANES_JUDGE_MAX	3
#define LANES_JUDGE_LOW	8
#define LANES_WAIT_RTT	(10 * 1000)	/* us: streams start waited for */
#define LANES_RTT_FLOOR	(2 * 1000)	/* us: never window-bound below */
static int
lanes_window_bound(struct sftp_batch *b)
{
	uint64_t now = now_us(), span, rate, bdp;
	u_int i, open = 0;

	if (!sftp_streams_auto())
		return 1;
	if (b->rtt_us == 0 || b->rate_bytes == 0)
		return -1;
	span = now - b->rate_start;
	if (span < MAXIMUM(b->rtt_us, LANES_ROUND_MIN))
		return -1;
	rate = b->rate_bytes * 1000000 / span;
	b->rate_start = now;
	b->rate_bytes = 0;
	if (b->last_rate == 0 || rate > b->last_rate + b->last_rate / 8) {
		b->last_rate = rate;
		return -1;
	}
	b->last_rate = 0;
	for (i = 0; i < b->nlanes; i++)
		open += lane_open(b->lanes[i]);
	bdp = rate * b->rtt_us / 1000000 / open;
	debug_f("%u stream%s: %llu bytes per round trip of %llu us each",
	    open, open == 1 ? "" : "s", (unsigned long long)bdp,
	    (unsigned long long)b->rtt_us);
	/*
	 * Under LANES_RTT_FLOOR a stock window carries over 1 GB/s: what
	 * holds such a copy is not the window (a busy CPU makes loopback's
	 * replies slow enough to look like one).
	 */
	if (b->rtt_us >= LANES_RTT_FLOOR && bdp < LANES_BDP_LOW &&
	    ++b->judged_low < LANES_JUDGE_LOW)
		return -1;
	return b->rtt_us >= LANES_RTT_FLOOR &&
	    bdp >= LANES_BDP_LOW && bdp <= LANES_BDP_HIGH;
}

/* No more streams for this batch; files go on the lanes there are. */
static void
lanes_stop(struct sftp_batch *b, const char *why)
{
	if (!b->grow)
		return;
	b->grow = 0;
	if (b->max_lanes > 1)
		debug("%u stream%s: %s", b->nlanes,
		    b->nlanes == 1 ? "" : "s", why);
}

/*
 * The lane a new file goes on, or NULL if it waits: the open lane with
 * the fewest files of those not full (lane_full()); if every lane is
 * full, a new stream where one may open (lanes_window_bound()), and
 * while that is not yet known, none.  A judgement that more would not
 * be faster is taken again while files go on the lanes there are (one
 * made early in TCP's start can be wrong), LANES_JUDGE_MAX times.  Once
 * no more open (the most allowed, a stream refused, or more not
 * needed), the open lane with the fewest files.
 */
static struct lane *
lane_pick(struct sftp_batch *b)
{
	struct lane *l, *best = NULL, *room = NULL;
	struct sftp_conn *conn;
	u_int i, live = 0;
	int bound, dropping = 0;

	for (i = 0; i < b->nlanes; i++) {
		l = b->lanes[i];
		dropping |= l->lost && l->conn != NULL;
		if (!lane_open(l))
			continue;
		live++;
		if (best == NULL || l->nfiles < best->nfiles ||
		    (l->nfiles == best->nfiles &&
		    l->data_bytes < best->data_bytes))
			best = l;
		if (b->grow && !lane_full(b, l) &&
		    (room == NULL || l->nfiles < room->nfiles))
			room = l;
	}
	if (!b->grow)
		return best;
	if (room != NULL)
		return room;
	if (b->nlanes >= b->max_lanes) {
		lanes_stop(b, "the most allowed");
		return best;
	}
	if (dropping)
		return best;	/* lane_drop() first */
	/*
	 * Judged held by the window: each more adds a window, until the
	 * path is full; all that may open, at once, since each judgement
	 * costs rounds of the round trip.
	 */
	if (b->to_open == 0) {
		if ((bound = lanes_window_bound(b)) == -1)
			return b->judged_no == 0 ? NULL : best;
		if (bound == 0 && ++b->judged_no >= LANES_JUDGE_MAX) {
			lanes_stop(b, "more would not be faster");
			return best;
		}
		if (bound == 0)
			return best;
		b->to_open = b->max_lanes - live;
	}
	/* Not before the round trip is known: it says how to wait. */
	if (b->rtt_us == 0)
		return NULL;
	if (b->nlanes >= SFTP_STREAMS_MAX ||
	    (conn = sftp_streams_get(b->conn, live, b->to_open,
	    b->rtt_us < LANES_WAIT_RTT)) == NULL) {
		/* Under way: the lanes there are go on meanwhile. */
		if (b->nlanes < SFTP_STREAMS_MAX && sftp_streams_opening())
			return NULL;
		lanes_stop(b, "the server opens no more");
		return best;
	}
	b->to_open--;
	l = lane_new(b, conn, b->nlanes);
	debug_f("stream %u open", l->n);
	b->rate_start = now_us();
	b->rate_bytes = 0;
	b->last_rate = 0;
	return l;
}

struct sftp_batch *
sftp_batch_new(struct sftp_conn *conn, int flags)
{
	struct sftp_batch *b;

	b = xcalloc(1, sizeof(*b));
	b->conn = conn;
	b->flags = flags;
	sftp_xfer_params(conn, &b->params);
	b->max_files = batch_max_files(&b->params);
	TAILQ_INIT(&b->queued);
	TAILQ_INIT(&b->active);
	TAILQ_INIT(&b->dirs);
	TAILQ_INIT(&b->args);
	(void)lane_new(b, conn, 0);
	/*
	 * More streams but for verified resume, whose comparison of a
	 * target's part stays on the connection that asked for it, and a
	 * rate limit (-l), which is the connection's.
	 */
	b->max_lanes = (flags & SFTP_BATCH_RESUME) ||
	    b->params.limit_bps != 0 ? 1 : sftp_streams_max();
	b->grow = b->max_lanes > 1;
	if ((b->msg = sshbuf_new()) == NULL ||
	    (b->reply = sshbuf_new()) == NULL)
		fatal_f("sshbuf_new failed");
	if (!batch_download(b))
		b->data = xmalloc(b->params.upload_buflen);
	/*
	 * A write to a lost connection fails with EPIPE, so that the files
	 * it leaves unfinished are named (sftp_batch_lost()).
	 */
	b->sigpipe = ssh_signal(SIGPIPE, SIG_IGN);
#ifdef SFTP_CLIENT_CHECK_FILE
	/* A server that may hash unlisted is asked before any file starts. */
	if (flags & SFTP_BATCH_RESUME)
		(void)sftp_can_check_file(conn, 1);
#endif
	set_log_handler(batch_log, b);
	debug_f("%s, up to %u files at once on up to %u stream%s",
	    batch_download(b) ? "download" : "upload", b->max_files,
	    b->max_lanes, b->max_lanes == 1 ? "" : "s");
	sftp_set_batch(conn, b);
	return b;
}

static void
xfer_free(struct xfer *x)
{
	u_int i;

	if (x == NULL)
		return;
	if (x->fd != -1)
		close(x->fd);
	for (i = 0; i < x->out.nmsgs; i++)
		free(x->out.msgs[i].line);
	free(x->out.msgs);
#ifdef SFTP_CLIENT_CHECK_FILE
	sftp_resume_free(x->res.cmp);
#endif
	if (x->note != NULL)
		free(x->note->text);
	free(x->note);
	free(x->src);
	free(x->dst);
	free(x->handle);
	free(x);
}

/*
 * A line about a file: logged now if every file and line before it is
 * done, else once they are (xfer_flush()), so that lines come in the
 * order a copy of one file at a time gives them.  Takes line.
 */
static void
xfer_msg(struct sftp_batch *b, struct xfer *x, LogLevel level, char *line)
{
	x = whole(x);		/* a part's lines are its file's */
	if (x == TAILQ_FIRST(&b->active)) {
		batch_logdirect(b, level, "%s", line);
		free(line);
		return;
	}
	x->out.msgs = xrecallocarray(x->out.msgs, x->out.nmsgs, x->out.nmsgs + 1,
	    sizeof(*x->out.msgs));
	x->out.msgs[x->out.nmsgs].level = level;
	x->out.msgs[x->out.nmsgs++].line = line;
}

/* An error of a file, as xfer_msg(). */
static void
xfer_error(struct sftp_batch *b, struct xfer *x, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	xvasprintf(&line, fmt, ap);
	va_end(ap);
	xfer_msg(b, x, SYSLOG_LEVEL_ERROR, line);
}

/* The file is first in line: log its held lines. */
static void
xfer_flush(struct sftp_batch *b, struct xfer *x)
{
	u_int i;

	for (i = 0; i < x->out.nmsgs; i++) {
		batch_logdirect(b, x->out.msgs[i].level, "%s", x->out.msgs[i].line);
		free(x->out.msgs[i].line);
	}
	free(x->out.msgs);
	x->out.msgs = NULL;
	x->out.nmsgs = 0;
}

void
sftp_batch_free(struct sftp_batch *b)
{
	struct xfer *x;
	struct xarg *arg;
	u_int i;

	if (b == NULL)
		return;
	sftp_set_batch(b->conn, NULL);
	ssh_signal(SIGPIPE, b->sigpipe);
	set_log_handler(NULL, NULL);
	while ((x = TAILQ_FIRST(&b->queued)) != NULL) {
		TAILQ_REMOVE(&b->queued, x, tq);
		xfer_free(x);
	}
	while ((x = TAILQ_FIRST(&b->active)) != NULL) {
		TAILQ_REMOVE(&b->active, x, tq);
		xfer_free(x);
	}
	while ((x = TAILQ_FIRST(&b->dirs)) != NULL) {
		TAILQ_REMOVE(&b->dirs, x, tq);
		xfer_free(x);
	}
	for (i = 0; i < b->nlanes; i++)
		lane_free(b->lanes[i]);
	while ((arg = TAILQ_FIRST(&b->args)) != NULL) {
		TAILQ_REMOVE(&b->args, arg, tq);
		free(arg->failmsg);
		free(arg);
	}
	meter_stop(b, 0);
	sshbuf_free(b->msg);
	sshbuf_free(b->reply);
	free(b->data);
	free(b);
}

/*
 * The bytes of x done are v now (its out.progress): the whole batch's
 * meter counts them too, but for a file copied again (xfer_redo()):
 * its copy again counts.
 */
static void
progress_set(struct sftp_batch *b, struct xfer *x, off_t v)
{
	if (!x->clashed)
		b->meter.done += v - x->out.progress;
	x->out.progress = v;
}

/* x's size is known: the whole batch's meter counts it. */
static void
size_set(struct sftp_batch *b, struct xfer *x, uint64_t size)
{
	b->meter.size += (off_t)size - (off_t)x->size;
	x->size = size;
}

/* A request with the given id, sent or about to be. */
static struct xreq *
req_add(struct sftp_batch *b, struct xfer *x, u_char type, u_int id,
    uint64_t offset, size_t len)
{
	struct xreq *q;

	q = xcalloc(1, sizeof(*q));
	q->id = id;
	q->type = type;
	q->xfer = x;
	q->lane = x->lane;
	q->sent_us = now_us();
	q->offset = offset;
	q->len = len;
	TAILQ_INSERT_TAIL(&q->lane->reqs, q, tq);
	b->nreqs++;
	x->inflight++;
	if (type == SSH2_FXP_READ || type == SSH2_FXP_WRITE) {
		x->nreqs++;
		/*
		 * A read past the listed size is expected to find nothing.
		 * A count the user gave counts requests.
		 */
		if (b->params.fixed_requests)
			q->cost = 1;
		else if (type == SSH2_FXP_READ && offset >= x->size)
			q->cost = 0;
		else
			q->cost = len;
		q->lane->data_bytes += q->cost;
	}
	return q;
}

static struct xreq *
req_new(struct sftp_batch *b, struct xfer *x, u_char type, uint64_t offset,
    size_t len)
{
	return req_add(b, x, type, sftp_next_id(x->lane->conn), offset, len);
}

static void
req_done(struct sftp_batch *b, struct xreq *q)
{
	TAILQ_REMOVE(&q->lane->reqs, q, tq);
	b->nreqs--;
	q->xfer->inflight--;
	if (q->redo)
		q->xfer->res.redo_reqs--;
	if (q->type == SSH2_FXP_READ || q->type == SSH2_FXP_WRITE) {
		q->xfer->nreqs--;
		q->lane->data_bytes -= q->cost;
	}
	free(q);
}

/* Replies come mostly in order: look from the oldest request. */
static struct xreq *
req_find(struct lane *l, u_int id)
{
	struct xreq *q;

	TAILQ_FOREACH(q, &l->reqs, tq) {
		if (q->id == id)
			return q;
	}
	return NULL;
}

/* A request on handle h of x's (not always x->handle). */
static struct xreq *
send_on_handle(struct sftp_batch *b, struct xfer *x, u_char type,
    const u_char *h, size_t hlen, const Attrib *a)
{
	struct xreq *q = req_new(b, x, type, 0, 0);
	int r;

	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, type)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_string(b->msg, h, hlen)) != 0 ||
	    (a != NULL && (r = encode_attrib(b->msg, a)) != 0))
		fatal_fr(r, "compose");
	lane_send(b, x->lane);
	debug3("Sent message %u I:%u for \"%s\"", type, q->id, x->dst);
	return q;
}

static struct xreq *
send_handle_request(struct sftp_batch *b, struct xfer *x, u_char type,
    const Attrib *a)
{
	return send_on_handle(b, x, type, x->handle, x->handle_len, a);
}

static struct xreq *
send_path_setstat(struct sftp_batch *b, struct xfer *x, const Attrib *a)
{
	struct xreq *q = req_new(b, x, SSH2_FXP_SETSTAT, 0, 0);
	int r;

	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, SSH2_FXP_SETSTAT)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_cstring(b->msg, x->dst)) != 0 ||
	    (r = encode_attrib(b->msg, a)) != 0)
		fatal_fr(r, "compose");
	lane_send(b, x->lane);
	return q;
}

static void
send_close(struct sftp_batch *b, struct xfer *x)
{
	x->close_id = send_handle_request(b, x, SSH2_FXP_CLOSE, NULL)->id;
	xfer_enter(x, XFER_CLOSING);
}

static void
xfer_mark_failed(struct sftp_batch *b, struct xfer *x)
{
	x->failed = 1;
	x = whole(x);
	x->failed = 1;
	b->failed = 1;
	if (x->arg != NULL)
		x->arg->failed = 1;
}

/* The file's failure line, as upload_dir/download_dir give it. */
static char *
xfer_failed_line(struct sftp_batch *b, struct xfer *x)
{
	char *line;

	if (batch_download(b))
		xasprintf(&line, "Download of file %s to %s failed",
		    x->src, x->dst);
	else
		xasprintf(&line, "upload \"%s\" to \"%s\" failed",
		    x->src, x->dst);
	return line;
}

static void
xfer_say_failed(struct sftp_batch *b, struct xfer *x)
{
	xfer_msg(b, x, SYSLOG_LEVEL_ERROR, xfer_failed_line(b, x));
}

/*
 * The file is finished; report it as sftp_upload/sftp_download do, and a
 * file of a directory as upload_dir/download_dir do.
 */
static void
xfer_done(struct sftp_batch *b, struct xfer *x)
{
	xfer_enter(x, XFER_DONE);
	if (x->lane != NULL)
		x->lane->nfiles--;
	if (x->parent != NULL) {
		x->parent->nparts--;
		return;		/* its file reports */
	}
	if (x->fd != -1 && close(x->fd) == -1) {
		xfer_error(b, x, "close local \"%s\": %s",
		    batch_download(b) ? x->dst : x->src, strerror(errno));
		xfer_mark_failed(b, x);
	}
	x->fd = -1;
	if (!x->clashed && (x->cut_short || (x->failed && !x->named)))
		xfer_say_failed(b, x);
}

/*
 * An interrupt or a lost connection leaves the file unfinished: if its
 * destination was changed, it is named as failed.
 */
static void
xfer_cut(struct sftp_batch *b, struct xfer *x)
{
	x = whole(x);
	if (!x->dst_changed || x->cut_short)
		return;
	x->cut_short = 1;
	xfer_mark_failed(b, x);
}

/* Send the open of the remote file (tag "dest" or "remote", as send_open). */
static struct xreq *
send_open_request(struct sftp_batch *b, struct xfer *x, const char *tag,
    const char *path, u_int openmode, const Attrib *a)
{
	struct xreq *q = req_new(b, x, SSH2_FXP_OPEN, 0, 0);
	int r;

	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, SSH2_FXP_OPEN)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_cstring(b->msg, path)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, openmode)) != 0 ||
	    (r = encode_attrib(b->msg, a)) != 0)
		fatal_fr(r, "compose %s open", tag);
	lane_send(b, x->lane);
	debug3("Sent %s message SSH2_FXP_OPEN I:%u P:%s M:0x%04x",
	    tag, q->id, path, openmode);
	x->open_id = q->id;
	x->close_id = 0;
	/* A verified resumed upload's gate and own open go together. */
	if (x->state != XFER_OPENING || x->res.gate != 1)
		xfer_enter(x, XFER_OPENING);
	return q;
}

/*
 * Upload: the remote open.  It does not truncate: an open in flight
 * when the copy is interrupted must leave the file as it was, and its
 * size is set once its data is in (finish_upload()), unless the server
 * could not do that before: then the open truncates.
 */
static void
send_upload_open(struct sftp_batch *b, struct xfer *x)
{
	u_int openmode = SSH2_FXF_WRITE|SSH2_FXF_CREAT;

	if ((b->flags & SFTP_BATCH_INPLACE) == 0 && b->trunc_open &&
	    x->res.part == 0) {
		openmode |= SSH2_FXF_TRUNC;
		x->dst_changed = x->up.trunc_at_open = 1;
	}
#ifdef SFTP_CLIENT_CHECK_FILE
	/*
	 * Resumed from its size alone, as stock resumes: its open appends,
	 * so that servers that truncate other opens (Erlang's) or refuse
	 * appends by policy (ProFTPD's AllowStoreRestart) treat it as they
	 * treat stock's.  A verified resume may write inside the part.
	 */
	batch_leave(b);		/* sftp-client.c may send a probe */
	if (x->res.part != 0 && !sftp_can_check_file(b->conn, 1))
		openmode |= SSH2_FXF_APPEND;
#endif
	send_open_request(b, x, "dest", x->dst, openmode, &x->a);
}

/*
 * A verified resumed upload writes by offset, inside its part too, so
 * its own open cannot append.  An appending open goes with it, closed as
 * soon as it is granted, and no data goes before: a server whose policy
 * refuses resumes refuses it (ProFTPD's AllowStoreRestart off), as it
 * refuses stock's reput, and the file is left as it is.
 */
static void
send_gate_open(struct sftp_batch *b, struct xfer *x)
{
	u_int open_id;

	x->res.gate = 1;
	send_open_request(b, x, "dest", x->dst,
	    SSH2_FXF_WRITE|SSH2_FXF_APPEND, &x->a)->gate = 1;
	open_id = x->open_id;
	send_upload_open(b, x);
	x->open_id = open_id;	/* the earlier: for handle_owner() */
}

/* The gate's handle: closed at once; the file's data may go. */
static void
got_gate(struct sftp_batch *b, struct xfer *x, struct sshbuf *msg)
{
	u_char *h;
	size_t hlen;
	int r;

	if ((r = sshbuf_get_string(msg, &h, &hlen)) != 0)
		fatal_fr(r, "parse handle");
	send_on_handle(b, x, SSH2_FXP_CLOSE, h, hlen, NULL)->gate = 1;
	free(h);
	if (x->res.gate == 1)
		x->res.gate = 0;
}

/*
 * Download of a file the user named: its attributes first, as a
 * listing's; a resumed upload: its target's.
 */
static void
send_stat(struct sftp_batch *b, struct xfer *x, const char *path,
    enum xfer_state state)
{
	u_char type = sftp_proto_version(b->conn) == 0 ?
	    SSH2_FXP_STAT_VERSION_0 : SSH2_FXP_STAT;
	struct xreq *q = req_new(b, x, type, 0, 0);
	int r;

	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, type)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_cstring(b->msg, path)) != 0)
		fatal_fr(r, "compose");
	lane_send(b, x->lane);
	debug2("Sending SSH2_FXP_STAT \"%s\"", path);
	xfer_enter(x, state);
}

/* Upload: open the local file and send the remote open. */
static void
start_upload(struct sftp_batch *b, struct xfer *x)
{
	struct stat sb;

	if ((x->fd = open(x->src, O_RDONLY)) == -1) {
		xfer_error(b, x, "open local \"%s\": %s", x->src,
		    strerror(errno));
		goto fail;
	}
	if (fstat(x->fd, &sb) == -1) {
		xfer_error(b, x, "fstat local \"%s\": %s", x->src,
		    strerror(errno));
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		xfer_error(b, x, "local \"%s\" is not a regular file", x->src);
		goto fail;
	}
	stat_to_attrib(&sb, &x->a);
	x->a.flags &= ~SSH2_FILEXFER_ATTR_SIZE;
	x->a.flags &= ~SSH2_FILEXFER_ATTR_UIDGID;
	x->a.perm &= 0777;
	if ((b->flags & SFTP_BATCH_PRESERVE) == 0)
		x->a.flags &= ~SSH2_FILEXFER_ATTR_ACMODTIME;
	size_set(b, x, sb.st_size);

	if (b->flags & SFTP_BATCH_RESUME) {
		/* Where the target goes on from: its size first. */
		send_stat(b, x, x->dst, XFER_SIZING);
		return;
	}
	send_upload_open(b, x);
	return;
 fail:
	xfer_mark_failed(b, x);
	xfer_done(b, x);
}

/* Download: send the remote open; the local file opens on its reply. */
static void
start_download(struct sftp_batch *b, struct xfer *x)
{
	Attrib junk;

	if (x->dl.stat_needed) {
		send_stat(b, x, x->src, XFER_STATING);
		return;
	}
	if ((x->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) &&
	    !S_ISREG(x->a.perm)) {
		xfer_error(b, x, "download %s: not a regular file", x->src);
		xfer_mark_failed(b, x);
		xfer_done(b, x);
		return;
	}
	size_set(b, x, (x->a.flags & SSH2_FILEXFER_ATTR_SIZE) ? x->a.size : 0);

	attrib_clear(&junk);	/* send empty attributes */
	send_open_request(b, x, "remote", x->src, SSH2_FXF_READ, &junk);
}

/* Resumed: whether a range of its part is still to be copied again. */
static int
redo_wanted(const struct xfer *x)
{
	return x->res.redo < x->res.redo_end && !interrupted &&
	    x->status == SSH2_FX_OK && x->dl.write_errno == 0;
}

/*
 * Whether range r of a split file is all copied: every read or write of
 * it answered with success, up to its end, or for the last, up to the
 * end of the file.
 */
static int
range_whole(const struct sftp_batch *b, const struct xfer *r)
{
	const struct xfer *w = whole_c(r);

	if (r->clashed || r->nreqs != 0 || !r->asked_all ||
	    r->status != SSH2_FX_OK || w->failed || w->cut_short)
		return 0;
	if (r->end != RANGE_EOF)
		return r->offset >= r->end;
	return batch_download(b) ? r->dl.at_end : 1;
}

/* Whether every range of a split file is all copied. */
static int
ranges_whole(const struct sftp_batch *b, const struct xfer *x)
{
	const struct xfer *r;

	for (r = x; r != NULL; r = r->next_part)
		if (!range_whole(b, r))
			return 0;
	return 1;
}

/*
 * Where a file left unfinished is cut.  Until its part is compared, it
 * goes back to that part, as it was; until the range of its part that
 * differed is copied again, and for good once any read or write of the
 * file failed (a failed one of that range leaves old bytes in it), only
 * what came before that range is known to be its source's.  A file
 * split into parts is known up to the first range not all copied.
 */
static uint64_t
kept_end(const struct sftp_batch *b, const struct xfer *x)
{
	const struct xfer *r;

	if (x->next_part != NULL) {
		for (r = x; r != NULL && range_whole(b, r); r = r->next_part)
			if (r->next_part == NULL)
				return batch_download(b) ? r->maxack : r->offset;
		return r->highwater;
	}
	if (x->res.unchecked)
		return MINIMUM(x->highwater, x->res.part);
	if (x->res.redo < x->res.redo_end || x->res.redo_reqs != 0 ||
	    (x->res.redo_end != 0 && (x->status != SSH2_FX_OK ||
	    x->dl.write_errno != 0)))
		return MINIMUM(x->highwater, x->res.start);
	return x->highwater;
}

/*
 * Upload: every write is answered, and every part of the file closed
 * (rule 6).  Its size is set once its data is in
 * (a server may apply one file's requests in any order: pkg/sftp runs
 * writes on threads): the whole file, or, for a file left unfinished,
 * what is known to be its source's (kept_end()); then its attributes
 * and its close.  A size the server cannot set is a success's only:
 * the file is copied again, its open truncating (restart_upload()).
 */
static void
finish_upload(struct sftp_batch *b, struct xfer *x)
{
	int whole = x->status == SSH2_FX_OK && !x->cut_short &&
	    (x->next_part == NULL || ranges_whole(b, x));
	Attrib t;

	XFER_RULE(x, x->nreqs == 0 && x->res.gate != 1 && x->nparts == 0, 2);
	if (x->up.reopen || (!x->dst_changed && (interrupted ||
	    x->status != SSH2_FX_OK))) {
		/* Leave the file as it is. */
		send_close(b, x);
		return;
	}
	if (!whole || !x->up.trunc_at_open) {
		attrib_clear(&t);
		t.flags = SSH2_FILEXFER_ATTR_SIZE;
		/* A split file's: kept_end() is its last range's end. */
		t.size = whole && x->next_part == NULL ? x->offset :
		    kept_end(b, x);
		debug("truncating at %llu", (unsigned long long)t.size);
		send_handle_request(b, x, SSH2_FXP_FSETSTAT, &t)->truncate =
		    whole ? TRUNC_SIZE : TRUNC_TRIM;
	}
	if (whole && (b->flags & SFTP_BATCH_PRESERVE))
		send_handle_request(b, x, SSH2_FXP_FSETSTAT, &x->a);
	send_close(b, x);
}

/*
 * Upload: one write of the next part of the file, or of a resumed file's
 * range to copy again.
 */
static void
send_write(struct sftp_batch *b, struct xfer *x)
{
	struct xfer *w = whole(x);
	struct xreq *q;
	uint64_t off = x->offset;
	ssize_t len;
	int r, redo = 0;

	if (redo_wanted(x)) {
		off = x->res.redo;
		len = MINIMUM(b->params.upload_buflen, x->res.redo_end - off);
		if ((len = pread(x->fd, b->data, len, off)) <= 0) {
			xfer_error(b, x, "read local \"%s\": %s", x->src,
			    len == 0 ? "file shrank" : strerror(errno));
			x->status = SSH2_FX_FAILURE;
			xfer_mark_failed(b, x);
			return;
		}
		x->res.redo += len;
		redo = 1;
	} else if (interrupted || x->status != SSH2_FX_OK ||
	    x->res.tail_sent || off >= x->end)
		len = 0;
	else do
		len = pread(w->fd, b->data, MINIMUM(b->params.upload_buflen,
		    x->end - off), off);
	while (len == -1 &&
	    (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK));
	if (len == -1)
		fatal("read local \"%s\": %s", x->src, strerror(errno));
	if (len == 0 && off < x->end && x->end != RANGE_EOF &&
	    !interrupted && x->status == SSH2_FX_OK) {
		/* A part's range past the end: the file shrank. */
		xfer_error(b, x, "read local \"%s\": file shrank", x->src);
		x->status = SSH2_FX_FAILURE;
		xfer_mark_failed(b, x);
	}
	if (len == 0) {
		/* A resumed file's tail is sent: its part is compared yet. */
		if (x->res.unchecked && !interrupted && x->status == SSH2_FX_OK) {
			x->res.tail_sent = 1;
			return;
		}
		if (interrupted && (x->offset < range_end(x) ||
		    x->res.unchecked || x->res.redo < x->res.redo_end))
			xfer_cut(b, x);
		x->asked_all = 1;	/* finish_upload() once all are answered */
		return;
	}
	/* The part's redone range and the tail past it do not overlap. */
	XFER_RULE(x, redo ? off + len <= x->res.part : off >= x->res.part, 1);
	q = req_new(b, x, SSH2_FXP_WRITE, off, len);
	if ((q->redo = redo))
		x->res.redo_reqs++;
	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, SSH2_FXP_WRITE)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_string(b->msg, x->handle, x->handle_len)) != 0 ||
	    (r = sshbuf_put_u64(b->msg, off)) != 0 ||
	    (r = sshbuf_put_string(b->msg, b->data, len)) != 0)
		fatal_fr(r, "compose");
	lane_send(b, x->lane);
	debug3("Sent message SSH2_FXP_WRITE I:%u O:%llu S:%zd",
	    q->id, (unsigned long long)off, len);
	if (!redo)
		x->offset += len;
	w->dst_changed = 1;
}

/*
 * The parts of a file, every one DONE (those whose open was refused
 * too, out of its ranges' chain): gone, the file one range again.
 */
static void
parts_free(struct sftp_batch *b, struct xfer *x)
{
	struct xfer *p, *tmp;

	if (!x->split)
		return;
	if (x->nparts != 0)
		fatal_f("\"%s\": %u parts not done", x->dst, x->nparts);
	x->split = 0;
	for (p = TAILQ_FIRST(&b->active); p != NULL; p = tmp) {
		tmp = TAILQ_NEXT(p, tq);
		if (p->parent != x)
			continue;
		if (p->inflight != 0)
			fatal_f("\"%s\": a part's requests in flight", x->dst);
		TAILQ_REMOVE(&b->active, p, tq);
		b->nactive--;
		xfer_free(p);
	}
	x->next_part = NULL;
	x->end = RANGE_EOF;
}

/*
 * Upload: the server could not truncate the file with FSETSTAT; once
 * every reply is in, open it again, this time truncating.
 */
static void
restart_upload(struct sftp_batch *b, struct xfer *x)
{
	parts_free(b, x);
	free(x->handle);
	x->handle = NULL;
	x->handle_len = 0;
	x->up.reopen = x->asked_all = x->opened = x->reordered = 0;
	x->status = SSH2_FX_OK;
	x->offset = x->highwater = x->maxack = x->res.start = x->res.part = 0;
	x->res.tail = x->res.unchecked = x->res.tail_sent = 0;
	x->res.redo = x->res.redo_end = 0;
	progress_set(b, x, 0);
	if (lseek(x->fd, 0, SEEK_SET) == -1) {
		xfer_error(b, x, "lseek local \"%s\": %s", x->src,
		    strerror(errno));
		xfer_mark_failed(b, x);
		xfer_done(b, x);
		return;
	}
	send_upload_open(b, x);
}

static struct xreq *
send_read(struct sftp_batch *b, struct xfer *x, uint64_t offset, size_t len)
{
	struct xreq *q = req_new(b, x, SSH2_FXP_READ, offset, len);
	int r;

	sshbuf_reset(b->msg);
	if ((r = sshbuf_put_u8(b->msg, SSH2_FXP_READ)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, q->id)) != 0 ||
	    (r = sshbuf_put_string(b->msg, x->handle, x->handle_len)) != 0 ||
	    (r = sshbuf_put_u64(b->msg, offset)) != 0 ||
	    (r = sshbuf_put_u32(b->msg, len)) != 0)
		fatal_fr(r, "compose");
	lane_send(b, x->lane);
	debug3("Request range %llu -> %llu I:%u",
	    (unsigned long long)offset,
	    (unsigned long long)offset + len - 1, q->id);
	return q;
}

/*
 * Download: the local file, opened once its first data is in (or its
 * end, for an empty file), so that an open in flight when the copy is
 * interrupted leaves it as it was.
 */
static int
local_open(struct sftp_batch *b, struct xfer *x)
{
	x->fd = open(x->dst, O_WRONLY | O_CREAT |
	    ((b->flags & SFTP_BATCH_INPLACE) ? 0 : O_TRUNC),
	    ((x->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) ?
	    x->a.perm & 0777 : 0666) | S_IWUSR);
	if (x->fd == -1) {
		x->dl.write_errno = errno;
		xfer_error(b, x, "open local \"%s\": %s", x->dst,
		    strerror(errno));
		xfer_mark_failed(b, x);
		x->asked_all = 1;
		return -1;
	}
	x->dst_changed = 1;
	return 0;
}

/*
 * Download: the next read.  A resumed file's range to read again first;
 * then up to the listed size, reads of that size; past it, one read at
 * a time until one finds the end of the file.
 */
static void
send_next_read(struct sftp_batch *b, struct xfer *x)
{
	u_int buflen = b->params.download_buflen;

	if (redo_wanted(x)) {
		buflen = MINIMUM(buflen, x->res.redo_end - x->res.redo);
		send_read(b, x, x->res.redo, buflen)->redo = 1;
		x->res.redo_reqs++;
		x->res.redo += buflen;
		return;
	}
	if (x->offset < range_end(x)) {
		buflen = MINIMUM(buflen, range_end(x) - x->offset);
		send_read(b, x, x->offset, buflen);
		x->offset += buflen;
		/* A part's range is all asked for at its end. */
		if (x->offset >= x->end)
			x->asked_all = 1;
		return;
	}
	if (x->end != RANGE_EOF) {
		x->asked_all = 1;
		return;
	}
	send_read(b, x, x->offset, buflen);
	x->offset += buflen;
	x->dl.probing = 1;
}

/* Whether the file can take another read or write now. */
static int
wants_data(struct sftp_batch *b, struct xfer *x)
{
	if (x->clashed || x->res.gate != 0)
		return 0;
	if (x->state == XFER_DATA && redo_wanted(x))
		return 1;
	if ((x->state != XFER_DATA &&
	    (x->state != XFER_CHECKING || !x->res.tail)) || x->asked_all)
		return 0;
	if (batch_download(b))
		return !x->dl.probing;
	/* An upload whose tail is sent waits for its part's comparison. */
	return !x->res.tail_sent || !x->res.unchecked || interrupted ||
	    x->status != SSH2_FX_OK;
}

/*
 * Download: every read is answered, and every part of the file closed;
 * close the remote file.
 */
static void
finish_download(struct sftp_batch *b, struct xfer *x)
{
	int complete = x->next_part != NULL ? ranges_whole(b, x) :
	    x->dl.at_end && !x->failed && !x->res.unchecked &&
	    x->res.redo >= x->res.redo_end;

	XFER_RULE(x, x->nreqs == 0 && x->nparts == 0, 2);
	if (complete) {
		x->highwater = x->maxack;
		/* No data came: the file is empty. */
		if (x->fd == -1)
			(void)local_open(b, x);
	} else if (interrupted)
		xfer_cut(b, x);
	if (x->fd != -1 &&
	    ((b->flags & SFTP_BATCH_INPLACE) || !complete)) {
		debug("truncating at %llu", (unsigned long long)kept_end(b, x));
		if (ftruncate(x->fd, kept_end(b, x)) == -1)
			xfer_error(b, x, "local ftruncate \"%s\": %s", x->dst,
			    strerror(errno));
	}
	send_close(b, x);
}

/*
 * The data in flight: as many bytes as the pipeline's requests of full
 * size would carry, so that small files' requests are not counted as
 * full ones; or the number of requests the user gave (-R).
 */
static uint64_t
batch_budget(const struct sftp_batch *b, const struct lane *l)
{
	uint64_t most;

	if (b->params.fixed_requests)
		return sftp_pipe_limit(l->pipe);
	most = (uint64_t)sftp_pipe_limit(l->pipe) * batch_buflen(b);
	/*
	 * Under a rate limit (-l), sftp-client.c paces each send: a second
	 * of it in flight (at least LIMIT_MIN_REQS requests), so that the
	 * replies, and the meter's count of them, come in meanwhile.
	 */
	if (b->params.limit_bps != 0)
		most = MINIMUM(most, MAXIMUM(b->params.limit_bps,
		    (uint64_t)LIMIT_MIN_REQS * batch_buflen(b)));
	return most;
}

/* Whether x's lane takes another read or write now. */
static int
lane_room(const struct sftp_batch *b, const struct lane *l)
{
	return !l->lost && l->data_bytes < batch_budget(b, l) &&
	    sshbuf_len(l->out) < LANE_OUT_MAX;
}

/*
 * Whether a file under way has x's destination: x waits for it, so that
 * the later source is the one that stays, whole.
 */
static int
dst_busy(struct sftp_batch *b, const struct xfer *x)
{
	struct xfer *y;

	TAILQ_FOREACH(y, &b->active, tq) {
		if (y->note == NULL && y->state != XFER_DONE &&
		    strcmp(y->dst, x->dst) == 0)
			return 1;
	}
	return 0;
}

/*
 * A range worth splitting: in DATA, with at least SPLIT_MIN still to
 * send (so that each half is worth a handle's open and close) and
 * nothing of a resumed file's.  An upload's part opens for reading and
 * writing: an open for writing alone truncates on some servers
 * (Erlang's), so the file's own mode must allow both.
 */
#define SPLIT_MIN	(8 * 1024 * 1024)
#define SPLIT_AGAIN	(5 * 1000)	/* us */
static int
split_wanted(const struct sftp_batch *b, const struct xfer *x)
{
	const struct xfer *w = whole_c(x);

	if (x->note != NULL || x->clashed || x->state != XFER_DATA ||
	    x->asked_all || x->status != SSH2_FX_OK || w->failed ||
	    w->res.part != 0 || w->res.gate != 0 || w->up.reopen ||
	    x->offset >= range_end(x) || range_end(x) - x->offset < SPLIT_MIN)
		return 0;
	return batch_download(b) ||
	    ((w->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) &&
	    (w->a.perm & 0600) == 0600);
}

/*
 * Once no file waits to start, the largest range still to send is split
 * while another lane takes it (lane_pick(): one with room, or a new
 * stream): its upper half, a whole number of requests long, becomes a
 * part of the file on that lane, with its own handle.  The open of an
 * upload's part neither creates nor truncates: the file's own open did
 * that; the file's size is set once every part is closed.
 */
static void
batch_split(struct sftp_batch *b)
{
	struct xfer *x, *r, *w, *p;
	struct lane *l;
	uint64_t most, half;
	u_int i, buflen = batch_buflen(b);
	Attrib junk;

	if (b->max_lanes < 2 || interrupted || b->one_file ||
	    now_us() < b->split_after)
		return;
	/* Not looked for again too soon: it walks every file. */
	b->split_after = now_us() + SPLIT_AGAIN;
	for (i = 0; i < b->max_lanes && b->nactive < b->max_files; i++) {
		r = NULL;
		most = 0;
		TAILQ_FOREACH(x, &b->active, tq) {
			if (split_wanted(b, x) &&
			    range_end(x) - x->offset > most) {
				most = range_end(x) - x->offset;
				r = x;
			}
		}
		if (r == NULL || (l = lane_pick(b)) == NULL ||
		    l == r->lane || lane_full(b, l))
			return;
		w = whole(r);
		half = most / 2 - (most / 2) % buflen;
		p = xfer_new(b, w->src, w->dst);
		p->arg = NULL;
		p->parent = w;
		p->size = r->size;
		p->start = p->offset = p->highwater = p->maxack =
		    range_end(r) - half;
		p->end = r->end;
		r->end = p->start;
		p->next_part = r->next_part;
		r->next_part = p;
		w->nparts++;
		w->split = 1;
		p->lane = l;
		l->nfiles++;
		TAILQ_INSERT_AFTER(&b->active, r, p, tq);
		b->nactive++;
		b->peak = MAXIMUM(b->peak, b->nactive);
		debug_f("\"%s\": %llu bytes from %llu on stream %u",
		    w->dst, (unsigned long long)half,
		    (unsigned long long)p->start, l->n);
		attrib_clear(&junk);
		if (batch_download(b))
			send_open_request(b, p, "remote", w->src,
			    SSH2_FXF_READ, &junk);
		else
			send_open_request(b, p, "dest", w->dst,
			    SSH2_FXF_READ|SSH2_FXF_WRITE, &junk);
	}
}

/* Start files, then send data requests, oldest file first. */
static void
batch_fill(struct sftp_batch *b)
{
	struct xfer *x;
	u_int i;

	for (i = 1; i < b->nlanes; i++)
		lane_drop(b, b->lanes[i]);
	while (!interrupted && (x = TAILQ_FIRST(&b->queued)) != NULL) {
		if (x->note == NULL &&
		    (b->nactive >= b->max_files || dst_busy(b, x)))
			break;
		if (x->note == NULL && (x->lane = lane_pick(b)) == NULL)
			break;
		TAILQ_REMOVE(&b->queued, x, tq);
		TAILQ_INSERT_TAIL(&b->active, x, tq);
		if (x->note != NULL) {
			xfer_enter(x, XFER_DONE);
			continue;
		}
		b->nqueued--;
		b->nactive++;
		b->peak = MAXIMUM(b->peak, b->nactive);
		x->lane->nfiles++;
		if (batch_download(b))
			start_download(b, x);
		else
			start_upload(b, x);
	}
	if (TAILQ_EMPTY(&b->queued))
		batch_split(b);
	TAILQ_FOREACH(x, &b->active, tq) {
		if (x->note != NULL || x->lane == NULL)
			continue;
		/* A range of a file that failed asks for no more. */
		if (xfer_split(x) && whole(x)->failed &&
		    x->state == XFER_DATA && !x->clashed)
			x->asked_all = 1;
		while (lane_room(b, x->lane) && wants_data(b, x)) {
			if (batch_download(b)) {
				/*
				 * After an interrupt, a file whose data is
				 * all asked for may still look for its end.
				 */
				if (interrupted && x->offset != range_end(x)) {
					x->asked_all = 1;
					break;
				}
				send_next_read(b, x);
			} else
				send_write(b, x);
		}
	}
	/* A file whose reads or writes are all answered closes. */
	TAILQ_FOREACH(x, &b->active, tq) {
		/*
		 * A clashed handle is closed outside another request's wait:
		 * its close must not reach a listing's handle of the same
		 * number (foreign_handle()).
		 */
		if (x->clashed && x->inflight == 0 && !b->foreign &&
		    x->state != XFER_CLOSING && x->state != XFER_DONE) {
			if (x->handle != NULL && !x->lane->lost)
				send_close(b, x);
			else
				xfer_done(b, x);
			continue;
		}
		if (x->clashed || x->state != XFER_DATA || x->nreqs != 0 ||
		    redo_wanted(x) || x->nparts != 0)
			continue;
		if (x->parent != NULL) {
			/* A part closes; its file finishes after. */
			if (x->asked_all || (batch_download(b) && interrupted)) {
				XFER_RULE(x, x->nreqs == 0, 2);
				send_close(b, x);
			}
			continue;
		}
		if (batch_download(b) && (x->asked_all || interrupted))
			finish_download(b, x);
		else if (!batch_download(b) && x->asked_all)
			finish_upload(b, x);
	}
	TAILQ_FOREACH(x, &b->active, tq)
		xfer_assert(x, batch_download(b));
}

/* The meter names a file by its last component, as sftp-client.c does. */
static const char *
meter_path(const char *path)
{
	const char *p;

	if ((p = strrchr(path, '/')) == NULL || p[1] == '\0')
		return path;
	return p + 1;
}

/* A note's turn: everything queued before it is done. */
static void
note_print(struct sftp_batch *b, struct xfer *x)
{
	struct xnote *n = x->note;

	if (n->kind == NOTE_SAY)
		mprintf("%s\n", n->text);
	else if (n->kind == NOTE_LOG)
		batch_logdirect(b, n->level, "%s", n->text);
	else if (n->kind == NOTE_END && x->arg->failed)
		batch_logdirect(b, SYSLOG_LEVEL_ERROR, "%s", x->arg->failmsg);
}

/* The rules of enum batch_meter's states, above. */
static void
meter_assert(const struct sftp_batch *b, const struct xfer *x)
{
	if ((b->meter.state == METER_WHOLE_ON && meter_label[0] == '\0') ||
	    (b->meter.state == METER_BY_FILE && x != NULL &&
	    x->out.metered == METER_NAMED))
		fatal_f("meter state %d, name \"%s\"", b->meter.state,
		    meter_label);
}

/*
 * The progress meter shows the oldest file: its own meter, as stock's
 * (METER_OWN), while it is the only one under way on the only lane;
 * once files (or parts) go side by side, the whole batch's (b->meter),
 * named after the oldest file: a file's own meter would start when it
 * is the oldest, often done by then, and show nothing of its rate.  It
 * stays so for the rest of the batch.  Called for the oldest file.
 */
static void
meter_show(struct sftp_batch *b, struct xfer *x)
{
	off_t size = MAXIMUM(b->meter.size, b->meter.done);

	meter_assert(b, x);
	if (!showprogress || !x->opened || x->out.metered == METER_OWN)
		return;
	if (b->meter.state == METER_BY_FILE) {
		if (b->nlanes > 1 || b->nactive > 1)
			b->meter.state = METER_WHOLE_OFF;
		else {
			if (batch_download(b) && x->size == 0)
				return;
			start_progress_meter(meter_path(x->src), x->size,
			    &x->out.progress);
			x->out.metered = METER_OWN;
			return;
		}
	}
	/* The whole batch's: it names x, and counts what is known now. */
	if (x->out.metered == 0) {
		strlcpy(meter_label, meter_path(x->src), sizeof(meter_label));
		x->out.metered = METER_NAMED;
	}
	if (b->meter.state == METER_WHOLE_ON)
		update_progress_meter(meter_label, size);
	else {
		start_progress_meter(meter_label, size, &b->meter.done);
		b->meter.state = METER_WHOLE_ON;
	}
}

/*
 * The whole batch's meter ends its line: before a line of another's
 * (it starts again with the next file), and at the end of the batch,
 * where it names how many files the batch had.
 */
static void
meter_stop(struct sftp_batch *b, int end)
{
	meter_assert(b, NULL);
	if (b->meter.state != METER_WHOLE_ON)
		return;
	if (end && b->nfiles > 1) {
		snprintf(meter_label, sizeof(meter_label), "%u files",
		    b->nfiles);
		update_progress_meter(meter_label, MAXIMUM(b->meter.size,
		    b->meter.done));
		refresh_progress_meter(1);
	}
	stop_progress_meter();
	b->meter.state = METER_WHOLE_OFF;
}

/* Reap finished files at the head; the meter shows the oldest. */
static void
batch_reap(struct sftp_batch *b)
{
	struct xfer *x;

	while ((x = TAILQ_FIRST(&b->active)) != NULL) {
		if (x->note != NULL) {
			meter_stop(b, 0);
			note_print(b, x);
			TAILQ_REMOVE(&b->active, x, tq);
			xfer_free(x);
			continue;
		}
		if (x->out.nmsgs != 0)
			meter_stop(b, 0);
		xfer_flush(b, x);
		meter_show(b, x);
		/*
		 * A resumed upload's hashes may outlive its failed open, a
		 * clashed file its parts.
		 */
		if (x->state != XFER_DONE || x->inflight != 0 || x->nparts != 0)
			return;
		if (x->out.metered == METER_OWN)
			stop_progress_meter();
		parts_free(b, x);
		TAILQ_REMOVE(&b->active, x, tq);
		b->nactive--;
		xfer_free(x);
	}
}

static void
track_ack(struct xfer *x, uint64_t offset, size_t len)
{
	/* As sftp_download(): the contiguous end, for truncation. */
	if (x->maxack < offset + len)
		x->maxack = offset + len;
	if (!x->reordered && offset <= x->highwater)
		x->highwater = x->maxack;
	else if (!x->reordered && offset > x->highwater) {
		debug3_f("server reordered replies");
		x->reordered = 1;
	}
}

#ifdef SFTP_CLIENT_CHECK_FILE
/*
 * Resumed files (SFTP_BATCH_RESUME, sftp-resume.c): the part the target
 * already has is compared with the source while its own data past the
 * part and other files' data flow.  A download compares once its remote
 * file is open (check-file-handle), an upload once its target's size is
 * known (check-file-name: its handle is open only for writing).
 */

static void resume_done(struct sftp_batch *, struct xfer *);

/* Ask for the hashes of the next ranges, or finish if all are in. */
static void
resume_fill(struct sftp_batch *b, struct xfer *x)
{
	uint64_t off, len;
	u_int id;

	while (sftp_resume_want(x->res.cmp, &off, &len)) {
		/* An upload's handle is open only for writing: by name. */
		batch_leave(b);
		id = sftp_check_file_send(b->conn, batch_download(b) ?
		    x->handle : NULL, x->handle_len, x->dst,
		    SFTP_RESUME_ALGS, off, len, 0);
		req_add(b, x, SSH2_FXP_EXTENDED, id, off, len);
		sftp_resume_sent(x->res.cmp, id);
	}
	if (!sftp_resume_waiting(x->res.cmp))
		resume_done(b, x);
}

/*
 * Compare the part, x->res.part bytes.  Where the server can hash, its data
 * past the part flows meanwhile (the tail: wants_data()), and a range
 * that differs is copied again afterwards (redo_wanted()).
 */
static void
resume_start(struct sftp_batch *b, struct xfer *x, const char *target)
{
	batch_leave(b);
	x->res.cmp = sftp_resume_new(b->conn, target, x->fd, x->res.part,
	    !batch_download(b));
	xfer_enter(x, XFER_CHECKING);
	if (x->res.part != 0 && sftp_can_check_file(b->conn, !batch_download(b))) {
		x->res.tail = x->res.unchecked = 1;
		x->offset = x->highwater = x->maxack = x->res.part;
		progress_set(b, x, x->res.part);
		if (!batch_download(b)) {
			if (lseek(x->fd, x->res.part, SEEK_SET) == -1) {
				xfer_error(b, x, "lseek local \"%s\": %s",
				    x->src, strerror(errno));
				x->res.tail = x->res.unchecked = 0;
				sftp_resume_free(x->res.cmp);
				x->res.cmp = NULL;
				xfer_mark_failed(b, x);
				xfer_done(b, x);
				return;
			}
			send_gate_open(b, x);
		}
	}
	resume_fill(b, x);
}

/* The comparison is over: the data goes on from where it stopped matching. */
static void
resume_done(struct sftp_batch *b, struct xfer *x)
{
	uint64_t good;
	char *msg;
	int r;

	r = sftp_resume_end(x->res.cmp, &good, &msg);
	sftp_resume_free(x->res.cmp);
	x->res.cmp = NULL;
	if (msg != NULL)
		xfer_msg(b, x, r != 0 ? SYSLOG_LEVEL_ERROR : SYSLOG_LEVEL_INFO,
		    msg);
	if (x->res.tail) {
		if (batch_download(b))
			xfer_enter(x, XFER_DATA);
		if (r != 0) {
			/*
			 * Its part stays unchecked (kept_end() goes back to
			 * it); its requests in flight end first (batch_fill()).
			 */
			if (!interrupted) {
				xfer_mark_failed(b, x);
				x->status = SSH2_FX_FAILURE;
			}
			x->asked_all = batch_download(b);
			return;
		}
		/* The range that differs is copied again, over what is there. */
		x->res.unchecked = 0;
		x->res.start = good;
		if (good < x->res.part) {
			x->res.redo = good;
			x->res.redo_end = x->res.part;
			progress_set(b, x,
			    x->out.progress - (x->res.part - good));
		}
		return;
	}
	/*
	 * No tail: no part, or a server that cannot hash (stock's resume,
	 * good is the part), so nothing to cut.
	 */
	if (r != 0)
		goto stop;
	if (batch_download(b))
		xfer_enter(x, XFER_DATA);
	else if (lseek(x->fd, good, SEEK_SET) == -1) {
		xfer_error(b, x, "lseek local \"%s\": %s", x->src,
		    strerror(errno));
		goto stop;
	}
	x->offset = x->highwater = x->maxack = good;
	progress_set(b, x, good);
	if (!batch_download(b))
		send_upload_open(b, x);
	return;
 stop:
	if (!interrupted)
		xfer_mark_failed(b, x);
	if (batch_download(b))
		send_close(b, x);
	else
		xfer_done(b, x);
}

/* A reply to a check-file request. */
static void
got_check(struct sftp_batch *b, struct xreq *q, u_int status,
    struct sshbuf *msg)
{
	struct xfer *x = q->xfer;

	/* A resumed upload whose open failed: its local file is closed. */
	if (x->state == XFER_DONE)
		return;
	if (x->res.cmp == NULL)
		fatal_f("check-file reply for \"%s\", not asked", x->dst);
	sftp_resume_reply(x->res.cmp, q->id, status, msg);
	resume_fill(b, x);
}

/*
 * Download: its remote file is open; the local file, if there is one,
 * is its part.  A file that is not there is copied whole and created
 * when its data comes, as any other.
 */
static void
resume_download(struct sftp_batch *b, struct xfer *x)
{
	struct stat st;

	if ((x->fd = open(x->dst, O_RDWR)) == -1) {
		if (errno == ENOENT)
			return;
		xfer_error(b, x, "open local \"%s\": %s", x->dst,
		    strerror(errno));
		goto fail;
	}
	if (fstat(x->fd, &st) == -1) {
		xfer_error(b, x, "stat local \"%s\": %s", x->dst,
		    strerror(errno));
		goto fail;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > x->size) {
		xfer_error(b, x, "Unable to resume download of \"%s\": "
		    "local file is larger than remote", x->dst);
		goto fail;
	}
	/* A lost connection leaves the part as it is until it is compared. */
	x->res.part = x->highwater = x->maxack = st.st_size;
	resume_start(b, x, x->dst);
	return;
 fail:
	xfer_mark_failed(b, x);
	send_close(b, x);
}

/*
 * Upload: the size of its target (msg, attributes) or why there is none
 * (status), as sftp_resume_upload() takes them: without check-file-name,
 * stock's rule, the target must be there and smaller.
 */
static void
resume_upload(struct sftp_batch *b, struct xfer *x, struct sshbuf *msg,
    u_int status)
{
	int verify = sftp_can_check_file(b->conn, 1), r;
	int scp = (b->flags & SFTP_BATCH_INPLACE) != 0;
	Attrib c;

	/*
	 * scp -Z (in place) copies a target that is not there whole, and
	 * trusts one of the full size; sftp's reput fails on both, as
	 * stock's does, where the server cannot hash.
	 */
	if (status != SSH2_FX_OK) {
		if (!verify && !scp) {
			xfer_error(b, x, "stat remote: %s", fx2txt(status));
			goto fail;
		}
		send_upload_open(b, x);
		return;
	}
	if ((r = decode_attrib(msg, &c)) != 0) {
		xfer_error(b, x, "decode_attrib: %s", ssh_err(r));
		goto fail;
	}
	if (interrupted) {
		xfer_done(b, x);
		return;
	}
	if (!verify && !scp && c.size >= x->size) {
		xfer_error(b, x, "resume \"%s\": destination file "
		    "same size or larger", x->src);
		goto fail;
	} else if (c.size > x->size) {
		xfer_error(b, x, "resume \"%s\": destination file larger",
		    x->src);
		goto fail;
	}
	/* Without check-file-name, resume_done() warns. */
	x->res.part = c.size;
	resume_start(b, x, x->dst);
	return;
 fail:
	xfer_mark_failed(b, x);
	xfer_done(b, x);
}
#else
static void
resume_download(struct sftp_batch *b, struct xfer *x)
{
	fatal_f("no verified resume in this build");
}

static void
resume_upload(struct sftp_batch *b, struct xfer *x, struct sshbuf *msg,
    u_int status)
{
	fatal_f("no verified resume in this build");
}

static void
got_check(struct sftp_batch *b, struct xreq *q, u_int status,
    struct sshbuf *msg)
{
	fatal_f("no verified resume in this build");
}
#endif /* SFTP_CLIENT_CHECK_FILE */

/*
 * The file still open with a handle the server gave in reply to request
 * id: one whose close was not sent before that request (a handle closed
 * first may be given again).  Request ids grow as requests are sent.
 */
static struct xfer *
handle_owner(struct sftp_batch *b, const struct xfer *x, const u_char *h,
    size_t len, u_int id)
{
	struct xfer *y;

	TAILQ_FOREACH(y, &b->active, tq) {
		/* Handles are a session's: x's lane, or a listing's lane 0. */
		if (y->lane != (x == NULL ? b->lanes[0] : x->lane))
			continue;
		if (y == x || y->note != NULL || y->handle == NULL ||
		    y->state == XFER_DONE || y->handle_len != len ||
		    memcmp(y->handle, h, len) != 0)
			continue;
		if (y->close_id == 0 || y->close_id > id)
			return y;
	}
	return NULL;
}

/*
 * x's requests are moot from now on (their replies are taken and
 * dropped; its handle is closed once they are in) and the file is
 * copied again from the start, first of those queued.  So are those of
 * every part of x's file.  Its destination
 * may be changed already: if an interrupt stops the copy before it
 * starts again, it is named (queued_logs_print()).
 */
static void
xfer_redo(struct sftp_batch *b, struct xfer *x)
{
	struct xfer *n, *r;

	x = whole(x);		/* a part's file, with all its parts */
	if (x->clashed)
		return;
	/* The meter counts its copy again instead. */
	b->meter.done -= x->out.progress;
	b->meter.size -= (off_t)x->size;
	for (r = x; r != NULL; r = r->next_part)
		r->clashed = 1;
	n = xfer_new(b, x->src, x->dst);
	n->arg = x->arg;
	n->a = x->a;
	n->named = x->named;
	n->dl.stat_needed = x->dl.stat_needed;
	/* An upload's target may have had the other file's writes. */
	n->dst_changed = x->dst_changed || !batch_download(b);
	TAILQ_INSERT_HEAD(&b->queued, n, tq);
	b->nqueued++;
}

/*
 * The lane's session ended (its sftp-server killed, its channel or
 * connection gone): its requests are dropped and each of its files not
 * done is copied again from the start on the other lanes (xfer_redo()),
 * as a file whose handle clashed is.  What its writes left on a target
 * is written over, and the target's size set, by the copy again.
 */
static void
lane_drop(struct sftp_batch *b, struct lane *l)
{
	struct xreq *q;
	struct xfer *x;
	u_int n = 0;

	if (!l->lost || l->n == 0 || l->conn == NULL)
		return;
	while ((q = TAILQ_FIRST(&l->reqs)) != NULL)
		req_done(b, q);
	TAILQ_FOREACH(x, &b->active, tq) {
		if (x->lane != l || x->state == XFER_DONE)
			continue;
		if (!x->clashed)
			n++;
		xfer_redo(b, x);
		xfer_done(b, x);
	}
	if (n > 0)
		debug("stream %u lost: %u file%s copied again", l->n, n,
		    n == 1 ? "" : "s");
	if (l->nfiles != 0 || l->data_bytes != 0)
		fatal_f("stream %u: %u files left", l->n, l->nfiles);
	/* Nothing is on it now: its session is closed. */
	sftp_streams_lost(l->conn);
	l->conn = NULL;
}

/*
 * The server reused a handle still in use: a server fault (Erlang's
 * ssh_sftpd reuses handles so).  One file at a time from now on, the way
 * stock copies, which never holds two handles.
 */
static void
batch_one_file(struct sftp_batch *b)
{
	b->one_file = 1;
	b->max_files = 1;
}

/*
 * The server gave x a handle that y still holds.  Which file their
 * requests reach is unknown, so both files are copied again.
 */
static void
handle_clash(struct sftp_batch *b, struct xfer *x, struct xfer *y)
{
	debug_f("the server gave \"%s\" the handle of \"%s\", still open: "
	    "one file at a time from now on", x->dst, y->dst);
	batch_one_file(b);
	xfer_redo(b, x);
	xfer_redo(b, y);
}

/*
 * A handle for a request of sftp-client.c's (a directory's listing)
 * that a file still holds: that file is copied again, one file at a
 * time from now on (handle_clash()).  Its close waits until the listing
 * is over (batch_fill()): Erlang's server, which reuses handles so,
 * finds and closes the newest of those that share a number.
 */
static void
foreign_handle(struct sftp_batch *b, struct sshbuf *msg)
{
	const u_char *p = sshbuf_ptr(msg);
	size_t len;
	struct xfer *y;

	if (sshbuf_len(msg) < 9 || p[0] != SSH2_FXP_HANDLE)
		return;
	len = PEEK_U32(p + 5);
	if (len > sshbuf_len(msg) - 9 ||
	    (y = handle_owner(b, NULL, p + 9, len, PEEK_U32(p + 1))) == NULL)
		return;
	debug_f("the server gave a listing the handle of \"%s\", still "
	    "open: one file at a time from now on", y->dst);
	batch_one_file(b);
	xfer_redo(b, y);
}

static void
got_handle(struct sftp_batch *b, struct xfer *x, struct sshbuf *msg)
{
	struct xfer *y;
	int r;

	if ((r = sshbuf_get_string(msg, &x->handle, &x->handle_len)) != 0)
		fatal_fr(r, "parse handle");
	x->opened = 1;
	xfer_enter(x, XFER_DATA);
	if ((y = handle_owner(b, x, x->handle, x->handle_len,
	    x->open_id)) != NULL) {
		handle_clash(b, x, y);
		return;
	}
	if (batch_download(b) && (b->flags & SFTP_BATCH_RESUME) &&
	    !interrupted) {
		resume_download(b, x);
		return;
	}
}

static void
got_attrs(struct sftp_batch *b, struct xfer *x, struct sshbuf *msg)
{
	int r;

	if (x->state == XFER_SIZING) {
		resume_upload(b, x, msg, SSH2_FX_OK);
		return;
	}
	if ((r = decode_attrib(msg, &x->a)) != 0) {
		xfer_error(b, x, "decode_attrib: %s", ssh_err(r));
		xfer_mark_failed(b, x);
		xfer_done(b, x);
		return;
	}
	x->dl.stat_needed = 0;
	start_download(b, x);
}

/*
 * A part's open was refused: its range goes back to the range before
 * it while that one still sends or asks for data, and nothing is lost.
 * 1 if it did; else the file fails.
 */
static int
part_refused(struct sftp_batch *b, struct xfer *p, u_int status)
{
	struct xfer *r;

	for (r = p->parent; r->next_part != p; r = r->next_part)
		;
	if (r->state != XFER_DATA || r->asked_all || r->clashed ||
	    r->status != SSH2_FX_OK || whole(r)->failed)
		return 0;
	debug_f("\"%s\": a part's open refused (%s): its range stays on "
	    "stream %u", p->dst, fx2txt(status), r->lane->n);
	r->end = p->end;
	r->next_part = p->next_part;
	p->next_part = NULL;
	p->end = RANGE_EOF;
	xfer_done(b, p);
	return 1;
}

static void
got_status(struct sftp_batch *b, struct xreq *q, u_int status)
{
	struct xfer *x = q->xfer;

	switch (q->type) {
	case SSH2_FXP_STAT_VERSION_0:
	case SSH2_FXP_STAT:
		if (x->state == XFER_SIZING) {
			resume_upload(b, x, NULL, status);
			break;
		}
		xfer_error(b, x, "stat remote: %s", fx2txt(status));
		xfer_mark_failed(b, x);
		xfer_done(b, x);
		break;
	case SSH2_FXP_OPEN:
		if (q->gate && x->state == XFER_DONE) {
			/* Its own open was refused first, and said so. */
			x->res.gate = -1;
			break;
		}
		if (q->gate) {
			/* Refused: the file's own open is closed unused. */
			xfer_error(b, x, "dest open \"%s\": %s", x->dst,
			    fx2txt(status));
			xfer_mark_failed(b, x);
			x->res.gate = -1;
			x->status = status;
			x->asked_all = 1;
			break;
		}
		if (x->res.gate == -1) {
			xfer_done(b, x);
			break;
		}
		if (x->parent != NULL && part_refused(b, x, status))
			break;
		xfer_error(b, x, "%s open \"%s\": %s", batch_download(b) ?
		    "remote" : "dest", batch_download(b) ? x->src : x->dst,
		    fx2txt(status));
		xfer_mark_failed(b, x);
		xfer_done(b, x);
		break;
	case SSH2_FXP_WRITE:
		if (x->up.reopen)
			break;
		if (status != SSH2_FX_OK) {
			if (x->status == SSH2_FX_OK)
				xfer_error(b, x, "write remote \"%s\": %s",
				    x->dst, fx2txt(status));
			x->status = status;
			xfer_mark_failed(b, x);
			break;
		}
		progress_set(b, whole(x), whole(x)->out.progress + q->len);
		sftp_pipe_reply(q->lane->pipe, q->len);
		track_ack(x, q->offset, q->len);
		break;
	case SSH2_FXP_READ:
		/*
		 * The file ended inside its resumed part, or before the end
		 * of a range that is not its last: it changed meanwhile.
		 */
		if (status == SSH2_FX_EOF && (q->redo || x->end != RANGE_EOF))
			status = SSH2_FX_FAILURE;
		if (status != SSH2_FX_EOF) {
			if (x->status == SSH2_FX_OK)
				xfer_error(b, x, "read remote \"%s\" : %s",
				    x->src, fx2txt(status));
			x->status = status;
			xfer_mark_failed(b, x);
		} else
			x->dl.at_end = 1;
		x->asked_all = 1;
		break;
	case SSH2_FXP_SETSTAT:
		if (status != SSH2_FX_OK)
			xfer_error(b, x, "remote setstat \"%s\": %s", x->dst,
			    fx2txt(status));
		break;
	case SSH2_FXP_FSETSTAT:
		if (status != SSH2_FX_OK && q->truncate == TRUNC_TRIM &&
		    (b->flags & SFTP_BATCH_INPLACE))
			/* As stock's scp, which truncates in place. */
			xfer_error(b, x, "remote fsetstat: %s", fx2txt(status));
		else if (status != SSH2_FX_OK && q->truncate == TRUNC_TRIM)
			debug_f("cannot truncate \"%s\": %s", x->dst,
			    fx2txt(status));
		else if (status != SSH2_FX_OK && q->truncate == TRUNC_SIZE &&
		    (b->flags & SFTP_BATCH_INPLACE) == 0) {
			debug_f("\"%s\": server cannot truncate: %s; "
			    "truncating at open from now on", x->dst,
			    fx2txt(status));
			b->trunc_open = 1;
			x->up.reopen = 1;
		} else if (status != SSH2_FX_OK && !x->up.reopen) {
			xfer_error(b, x, "remote fsetstat: %s", fx2txt(status));
			/*
			 * A size not set may leave old bytes past the end:
			 * failed, but for a file the user named alone, which
			 * keeps the result sftp_upload() gives (said, not
			 * failed: scp to /dev/null).
			 */
			if ((b->flags & SFTP_BATCH_ALONE) == 0)
				xfer_mark_failed(b, x);
		}
		break;
	case SSH2_FXP_CLOSE:
		if (q->gate)
			break;	/* the file's own open follows */
		if (status != SSH2_FX_OK) {
			xfer_error(b, x, "close remote: %s", fx2txt(status));
			xfer_mark_failed(b, x);
		}
		break;
	case SSH2_FXP_EXTENDED:
		/* A check-file request has no status for success. */
		got_check(b, q, status == SSH2_FX_OK ?
		    SSH2_FX_BAD_MESSAGE : status, NULL);
		break;
	default:
		fatal_f("status for request type %u", q->type);
	}
}

static void
got_data(struct sftp_batch *b, struct xreq *q, struct sshbuf *msg)
{
	struct xfer *x = q->xfer, *w = whole(x);
	u_char *data;
	size_t len;
	int r;

	if (q->type != SSH2_FXP_READ)
		fatal("Expected SSH2_FXP_STATUS(%u) packet, got %u",
		    SSH2_FXP_STATUS, SSH2_FXP_DATA);
	if ((r = sshbuf_get_string(msg, &data, &len)) != 0)
		fatal_fr(r, "parse data");
	debug3("Received data %llu -> %llu",
	    (unsigned long long)q->offset,
	    (unsigned long long)q->offset + len - 1);
	if (len > q->len)
		fatal("Received more data than asked for %zu > %zu",
		    len, q->len);
	if (len == 0) {
		if (x->dl.seen_zerolen)
			fatal_f("server sent zero data length");
		x->dl.seen_zerolen = 1;
	}
	sftp_pipe_reply(q->lane->pipe, len);
	w->dl.got_data = 1;
	if (q->offset >= x->size)
		x->dl.probing = 0;		/* it grew: look further */
	/* A part writes to its file's descriptor. */
	if (w->dl.write_errno == 0 && (w->fd != -1 || local_open(b, w) == 0)) {
		if (lseek(w->fd, q->offset, SEEK_SET) == -1 ||
		    atomicio(vwrite, w->fd, data, len) != len) {
			w->dl.write_errno = errno ? errno : EIO;
			xfer_error(b, x, "write local \"%s\": %s", x->dst,
			    strerror(w->dl.write_errno));
			xfer_mark_failed(b, x);
			x->asked_all = 1;
		} else {
			track_ack(x, q->offset, len);
			w->dst_changed = 1;
		}
	} else
		x->asked_all = 1;
	progress_set(b, w, w->out.progress + len);
	free(data);
	if (len < q->len && w->dl.write_errno == 0) {
		/*
		 * Ask again for the rest, even past a read that found the
		 * end: the file may end after it.
		 */
		debug3("Short data block, re-requesting %llu -> %llu",
		    (unsigned long long)q->offset + len,
		    (unsigned long long)q->offset + q->len - 1);
		if ((send_read(b, x, q->offset + len,
		    q->len - len)->redo = q->redo))
			x->res.redo_reqs++;
	}
}

/* Download: set what -p keeps, as sftp_download() does. */
static void
download_done(struct sftp_batch *b, struct xfer *x)
{
	struct timeval tv[2];
	mode_t mode;

	if ((b->flags & SFTP_BATCH_PRESERVE) == 0)
		return;
	mode = (x->a.flags & SSH2_FILEXFER_ATTR_PERMISSIONS) ?
	    x->a.perm & 0777 : 0666;
#ifdef HAVE_FCHMOD
	if (fchmod(x->fd, mode) == -1)
#else
	if (chmod(x->dst, mode) == -1)
#endif /* HAVE_FCHMOD */
		xfer_error(b, x, "local chmod \"%s\": %s", x->dst,
		    strerror(errno));
	if (x->a.flags & SSH2_FILEXFER_ATTR_ACMODTIME) {
		tv[0].tv_sec = x->a.atime;
		tv[1].tv_sec = x->a.mtime;
		tv[0].tv_usec = tv[1].tv_usec = 0;
		if (utimes(x->dst, tv) == -1)
			xfer_error(b, x, "local set times \"%s\": %s",
			    x->dst, strerror(errno));
	}
}

/* A file whose close is sent is done when every reply is in. */
static void
xfer_close_done(struct sftp_batch *b, struct xfer *x)
{
	char *line;

	if (x->state != XFER_CLOSING || x->inflight != 0)
		return;
	if (x->clashed || x->parent != NULL) {
		xfer_done(b, x);
		return;
	}
	if (x->up.reopen && !interrupted) {
		restart_upload(b, x);
		return;
	}
	if (x->up.reopen)
		xfer_cut(b, x);
	if (batch_download(b) && x->opened && !x->failed && x->dl.at_end) {
		download_done(b, x);
		if ((b->flags & SFTP_BATCH_RESUME) && !x->dl.got_data) {
			xasprintf(&line, "File \"%s\" was not modified",
			    x->dst);
			xfer_msg(b, x, SYSLOG_LEVEL_INFO, line);
		}
	}
	xfer_done(b, x);
}

/* What lanes_window_bound() judges by: the round trip, and the rate. */
static void
lane_timed(struct sftp_batch *b, const struct xreq *q)
{
	uint64_t now = now_us(), t = now - q->sent_us;

	/* The rate's span starts with the first reply. */
	if (b->rtt_us == 0) {
		b->rate_start = now;
		b->rate_bytes = 0;
	}
	if (b->rtt_us == 0 || t < b->rtt_us)
		b->rtt_us = MAXIMUM(t, 1);
	if (q->type == SSH2_FXP_READ || q->type == SSH2_FXP_WRITE)
		b->rate_bytes += q->len;
}

/*
 * A reply: ours if its id is one of our requests in flight; returns 0
 * for the replies of other requests, leaving msg as it was.
 */
static int
batch_reply(struct sftp_batch *b, struct lane *l, struct sshbuf *msg)
{
	struct xreq *q;
	struct xfer *x;
	const u_char *p = sshbuf_ptr(msg);
	u_char type;
	u_int id, status;
	int r;

	if (sshbuf_len(msg) < 5)
		return 0;
	id = PEEK_U32(p + 1);
	if ((q = req_find(l, id)) == NULL) {
		if (l->n == 0)
			foreign_handle(b, msg);
		return 0;
	}
	if ((r = sshbuf_get_u8(msg, &type)) != 0 ||
	    (r = sshbuf_get_u32(msg, &id)) != 0)
		fatal_fr(r, "parse");
	debug3("Received reply T:%u I:%u for \"%s\"", type, id,
	    q->xfer->dst);
	lane_timed(b, q);
	x = q->xfer;
	switch (x->clashed ? 0 : type) {
	case 0:
		break;		/* moot (xfer_redo()) */
	case SSH2_FXP_STATUS:
		if ((r = sshbuf_get_u32(msg, &status)) != 0)
			fatal_fr(r, "parse status");
		debug3("SSH2_FXP_STATUS %u", status);
		got_status(b, q, status);
		break;
	case SSH2_FXP_HANDLE:
		if (q->type != SSH2_FXP_OPEN)
			fatal("Expected SSH2_FXP_STATUS(%u) packet, got %u",
			    SSH2_FXP_STATUS, type);
		if (q->gate)
			got_gate(b, x, msg);
		else
			got_handle(b, x, msg);
		break;
	case SSH2_FXP_ATTRS:
		if (q->type != SSH2_FXP_STAT &&
		    q->type != SSH2_FXP_STAT_VERSION_0)
			fatal("Expected SSH2_FXP_STATUS(%u) packet, got %u",
			    SSH2_FXP_STATUS, type);
		got_attrs(b, x, msg);
		break;
	case SSH2_FXP_DATA:
		got_data(b, q, msg);
		break;
	case SSH2_FXP_EXTENDED_REPLY:
		if (q->type != SSH2_FXP_EXTENDED)
			fatal("Expected SSH2_FXP_STATUS(%u) packet, got %u",
			    SSH2_FXP_STATUS, type);
		got_check(b, q, SSH2_FX_OK, msg);
		break;
	default:
		fatal("Unexpected reply type %u to request %u", type, id);
	}
	req_done(b, q);
	xfer_close_done(b, x);
	batch_fill(b);
	batch_reap(b);
	return 1;
}

/*
 * Called by get_msg() for every message while a batch exists: while
 * sftp-client.c waits for a reply of its own.
 */
int
sftp_batch_reply(struct sftp_batch *b, struct sshbuf *msg)
{
	int r;

	b->foreign++;
	r = batch_reply(b, b->lanes[0], msg);
	b->foreign--;
	batch_leave(b);
	return r;
}

/* What was logged among files that will not start (interrupt, loss). */
static void
queued_logs_print(struct sftp_batch *b)
{
	struct xfer *x;
	char *line;

	TAILQ_FOREACH(x, &b->queued, tq) {
		if (x->note != NULL && x->note->kind == NOTE_LOG)
			note_print(b, x);
		else if (x->note == NULL && x->dst_changed) {
			/* Copied again after a handle clash, never begun. */
			xfer_mark_failed(b, x);
			line = xfer_failed_line(b, x);
			batch_logdirect(b, SYSLOG_LEVEL_ERROR, "%s", line);
			free(line);
		}
	}
}

/*
 * The connection is lost and the caller is about to exit: the lines and
 * errors still held, in order, and every file left unfinished whose
 * destination was changed named as failed.
 */
void
sftp_batch_lost(struct sftp_batch *b)
{
	struct xfer *x;

	TAILQ_FOREACH(x, &b->active, tq) {
		if (x->note != NULL) {
			note_print(b, x);
			continue;
		}
		/* A part is its file's: cut with the file. */
		if (x->state != XFER_DONE && !x->clashed && x->parent == NULL) {
			if (batch_download(b) && x->fd != -1 &&
			    ftruncate(x->fd, kept_end(b, x)) == -1)
				xfer_error(b, x, "local ftruncate \"%s\": %s",
				    x->dst, strerror(errno));
			xfer_cut(b, x);
			if (x->cut_short)
				xfer_say_failed(b, x);
		}
		xfer_flush(b, x);
	}
	queued_logs_print(b);
}

/* The reply in b->reply, read from lane l. */
static void
lane_reply(struct sftp_batch *b, struct lane *l)
{
	if (!batch_reply(b, l, b->reply))
		fatal("Unexpected reply to request %u",
		    sshbuf_len(b->reply) >= 5 ?
		    PEEK_U32(sshbuf_ptr(b->reply) + 1) : 0);
}

/* Replies on lane l, which poll() found readable. */
static void
lane_read(struct sftp_batch *b, struct lane *l)
{
	u_char buf[65536];
	const u_char *p;
	ssize_t n;
	u_int len;
	int r;

	if (l->n == 0) {
		sftp_recv_msg(l->conn, b->reply);
		lane_reply(b, l);
		return;
	}
	/*
	 * Another lane is read as it comes, never waiting for the rest of
	 * a message: meanwhile ssh's master could be waiting for us to
	 * take another lane's data before it hands over more of this one.
	 */
	for (;;) {
		n = read(l->fd_in, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			lane_broken(b, l, "Connection closed");
			return;
		}
		if ((r = sshbuf_put(l->in, buf, n)) != 0)
			fatal_fr(r, "sshbuf_put");
		if ((size_t)n < sizeof(buf))
			break;
	}
	while (!l->lost && sshbuf_len(l->in) >= 4) {
		p = sshbuf_ptr(l->in);
		if ((len = PEEK_U32(p)) > SFTP_MAX_MSG_LENGTH) {
			lane_broken(b, l, "Received message too long");
			return;
		}
		if (sshbuf_len(l->in) < 4 + (size_t)len)
			break;
		sshbuf_reset(b->reply);
		if ((r = sshbuf_put(b->reply, p + 4, len)) != 0 ||
		    (r = sshbuf_consume(l->in, 4 + (size_t)len)) != 0)
			fatal_fr(r, "sshbuf");
		lane_reply(b, l);
	}
}

/*
 * Send what can be sent, then wait until a lane takes more of what is
 * queued on it or has a reply, and read one reply of each lane that has.
 */
static void
batch_step(struct sftp_batch *b)
{
	struct pollfd pfd[2 * SFTP_STREAMS_MAX];
	int rd[SFTP_STREAMS_MAX], wr[SFTP_STREAMS_MAX];
	struct lane *l;
	u_int i, nlanes, n = 0;

	batch_fill(b);
	batch_reap(b);
	refresh_progress_meter(0);	/* once a second (SIGALRM) */
	nlanes = b->nlanes;
	for (i = 0; i < nlanes; i++) {
		l = b->lanes[i];
		rd[i] = wr[i] = -1;
		if (l->lost)
			continue;
		if (!TAILQ_EMPTY(&l->reqs)) {
			pfd[n].fd = l->fd_in;
			pfd[n].events = POLLIN;
			rd[i] = n++;
		}
		if (sshbuf_len(l->out) > 0) {
			pfd[n].fd = l->fd_out;
			pfd[n].events = POLLOUT;
			wr[i] = n++;
		}
	}
	if (n == 0)
		return;
	if (poll(pfd, n, -1) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		fatal_f("poll: %s", strerror(errno));
	}
	for (i = 0; i < nlanes; i++) {
		l = b->lanes[i];
		if (wr[i] != -1 && pfd[wr[i]].revents != 0)
			(void)lane_flush(b, l, 0);
		if (rd[i] != -1 && pfd[rd[i]].revents != 0 && !l->lost &&
		    !TAILQ_EMPTY(&l->reqs))
			lane_read(b, l);
	}
}

static struct xfer *
xfer_new(struct sftp_batch *b, const char *src, const char *dst)
{
	struct xfer *x;

	x = xcalloc(1, sizeof(*x));
	x->arg = b->arg;
	x->src = src == NULL ? NULL : xstrdup(src);
	x->dst = dst == NULL ? NULL : xstrdup(dst);
	x->fd = -1;
	x->state = XFER_QUEUED;
	x->status = SSH2_FX_OK;
	x->end = RANGE_EOF;
	attrib_clear(&x->a);
	return x;
}

/* A queue entry for a note of kind (NOTE_*) with text, or none. */
static struct xfer *
note_new(struct sftp_batch *b, int kind, const char *text)
{
	struct xfer *x = xfer_new(b, NULL, NULL);

	x->note = xcalloc(1, sizeof(*x->note));
	x->note->kind = kind;
	x->note->text = text == NULL ? NULL : xstrdup(text);
	return x;
}

/*
 * Whether the caller must wait before it goes on: too many files are
 * queued, or the server allows one open handle and a file holds it
 * (the next directory could not be listed).
 */
static int
batch_full(const struct sftp_batch *b)
{
	if (b->nqueued > b->max_files)
		return 1;
	return (b->params.open_handles == 1 || b->one_file) &&
	    (b->nqueued > 0 || b->nreqs != 0);
}

/* Queue a file; wait while the batch is full. */
static int
batch_add(struct sftp_batch *b, struct xfer *x)
{
	TAILQ_INSERT_TAIL(&b->queued, x, tq);
	b->nqueued++;
	b->nfiles++;
	batch_fill(b);
	batch_reap(b);
	while (batch_full(b) && !interrupted)
		batch_step(b);
	batch_leave(b);
	return 0;
}

/* Add a file of a directory, with the attributes its listing gave. */
int
sftp_batch_add(struct sftp_batch *b, const char *src, const char *dst,
    const Attrib *a)
{
	struct xfer *x;

	if (interrupted)
		return -1;
	x = xfer_new(b, src, dst);
	if (a != NULL)
		x->a = *a;
	return batch_add(b, x);
}

/*
 * Add a file the user named: a download stats it first.  Its errors are
 * those of sftp_upload() and sftp_download().
 */
int
sftp_batch_file(struct sftp_batch *b, const char *src, const char *dst)
{
	struct xfer *x;

	if (interrupted)
		return -1;
	x = xfer_new(b, src, dst);
	x->named = 1;
	x->dl.stat_needed = batch_download(b);
	return batch_add(b, x);
}

static void
note_add(struct sftp_batch *b, int kind, const char *say)
{
	struct xfer *x = note_new(b, kind, say);

	TAILQ_INSERT_TAIL(&b->queued, x, tq);
	batch_fill(b);
	batch_reap(b);
	batch_leave(b);
}

static void
batch_arg_end(struct sftp_batch *b)
{
	if (b->arg != NULL)
		note_add(b, NOTE_END, NULL);
	b->arg = NULL;
}

/*
 * A line for standard output, printed when everything added before it
 * is done: "Uploading", "Entering" and the like come between the
 * progress meter's lines of the files before and after it.
 */
void
sftp_batch_say(struct sftp_batch *b, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	xvasprintf(&line, fmt, ap);
	va_end(ap);
	note_add(b, NOTE_SAY, line);
	free(line);
}

/*
 * What is added from now on is one argument of the user's: failmsg is
 * logged once its last file is done, if any of them failed.
 */
void
sftp_batch_arg(struct sftp_batch *b, const char *failmsg)
{
	struct xarg *arg;

	batch_arg_end(b);
	arg = xcalloc(1, sizeof(*arg));
	arg->failmsg = xstrdup(failmsg);
	TAILQ_INSERT_TAIL(&b->args, arg, tq);
	b->arg = arg;
}

/* The current argument failed outside the batch. */
void
sftp_batch_arg_failed(struct sftp_batch *b)
{
	b->failed = 1;
	if (b->arg != NULL)
		b->arg->failed = 1;
}

/*
 * A directory to finish once every file is in: an upload sets a's
 * attributes on it; a download sets its times (-p) and then its mode.
 */
void
sftp_batch_dir(struct sftp_batch *b, const char *path, const Attrib *a,
    int mode)
{
	struct xfer *x;

	x = xfer_new(b, path, path);
	x->a = *a;
	x->mode = mode;
	TAILQ_INSERT_TAIL(&b->dirs, x, tq);
}

static void
local_dir_done(struct sftp_batch *b, struct xfer *x)
{
	struct timeval tv[2];

	if ((b->flags & SFTP_BATCH_PRESERVE) &&
	    (x->a.flags & SSH2_FILEXFER_ATTR_ACMODTIME)) {
		tv[0].tv_sec = x->a.atime;
		tv[1].tv_sec = x->a.mtime;
		tv[0].tv_usec = tv[1].tv_usec = 0;
		if (utimes(x->dst, tv) == -1)
			error("local set times on \"%s\": %s",
			    x->dst, strerror(errno));
	} else if (b->flags & SFTP_BATCH_PRESERVE)
		debug("Server did not send times for directory \"%s\"",
		    x->dst);
	if (x->mode != -1 && chmod(x->dst, x->mode) == -1)
		error("local chmod directory \"%s\": %s", x->dst,
		    strerror(errno));
}

/* Directories, innermost first: the order they were added in. */
static void
batch_dirs(struct sftp_batch *b)
{
	struct xfer *x;

	TAILQ_FOREACH(x, &b->dirs, tq) {
		if (batch_download(b)) {
			local_dir_done(b, x);
			continue;
		}
		debug2("Sending SSH2_FXP_SETSTAT \"%s\"", x->dst);
		x->lane = b->lanes[0];
		send_path_setstat(b, x, &x->a);
	}
	while (b->nreqs != 0)
		batch_step(b);
}

/* Wait for every file; -1 if any failed or was left by an interrupt. */
int
sftp_batch_finish(struct sftp_batch *b)
{
	struct xfer *x;

	batch_arg_end(b);
	for (;;) {
		batch_step(b);
		if (b->nreqs == 0 &&
		    (interrupted || TAILQ_EMPTY(&b->queued)))
			break;
	}
	batch_reap(b);
	if ((x = TAILQ_FIRST(&b->active)) != NULL)
		fatal_f("\"%s\" left unfinished", x->src);
	meter_stop(b, 1);
	queued_logs_print(b);
	set_log_handler(NULL, NULL);
	batch_dirs(b);
	batch_leave(b);
	debug_f("%u files, up to %u open at once", b->nfiles, b->peak);
	if (b->nlanes > 1)
		debug("%u files over %u streams", b->nfiles, b->nlanes);
	if (!TAILQ_EMPTY(&b->queued) || interrupted)
		b->failed = 1;
	return b->failed ? -1 : 0;
}
