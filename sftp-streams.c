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
 * More SFTP sessions for one scp or sftp (sftp-streams.h).
 *
 * A stock server gives each session channel a window of 2 MiB: an
 * upload over one channel moves 2 MiB per round trip, whatever the link
 * (20 MB/s at 100 ms).  Each further session has a window of its own.
 *
 * The extra sessions are channels of the same connection: scp and sftp
 * make their ssh the master of a control socket of their own, in a
 * directory only they use (ControlMaster, ControlPath), and each stream
 * is an ssh that asks that master for one more session running the
 * sftp subsystem.  That needs nothing of the server but what it gives
 * every client (MaxSessions, 10 by default), and no second login; ssh
 * itself is unchanged, so a stock ssh given with -S works the same.  A
 * session the server refuses makes that stream's ssh fail (it is given
 * a ProxyCommand that fails, so that it never logs in anew): no more
 * streams open, and the copy goes on over those there are.
 *
 * -X connections=N asks for N connections: the first N - 1 extra
 * streams log in anew, without a prompt (BatchMode: keys, an agent,
 * GSSAPI), each to its own sshd and so its own CPU; those logins start
 * just after the copy's own ssh (sftp_streams_early()), not once a batch
 * wants them.  Each such ssh is the master of a control socket of its
 * own too, and the further streams are channels spread over every
 * connection (the fewest sessions first, up to an even share while
 * logins are still to come):
 * a server's MaxSessions is per connection, and at 600 ms a stock
 * window asks for more sessions than one connection holds.
 *
 * With -D (no ssh), each stream runs the server command again.
 *
 * Streams stay open from the first batch that wants them to the end of
 * the program, for the next batch (sftp's next get or put).
 */

#include "includes.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmalloc.h"
#include "log.h"
#include "misc.h"
#include "sshbuf.h"
#include "sftp.h"
#include "sftp-common.h"
#include "sftp-client.h"
#include "sftp-streams.h"

/* An extra stream: its session and the process that carries it. */
struct stream {
	struct sftp_conn *conn;
	pid_t pid;
	int fd_in, fd_out;
	int login;		/* a connection of its own */
	int early;		/* started beside the copy's own login */
	u_int master;		/* the connection it is a session of */
};

/*
 * A connection whose master the streams ask for sessions: masters[0]
 * is the copy's own connection (its ssh, or the user's master), the
 * others are the extra logins, each its own ssh -M.  States:
 * MASTER_LOGIN	its login is under way (this round); no channel yet;
 * MASTER_UP	it takes channels; sessions counts its own and those;
 * MASTER_FULL	it refused one (MaxSessions), or its login failed: no
 *		more through it; sessions still counts those it has.
 */
enum master_state { MASTER_LOGIN, MASTER_UP, MASTER_FULL };
struct master {
	enum master_state state;
	char *path;		/* its control socket */
	u_int sessions;
};

static u_int streams_max;	/* -X streams=N; 0: by itself (auto) */
static u_int connections = 1;	/* -X connections=N */
static arglist stream_args;	/* an extra stream's command line */
static arglist login_args;	/* an extra connection's */
static int have_args;
static u_int ctl_index;		/* the main command line's ControlMaster */
static char *ctl_dir;
static int prepared;		/* sftp_streams_ssh() ran */
static int main_ours;		/* the connection's ssh is our master */
static int direct;		/* -D: the server command again */
static int streams_off;		/* a second connection: none at all */
static int logins_refused;	/* a login failed: no more */
static int direct_refused;	/* -D: one failed to start: no more */
static struct sftp_conn *main_conn;
static struct stream streams[SFTP_STREAMS_MAX];
static u_int nstreams, nlogins;
static struct master masters[SFTP_STREAMS_MAX];
static u_int nmasters;
static struct stream pend[SFTP_STREAMS_MAX];	/* no VERSION yet */
static u_int npend;
static pid_t reap[SFTP_STREAMS_MAX];	/* logins whose session ended */
static u_int nreap;

static void stream_failed(struct stream *);

/* -X streams=N, -X connections=N: 0 if it is one of those. */
int
sftp_streams_option(const char *opt)
{
	const char *errstr, *val, *what;
	u_int *v;

	if (strncmp(opt, "streams=", 8) == 0) {
		v = &streams_max;
		val = opt + 8;
		what = "streams";
		if (strcmp(val, "auto") == 0) {
			*v = 0;
			return 0;
		}
	} else if (strncmp(opt, "connections=", 12) == 0) {
		v = &connections;
		val = opt + 12;
		what = "connections";
	} else
		return -1;
	*v = (u_int)strtonum(val, 1, SFTP_STREAMS_MAX, &errstr);
	if (errstr != NULL)
		fatal("Invalid number of %s \"%s\": %s", what, val, errstr);
	return 0;
}

/* Streams a batch may use, its own connection's included. */
u_int
sftp_streams_max(void)
{
	if (!have_args || streams_off)
		return 1;
	if (streams_max == 0)
		return MAXIMUM(SFTP_STREAMS_AUTO, connections);
	return MAXIMUM(streams_max, connections);
}

/* Whether more streams open only where they help (sftp-batch.c). */
int
sftp_streams_auto(void)
{
	return streams_max == 0 && connections == 1;
}

/*
 * The control sockets of ours and their directory go: at exit, from
 * scp's and sftp's killchild() and scp's lostconn() (signal handlers
 * that _exit: only what one may do here), and from sftp's cleanup_exit()
 * (fatal(), which does not exit()).
 * A stream's ssh still running ends on its own once it sees its session
 * end; the masters have their sockets open and need not their names.
 */
void
sftp_streams_cleanup(void)
{
	u_int i;

	/* Logins not yet taken (sftp_streams_early()) stop. */
	for (i = 0; i < npend; i++) {
		if (pend[i].pid > 1)
			(void)kill(pend[i].pid, SIGTERM);
	}
	if (ctl_dir == NULL)
		return;
	/* Those of ours (masters[0] may be the user's). */
	for (i = 0; i < nmasters; i++) {
		if (strncmp(masters[i].path, ctl_dir, strlen(ctl_dir)) == 0)
			(void)unlink(masters[i].path);
	}
	(void)rmdir(ctl_dir);
}

/*
 * args with the ControlMaster option at ctl_index replaced by opts (a
 * NULL-terminated list; the second is always the ControlPath).
 */
static void
args_with(arglist *out, const arglist *args, const arglist *tail,
    const char **opts)
{
	u_int i, j;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < args->num; i++) {
		if (i != ctl_index) {
			addargs(out, "%s", args->list[i]);
			continue;
		}
		for (j = 0; opts[j] != NULL; j++)
			addargs(out, "%s", opts[j]);
	}
	for (i = 0; tail != NULL && i < tail->num; i++)
		addargs(out, "%s", tail->list[i]);
}

/* A new entry of masters[] for the socket path (NULL: one of ours). */
static u_int
master_new(const char *path, enum master_state state)
{
	struct master *m = &masters[nmasters];

	if (nmasters >= SFTP_STREAMS_MAX)
		fatal_f("too many connections");
	m->state = state;
	m->sessions = 1;
	if (path != NULL)
		m->path = xstrdup(path);
	else
		xasprintf(&m->path, "%s/c%u", ctl_dir, nmasters);
	return nmasters++;
}

/*
 * The control socket the user's configuration gives the connection, if
 * one is there (a master the user started): what ssh -G says of the
 * same command line.
 */
static char *
user_master(const arglist *args, const arglist *tail)
{
	arglist g;
	struct stat st;
	FILE *f;
	char *line = NULL, *path = NULL;
	size_t len = 0;
	int p[2], devnull;
	pid_t pid;
	u_int i;

	memset(&g, 0, sizeof(g));
	addargs(&g, "%s", args->list[0]);
	addargs(&g, "-G");
	for (i = 1; i < args->num; i++)
		addargs(&g, "%s", args->list[i]);
	for (i = 0; tail != NULL && i < tail->num; i++)
		addargs(&g, "%s", tail->list[i]);
	if (pipe(p) == -1 || (pid = fork()) == -1) {
		freeargs(&g);
		return NULL;
	}
	if (pid == 0) {
		if (dup2(p[1], STDOUT_FILENO) == -1)
			_exit(1);
		if ((devnull = open(_PATH_DEVNULL, O_RDWR)) != -1) {
			(void)dup2(devnull, STDIN_FILENO);
			(void)dup2(devnull, STDERR_FILENO);
		}
		closefrom(STDERR_FILENO + 1);
		execvp(g.list[0], g.list);
		_exit(1);
	}
	close(p[1]);
	if ((f = fdopen(p[0], "r")) == NULL)
		close(p[0]);
	while (f != NULL && getline(&line, &len, f) != -1) {
		line[strcspn(line, "\r\n")] = '\0';
		if (path == NULL && strncmp(line, "controlpath ", 12) == 0 &&
		    strcmp(line + 12, "none") != 0)
			path = xstrdup(line + 12);
	}
	if (f != NULL)
		fclose(f);
	free(line);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	freeargs(&g);
	if (path != NULL && (stat(path, &st) == -1 || !S_ISSOCK(st.st_mode))) {
		free(path);
		path = NULL;
	}
	return path;
}

/*
 * args is the ssh command line of the connection, with its ControlMaster
 * option ("-oControlMaster no", as scp and sftp give it); tail, if not
 * NULL, what follows it (the host and the subsystem).  Where streams may
 * open, the ssh becomes the master of a private control socket, and the
 * command lines of extra streams are kept.  A second connection (scp
 * between two remotes) has no streams, nor has the first.
 */
void
sftp_streams_ssh(arglist *args, const arglist *tail)
{
	const char *tmp;
	char *path, *upath;
	arglist m;
	u_int i;

	if (prepared) {
		if (main_ours) {
			replacearg(args, ctl_index, "-oControlMaster=no");
			replacearg(args, ctl_index + 1, "-oControlPath=none");
		}
		/* The logins the first started (sftp_streams_early()). */
		for (i = 0; i < npend; i++)
			stream_failed(&pend[i]);
		npend = 0;
		streams_off = 1;
		return;
	}
	prepared = 1;
	if (streams_max == 1 && connections == 1)
		return;
	for (i = 0; i < args->num; i++) {
		if (strncasecmp(args->list[i], "-oControlMaster", 15) == 0)
			break;
	}
	if (i == args->num) {
		/* 9.2p1's scp gives none: one as later ones give it. */
		memset(&m, 0, sizeof(m));
		addargs(&m, "%s", args->list[0]);
		addargs(&m, "-oControlMaster=no");
		for (i = 1; i < args->num; i++)
			addargs(&m, "%s", args->list[i]);
		freeargs(args);
		*args = m;
		i = 1;
	}
	ctl_index = i;
	/*
	 * A master the user started for this host (ControlPath): the
	 * streams are its sessions, as the connection itself is.
	 */
	upath = user_master(args, tail);
	if (upath == NULL || connections > 1) {
		/* A socket's path is short: ssh adds 17 bytes meanwhile. */
		if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0' ||
		    strlen(tmp) > 48)
			tmp = "/tmp";
		xasprintf(&ctl_dir, "%s/sftp-streams.XXXXXX", tmp);
		if (mkdtemp(ctl_dir) == NULL) {
			debug_f("mkdtemp %s: %s: one stream", ctl_dir,
			    strerror(errno));
			free(ctl_dir);
			ctl_dir = NULL;
			free(upath);
			return;
		}
		atexit(sftp_streams_cleanup);
	}
	(void)master_new(upath, MASTER_UP);
	if (upath != NULL)
		debug_f("streams through the master at %s", upath);
	/*
	 * The ControlPath (second) is the master's each is started with.
	 * Where the master refuses, ssh would connect itself: it fails.
	 */
	args_with(&stream_args, args, tail, (const char *[]){
	    "-oControlMaster=no", "-oControlPath=none",
	    "-oProxyCommand=false", NULL });
	args_with(&login_args, args, tail, (const char *[]){
	    "-oControlMaster=yes", "-oControlPath=none",
	    "-oControlPersist=no", "-oBatchMode=yes", NULL });
	have_args = 1;
	if (upath != NULL) {
		free(upath);
		return;
	}
	xasprintf(&path, "-oControlPath=%s", masters[0].path);
	args_with(&m, args, NULL, (const char *[]){ "-oControlMaster=yes",
	    path, "-oControlPersist=no", NULL });
	free(path);
	freeargs(args);
	*args = m;
	main_ours = 1;
}

/* -D: each stream runs the server command again. */
void
sftp_streams_direct(const char *command)
{
	int r, argc;
	char **argv;
	u_int i;

	if (streams_max == 1 && connections == 1)
		return;
	if ((r = argv_split(command, &argc, &argv, 1)) != 0 || argc == 0) {
		debug_f("cannot split \"%s\": one stream", command);
		return;
	}
	memset(&stream_args, 0, sizeof(stream_args));
	for (i = 0; i < (u_int)argc; i++)
		addargs(&stream_args, "%s", argv[i]);
	argv_free(argv, argc);
	memset(&login_args, 0, sizeof(login_args));
	for (i = 0; i < stream_args.num; i++)
		addargs(&login_args, "%s", stream_args.list[i]);
	have_args = direct = 1;
}

/* Start argv with its standard input and output ours; -1 if it fails. */
static int
stream_start(struct stream *s, char **argv)
{
	int devnull;
#ifdef USE_PIPES
	int pin[2], pout[2];

	if (pipe(pin) == -1 || pipe(pout) == -1) {
		error_f("pipe: %s", strerror(errno));
		return -1;
	}
#else
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1) {
		error_f("socketpair: %s", strerror(errno));
		return -1;
	}
#endif
	if ((s->pid = fork()) == -1) {
		error_f("fork: %s", strerror(errno));
		return -1;
	}
	if (s->pid == 0) {
#ifdef USE_PIPES
		if (dup2(pin[0], STDIN_FILENO) == -1 ||
		    dup2(pout[1], STDOUT_FILENO) == -1)
			_exit(1);
#else
		if (dup2(sv[1], STDIN_FILENO) == -1 ||
		    dup2(sv[1], STDOUT_FILENO) == -1)
			_exit(1);
#endif
		closefrom(STDERR_FILENO + 1);
		/* What a refused stream says is not for the user. */
		if (log_level_get() < SYSLOG_LEVEL_DEBUG1 &&
		    (devnull = open(_PATH_DEVNULL, O_WRONLY)) != -1) {
			(void)dup2(devnull, STDERR_FILENO);
			if (devnull > STDERR_FILENO)
				close(devnull);
		}
		/*
		 * ssh's master writes this stream's data to these (passed
		 * to it), in the mode they had: without O_NONBLOCK it would
		 * wait on a lane scp or sftp is not reading at that moment,
		 * and so hold back every other lane.
		 */
		if (!direct && (set_nonblock(STDIN_FILENO) == -1 ||
		    set_nonblock(STDOUT_FILENO) == -1))
			_exit(1);
		/* ^C stops the copy, not its streams (as sftp's ssh). */
		ssh_signal(SIGINT, SIG_IGN);
		ssh_signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		_exit(1);
	}
#ifdef USE_PIPES
	close(pin[0]);
	close(pout[1]);
	s->fd_in = pout[0];
	s->fd_out = pin[1];
#else
	close(sv[1]);
	s->fd_in = s->fd_out = sv[0];
#endif
	fcntl(s->fd_in, F_SETFD, FD_CLOEXEC);
	fcntl(s->fd_out, F_SETFD, FD_CLOEXEC);
	return 0;
}

/* Close stream s's session: its ssh ends once it sees that. */
static void
stream_close(struct stream *s)
{
	if (s->fd_in != -1)
		close(s->fd_in);
	if (s->fd_out != s->fd_in && s->fd_out != -1)
		close(s->fd_out);
	s->fd_in = s->fd_out = -1;
	sftp_stream_free(s->conn);
	s->conn = NULL;
}

/* Wait for a stream's ssh. */
static void
stream_wait(pid_t pid)
{
	while (pid > 1 && waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

/*
 * A login's ssh whose session ended serves the channels of others on:
 * it is waited for at the end (sftp_streams_close()), or now if reap[]
 * is full of those still running.
 */
static void
stream_wait_later(pid_t pid)
{
	u_int i;

	/* Those that ended meanwhile first make room. */
	for (i = 0; nreap == SFTP_STREAMS_MAX && i < nreap; i++) {
		if (waitpid(reap[i], NULL, WNOHANG) == reap[i])
			reap[i--] = reap[--nreap];
	}
	if (nreap < SFTP_STREAMS_MAX)
		reap[nreap++] = pid;
	else
		stream_wait(pid);
}

/* Stop stream s, started but not (or no more) wanted. */
static void
stream_kill(struct stream *s)
{
	if (s->pid > 1)
		kill(s->pid, SIGTERM);
	stream_close(s);
	stream_wait(s->pid);
	s->pid = -1;
}

/* The rules of struct master's states, above. */
static void
master_assert(const struct master *m)
{
	if (m->path == NULL ||
	    (m->state == MASTER_LOGIN && m->sessions != 1) ||
	    (m->state == MASTER_UP && m->sessions == 0) ||
	    m->sessions > SFTP_STREAMS_MAX)
		fatal_f("master %s: state %d with %u sessions",
		    m->path == NULL ? "(none)" : m->path, (int)m->state,
		    m->sessions);
}

/* Stream s did not start: stopped, no more through its master (or logins). */
static void
stream_failed(struct stream *s)
{
	stream_kill(s);
	if (direct) {
		direct_refused = 1;
		return;
	}
	/* Before the copy's own login, a host key may not be known yet. */
	if (s->login && !s->early)
		logins_refused = 1;
	masters[s->master].sessions--;
	masters[s->master].state = MASTER_FULL;
}

/*
 * What the next stream is: a login (1) while fewer than connections - 1
 * are there or pending, else a channel of the master *mp: the one with
 * the fewest sessions of those that take more, up to an even share of
 * the streams while a login is still to come (its connection takes the
 * rest).  -1: none can open now.
 */
static int
stream_kind(u_int *mp)
{
	u_int i, best = 0, share, logins = 0;
	int found = 0, more_logins;

	*mp = 0;
	for (i = 0; i < npend; i++)
		logins += pend[i].login;
	more_logins = !logins_refused && nlogins + logins + 1 < connections;
	if (more_logins && !direct && nmasters < SFTP_STREAMS_MAX)
		return 1;
	if (more_logins && direct)
		return 1;
	if (direct)
		return direct_refused ? -1 : 0;
	/* Logins pending or to come: none of theirs is up yet. */
	more_logins = logins > 0 ||
	    (!logins_refused && nlogins + 1 < connections);
	share = (sftp_streams_max() + connections - 1) / connections;
	for (i = 0; i < nmasters; i++) {
		master_assert(&masters[i]);
		if (masters[i].state != MASTER_UP ||
		    (more_logins && masters[i].sessions >= share))
			continue;
		if (!found || masters[i].sessions < masters[best].sessions)
			best = i;
		found = 1;
	}
	if (!found)
		return -1;
	*mp = best;
	return 0;
}

/*
 * The pending streams whose version came (or whose ssh ended), or with
 * wait all of them: each becomes a stream, or fails (stream_failed()).
 */
static void
streams_harvest(struct sftp_conn *main, int wait)
{
	struct pollfd pfd;
	struct stream *s;
	u_int i;

	for (i = 0; i < npend; i++) {
		s = &pend[i];
		pfd.fd = s->fd_in;
		pfd.events = POLLIN;
		if (!wait && (poll(&pfd, 1, 0) <= 0 || pfd.revents == 0))
			continue;
		if ((s->conn = sftp_init_stream(s->fd_in, s->fd_out,
		    main)) == NULL) {
			stream_failed(s);
			debug_f("a stream did not start");
		} else {
			if (s->login && !direct)
				masters[s->master].state = MASTER_UP;
			nlogins += s->login;
			streams[nstreams++] = *s;
			if (direct)
				debug_f("stream %u: the server command again",
				    nstreams);
			else
				debug_f("stream %u: %s %u", nstreams, s->login ?
				    "the login of connection" :
				    "a channel of connection", s->master + 1);
		}
		pend[i--] = pend[--npend];
	}
}

/*
 * Start the next stream of stream_kind(), its INIT sent; it is pending
 * until its VERSION comes (streams_harvest()).  early: a login only,
 * beside the copy's own (sftp_streams_early()).  -1 if none starts.
 */
static int
stream_begin(int early)
{
	struct stream *s;
	u_int m;
	int kind;

	if (npend >= SFTP_STREAMS_MAX)
		return -1;
	s = &pend[npend];
	memset(s, 0, sizeof(*s));
	s->fd_in = s->fd_out = -1;
	if ((kind = stream_kind(&m)) == -1 || (early && kind != 1))
		return -1;
	s->login = kind;
	s->early = early;
	if (s->login && !direct)
		m = master_new(NULL, MASTER_LOGIN);
	else if (!direct)
		masters[m].sessions++;
	s->master = m;
	if (!direct)
		replacearg(s->login ? &login_args : &stream_args,
		    ctl_index + 1, "-oControlPath=%s", masters[m].path);
	/* Each is sent its INIT now: its VERSION is harvested. */
	if (stream_start(s, s->login ? login_args.list :
	    stream_args.list) != 0 || sftp_stream_hello(s->fd_out) != 0) {
		stream_failed(s);
		return -1;
	}
	npend++;
	return 0;
}

/*
 * -X connections=N, just after the copy's own ssh started: the other
 * logins start too, beside its login rather than after it (a login is
 * some eight round trips, seconds at 600 ms), and are pending streams
 * until a batch takes them (sftp_streams_get()).  One that fails may
 * have failed for what the copy's own login settles (a host key the
 * user accepts): it is not taken as refused, and a batch starts it
 * again.
 */
void
sftp_streams_early(void)
{
	if (!have_args || streams_off || direct || main_conn != NULL)
		return;
	while (stream_begin(1) == 0)
		debug_f("stream %u starting beside the connection's own "
		    "login", npend);
}

/*
 * Extra stream n (1 and on) of the connection main: one open already,
 * or NULL.  Where none is ready, up to ahead are started at once (each
 * costs round trips: the login or the channel, the subsystem, the
 * version).  With wait (a short round trip) they are waited for, as
 * the batch's wait costs little.  Else they are pending, and the copy
 * goes on over the lanes it has meanwhile (sftp_streams_opening()): a
 * login takes seconds at 600 ms.  A later call takes those whose
 * version came.  NULL with none pending: no more open.
 */
struct sftp_conn *
sftp_streams_get(struct sftp_conn *main, u_int n, u_int ahead, int wait)
{
	u_int want;

	if (main_conn == NULL)
		main_conn = main;
	if (main != main_conn || n == 0 || n >= SFTP_STREAMS_MAX ||
	    n >= sftp_streams_max())
		return NULL;
	if (n <= nstreams)
		return streams[n - 1].conn;
	if (n != nstreams + 1)
		return NULL;
	streams_harvest(main, 0);
	if (n <= nstreams)
		return streams[n - 1].conn;
	want = MINIMUM(MAXIMUM(ahead, 1), sftp_streams_max() - n);
 again:
	while (npend < want) {
		if (stream_begin(0) != 0)
			break;
		if (!wait)
			debug_f("stream %u starting, not waited for: the "
			    "copy goes on over those open", nstreams + npend);
	}
	if (!wait || npend == 0)
		return NULL;
	/* Those that failed leave others to try (stream_kind()). */
	streams_harvest(main, 1);
	if (n > nstreams)
		goto again;
	return streams[n - 1].conn;
}

/* Whether streams are starting (sftp_streams_get()). */
int
sftp_streams_opening(void)
{
	return npend > 0;
}

/*
 * Stream conn's session ended: it is closed, and not used again.  A
 * login's ssh goes on while channels of others run through it: it is
 * waited for at the end, and takes no more.
 */
void
sftp_streams_lost(struct sftp_conn *conn)
{
	struct stream *s;
	u_int i;

	for (i = 0; i < nstreams; i++) {
		s = &streams[i];
		if (s->conn != conn)
			continue;
		if (!direct) {
			masters[s->master].sessions--;
			if (s->login)
				masters[s->master].state = MASTER_FULL;
		}
		stream_close(s);
		if (!direct && s->login && masters[s->master].sessions > 0)
			stream_wait_later(s->pid);
		else
			stream_wait(s->pid);
		nlogins -= s->login;
		memmove(s, s + 1, (nstreams - i - 1) * sizeof(*streams));
		nstreams--;
		/* Another may open in its place in the next batch. */
		return;
	}
}

/*
 * The end of the program: each stream's session ends, and then each
 * ssh is waited for (a login's serves the channels of others until
 * they end).
 */
void
sftp_streams_close(void)
{
	u_int i;

	for (i = 0; i < npend; i++)
		stream_kill(&pend[i]);
	for (i = 0; i < nstreams; i++)
		stream_close(&streams[i]);
	for (i = 0; i < nstreams; i++)
		stream_wait(streams[i].pid);
	for (i = 0; i < nreap; i++)
		stream_wait(reap[i]);
	npend = nstreams = nlogins = nreap = 0;
}
