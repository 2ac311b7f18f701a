/*
 * Copyright (c) 2026 The hpn-patches authors
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
 * test_progressmeter: scp and sftp's progress meter (the patched tree's
 * progressmeter.c, compiled in here so that its state can be read) fed
 * by a fake clock and a fake byte counter, in a child whose controlling
 * terminal and stdout is a pseudo-terminal 100 columns wide.  Rates of
 * 2 GiB/s and more must not overflow: the average stays positive and
 * exact, and the peak is never below it, both in the meter's state and
 * on the lines it prints (which the parent reads from the terminal).
 * Prints "ok - NAME" or "not ok - NAME" per case and a summary line.
 */

/* The meter's clock is ours; the rest of misc.c comes from libssh.a. */
#define monotime_double fake_monotime_double
#include "progressmeter.c"
#undef monotime_double

#include <sys/wait.h>

#include <fcntl.h>
#include <termios.h>

#include "unit.h"

#define GiB	((off_t)1 << 30)
#define COLS	100
#define T0	1000.0

static double fake_now = T0;
static off_t fake_counter;
static FILE *results;			/* child: to the parent */

double
fake_monotime_double(void)
{
	return fake_now;
}

/* Child: report one case to the parent as "0|1 text". */
static void
child_result(int ok, const char *name, const char *why)
{
	fprintf(results, "%d %s%s%s\n", ok, name, ok ? "" : ": ",
	    ok ? "" : why);
	fflush(results);
}

struct step {
	double	dt;		/* seconds since the previous step */
	off_t	pos;		/* counter after it */
};

/*
 * Child: run the meter over a file of size bytes through steps, refreshing
 * after each one as the SIGALRM handler would; check its state after each
 * refresh, and when the file is complete check the average and the peak.
 */
static void
run_case(const char *name, off_t size, const struct step *steps, int nsteps)
{
	char why[256];
	double elapsed = 0, avg;
	int i, ok = 1;

	why[0] = '\0';
	fake_now = T0;
	fake_counter = 0;
	start_progress_meter(name, size, &fake_counter);
	for (i = 0; i < nsteps; i++) {
		fake_now += steps[i].dt;
		elapsed += steps[i].dt;
		fake_counter = steps[i].pos;
		refresh_progress_meter(1);
		if (ok && bytes_per_second <= 0) {
			snprintf(why, sizeof(why), "step %d: average %lld "
			    "B/s after %lld bytes", i, (long long)
			    bytes_per_second, (long long)steps[i].pos);
			ok = 0;
		}
	}
	/* Complete: the average over the whole file, the peak not below. */
	avg = (double)size / elapsed;
	if (ok && (bytes_per_second < avg - 1 || bytes_per_second > avg + 1)) {
		snprintf(why, sizeof(why), "final average %lld B/s, "
		    "expected %.0f", (long long)bytes_per_second, avg);
		ok = 0;
	}
	if (ok && peak_rate < bytes_per_second) {
		snprintf(why, sizeof(why), "peak %lld B/s below the average "
		    "%lld B/s", (long long)peak_rate,
		    (long long)bytes_per_second);
		ok = 0;
	}
	stop_progress_meter();
	child_result(ok, name, why);
}

static void
child(int tty, int resfd)
{
	/* 3 GiB in one second: the average is 3 GiB/s. */
	static const struct step one[] = { { 1.0, 3 * GiB } };
	/* Too short an interval for a sample: the peak is the average. */
	static const struct step quarter[] = { { 0.25, 3 * GiB } };
	/* 3 GiB/s for a second, then 1 GiB/s: 2 GiB/s, peak 3 GiB/s. */
	static const struct step burst[] = {
		{ 1.0, 3 * GiB }, { 1.0, 4 * GiB }
	};

	alarm(10);
	if ((results = fdopen(resfd, "w")) == NULL)
		_exit(3);
	/* Our terminal, in the foreground: can_output() is true. */
	if (setsid() == -1 || ioctl(tty, TIOCSCTTY, 0) == -1 ||
	    dup2(tty, STDOUT_FILENO) == -1) {
		child_result(0, "terminal", strerror(errno));
		_exit(3);
	}
	close(tty);
	if (!can_output()) {
		child_result(0, "terminal", "not in the foreground");
		_exit(3);
	}
	run_case("3GiB-in-1s", 3 * GiB, one, 1);
	run_case("3GiB-in-0.25s", 3 * GiB, quarter, 1);
	run_case("3GiB-then-1GiB", 4 * GiB, burst, 2);
	fclose(results);
	_exit(0);
}

/* "3.0GB" to bytes; -1 if it does not parse. */
static double
rate_bytes(double v, char u, char b)
{
	const char *units = "KMGT", *p;
	double m = 1024;

	if (b != 'B' || u == '\0' || (p = strchr(units, u)) == NULL)
		return -1;
	for (; p > units; p--)
		m *= 1024;
	return v * m;
}

/*
 * Parent: each completed file's line must read "100% SIZE AVG/s PEAK/s
 * peak" with 0 < AVG <= PEAK, and no line may be wider than the terminal.
 */
static void
check_lines(char *out, int ncases)
{
	char *line, *p, au, ab, pu, pb;
	double avg, peak, a, b;
	int npeak = 0, bad = 0, wide = 0;

	for (p = out; (line = strsep(&p, "\r\n")) != NULL; ) {
		if (strlen(line) > COLS)
			wide++;
		if (strstr(line, " peak") == NULL)
			continue;
		npeak++;
		au = ab = pu = pb = '\0';
		if ((line = strstr(line, " 100% ")) == NULL ||
		    sscanf(line + 6, "%*s %lf%c%c/s %lf%c%c/s peak",
		    &avg, &au, &ab, &peak, &pu, &pb) != 6 ||
		    (a = rate_bytes(avg, au, ab)) <= 0 ||
		    (b = rate_bytes(peak, pu, pb)) < a) {
			printf("# bad final line: %s\n",
			    line == NULL ? "(no 100%)" : line);
			bad++;
		} else
			printf("# final line:%s\n", line);
	}
	result(npeak == ncases && bad == 0, "printed: %d final lines with "
	    "0 < average <= peak, of %d", npeak - bad, ncases);
	result(wide == 0, "printed: %d lines wider than %d columns", wide,
	    COLS);
}

int
main(void)
{
	struct winsize ws;
	char *out = NULL, *tmp, line[512], *sp;
	size_t outlen = 0;
	ssize_t r;
	int master, tty, pfd[2], status, ok;
	FILE *f;
	pid_t pid;

	memset(&ws, 0, sizeof(ws));
	ws.ws_col = COLS;
	ws.ws_row = 24;
	if ((master = posix_openpt(O_RDWR | O_NOCTTY)) == -1 ||
	    grantpt(master) == -1 || unlockpt(master) == -1 ||
	    (sp = ptsname(master)) == NULL ||
	    (tty = open(sp, O_RDWR | O_NOCTTY)) == -1 ||
	    ioctl(master, TIOCSWINSZ, &ws) == -1 || pipe(pfd) == -1) {
		result(0, "setup: pseudo-terminal: %s", strerror(errno));
		goto done;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		result(0, "setup: fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0) {
		close(master);
		close(pfd[0]);
		child(tty, pfd[1]);
	}
	close(tty);
	close(pfd[1]);
	/* What the meter printed, until the child's end closes the tty. */
	for (;;) {
		if ((tmp = realloc(out, outlen + sizeof(line) + 1)) == NULL) {
			result(0, "setup: realloc failed");
			goto done;
		}
		out = tmp;
		if ((r = read(master, out + outlen, sizeof(line))) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			break;
		}
		outlen += r;
	}
	out[outlen] = '\0';
	if ((f = fdopen(pfd[0], "r")) == NULL) {
		result(0, "setup: fdopen: %s", strerror(errno));
		goto done;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strlen(line) > 2)
			result(line[0] == '1', "%s", line + 2);
	}
	fclose(f);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	result(ok, "child: exit status %d%s", WIFEXITED(status) ?
	    WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? " (signal)" : "");
	if (ok)
		check_lines(out, 3);
 done:
	free(out);
	return summary();
}
