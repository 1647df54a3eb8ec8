// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, its state and its log, below its other parts: the one
 * struct daemon (daemon.h), the stop flag its signals set, the log line
 * (say()), the summary for codectl status (state_write()), and the files
 * handled this run, by an identity no user can copy (the ctime).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

struct daemon d;
volatile sig_atomic_t stop;
int quiet;

void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	fputs("codectl-daemon: ", stderr);
	if (d.log_times) {
		struct timespec ts;

		/* CLOCK_MONOTONIC: perf record -k mono's sample times. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		fprintf(stderr, "[%lld.%06ld] ", (long long)ts.tv_sec,
			ts.tv_nsec / 1000);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- the state file, for codectl status -------------------------------- */

/* The summary codectl status reads, replaced whole. */
void state_write(void)
{
	char tmp[4096];
	unsigned int i;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d.state);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "pid %d\nstarted %lld\ncache %s\nqueued %lu\n"
		"imported %lu\nfrom_cache %lu\nsynthesised %lu\n"
		"synth_ms %.0f\nno_cfi %lu\nown_sframe %lu\nfailed %lu\n"
		"replaced %lu\nrescans %lu\nlost %lu\n",
		(int)getpid(), (long long)d.started, d.cache, d.queued,
		d.imported, d.cached, d.synthesised, d.synth_ms, d.no_cfi,
		d.own, d.failed, d.gone, d.rescans, d.lost);
	for (i = 0; i < d.nfailed; i++)
		fprintf(f, "uncovered %s\n", d.failed_paths[i]);
	if (fclose(f) == 0)
		rename(tmp, d.state);
}

/* An object not covered: counted, and kept among the last few. */
void note_failed(const char *path, const char *why)
{
	d.failed++;
	if (d.nfailed == FAILED_KEPT) {
		memmove(d.failed_paths[0], d.failed_paths[1],
			(FAILED_KEPT - 1) * sizeof(d.failed_paths[0]));
		d.nfailed--;
	}
	snprintf(d.failed_paths[d.nfailed++], sizeof(d.failed_paths[0]),
		 "%s (%s)", path, why);
}

/* ---- files handled this run -------------------------------------------- */

/* The same file as the module keys it (the ctime aside). */
int ident_same_file(const struct ident *a, const struct ident *b)
{
	return a->f.dev == b->f.dev && a->f.ino == b->f.ino &&
	       a->f.size == b->f.size && a->f.mtime_sec == b->f.mtime_sec &&
	       a->f.mtime_nsec == b->f.mtime_nsec;
}

/*
 * Handled this run: the same file with the same ctime.  A user can give
 * a file any mtime, not a ctime: a file of theirs rewritten (touch -r
 * after), or an inode of theirs reused for another file, is looked at
 * again.
 */
struct ident *seen_find(const struct ident *id)
{
	unsigned int i;

	for (i = 0; i < d.nseen; i++)
		if (ident_same_file(&d.seen[i], id) &&
		    d.seen[i].f.ctime_sec == id->f.ctime_sec &&
		    d.seen[i].f.ctime_nsec == id->f.ctime_nsec)
			return &d.seen[i];
	return NULL;
}

void seen_add(const struct ident *id)
{
	if (d.nseen == SEEN_MAX)
		d.nseen = 0;	/* forget all: at worst a second look */
	d.seen[d.nseen++] = *id;
}

void ident_of_stat(const struct stat *st, struct ident *id)
{
	memset(id, 0, sizeof(*id));
	stamp_of_stat(st, &id->f);
}
