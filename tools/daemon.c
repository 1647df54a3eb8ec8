// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool, "codectl daemon": SFrame synthesised on demand for
 * every object file an unwind meets without one, imported system-wide.
 *
 *   codectl daemon [--cache DIR] [--cache-max BYTES] [--state FILE]
 *   codectl daemon [--cache DIR] --prime PATH...
 *
 * The module queues each executable file mapping that discovery finds
 * with neither SFrame nor an import (module/demand.c); the daemon is the
 * queue's one reader (CODECTL_IOC_DEMAND).  Records wait in a list
 * served fairly, the system's objects first (daemon-shares.c); the queue
 * is read again after each object.  For each file it:
 *  1. opens the very file the process maps, /proc/PID/map_files/START-END
 *     (any mount namespace), else the path discovery saw, and checks it
 *     against the identity queued (device, inode, size, mtime): a file
 *     replaced meanwhile is left alone (its successor is queued when met);
 *  2. looks in the cache (daemon-cache.c) under its content's SHA-256,
 *     which the index gives without reading the file for a system file
 *     already hashed (daemon-index.c);
 *  3. else synthesises in a child process (daemon-synth.c) into it;
 *  4. imports the entry's section (codectl_import_sframe()); the module
 *     checks it against the file once more.
 *
 * At start, and whenever the module says records were lost (at most once
 * a second), it looks at every running process's executable mappings
 * itself (daemon-rescan.c).
 * Every 10 minutes it asks the module to drop imports of files whose
 * path no longer leads to them (CODECTL_IMPORT_PRUNE) and trims the
 * cache to BYTES (default 256 MiB).  It logs one line per object to
 * stderr (the journal, under systemd) and keeps a summary for "codectl
 * status" in FILE (default /run/codectl/daemon).  SIGTERM and SIGINT
 * end it.  --prime: daemon-prime.c; --hash: daemon-cache.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>
#include <linux/codectl.h>

#include "commands.h"
#include "daemon.h"

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- one file ---------------------------------------------------------- */

/*
 * Is the file at @fd, opened through /proc/PID/map_files, overlayfs' own
 * for the one queued?  A container's image: the mapping maps the file
 * underneath, whose device and inode the record has (the module keys the
 * file and its import by that one: codectl_file_inode()), while the file
 * opened is overlayfs', with a device and inode of its own, and the
 * size, times, owner and mode of the one underneath.
 */
static int overlay_of(int fd, const struct ident *want, const struct ident *got)
{
	return fd_on_overlay(fd) && want->f.size == got->f.size &&
	       want->f.mtime_sec == got->f.mtime_sec &&
	       want->f.mtime_nsec == got->f.mtime_nsec;
}

/* Open the file a record names and check it is the one queued. */
static int open_queued(const struct codectl_demand *r, struct stat *st)
{
	struct ident want = { .f = {
		.dev = r->dev, .ino = r->ino, .size = r->size,
		.mtime_sec = r->mtime_sec, .mtime_nsec = r->mtime_nsec,
	} };
	struct ident got;
	char p[128];
	int fd = -1, mapped = 0;

	if (r->pid) {
		snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx", r->pid,
			 (unsigned long long)r->vm_start,
			 (unsigned long long)r->vm_end);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		mapped = fd >= 0;
	}
	if (fd < 0 && r->path[0])
		fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	ident_of_stat(st, &got);
	if (ident_same_file(&want, &got))
		return fd;
	if (!mapped || !overlay_of(fd, &want, &got)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	/* Keyed as the module keys it: the index then serves each container. */
	st->st_dev = r->dev;
	st->st_ino = r->ino;
	return fd;
}

/*
 * Import the object open at @fd: from the cache, else synthesised into
 * it, the entry being the one of its content's SHA-256.  The import goes
 * through @fd too: the module keys it on that very file.  @name is for
 * the log.
 */
static enum verdict cover(int fd, const struct stat *st, const char *name,
			  unsigned int owner)
{
	char who[64];
	unsigned char md[DIGEST_LEN];
	struct entry_hdr hdr;
	char path[4200];
	void *sec;
	double t0, t_digest, t_entry, t_import;
	int r, tries, err, indexed;

	t_digest = now_ms();
	indexed = file_digest(fd, st, md, 1);
	if (indexed < 0) {
		say("cannot read %s: %s", name, strerror(errno));
		return V_GONE;
	}
	t_digest = now_ms() - t_digest;
	entry_path(md, path, sizeof(path));
	for (tries = 0; tries < 2; tries++) {
		t_entry = now_ms();
		r = entry_read(path, md, st->st_size, &hdr, &sec);
		t_entry = now_ms() - t_entry;
		if (r && indexed) {
			/*
			 * The index named an entry no longer there (trimmed)
			 * or bad: the file read and hashed after all.
			 */
			indexed = file_digest(fd, st, md, 0);
			if (indexed < 0) {
				say("cannot read %s: %s", name,
				    strerror(errno));
				return V_GONE;
			}
			entry_path(md, path, sizeof(path));
			r = entry_read(path, md, st->st_size, &hdr, &sec);
		}
		if (r) {
			t0 = now_ms();
			err = synth_entry(fd, md, path, st->st_size, name);
			if (err == EEXIST) {
				d.own++;
				return V_OWN;
			}
			if (err == ESTALE) {
				say("%s changed while it was read: left alone",
				    name);
				return V_GONE;
			}
			if (err) {
				say("cannot synthesise %s: %s", name,
				    strerror(err));
				note_failed(name, strerror(err));
				return V_FAILED;
			}
			t0 = now_ms() - t0;
			d.synthesised++;
			d.synth_ms += t0;
			share_synth(owner, t0);
			say("synthesised %s in %.0f ms (%s)", name, t0,
			    share_name(owner, who, sizeof(who)));
			r = entry_read(path, md, st->st_size, &hdr, &sec);
			if (r)
				continue;
			/* Past its owner's share of the cache: used once. */
			if (!share_cache(owner, sizeof(hdr) + hdr.size +
						hdr.regs_size)) {
				say("%s: not kept in the cache (%s's share is "
				    "full)", name, who);
				unlink(path);
			}
		} else {
			d.cached++;
		}
		if (hdr.kind == ENTRY_NO_CFI) {
			say("%s has no CFI: nothing to import", name);
			d.no_cfi++;
			return V_NO_CFI;
		}
		t_import = now_ms();
		r = codectl_import_sframe_regs(fd, sec, hdr.size, hdr.vaddr,
					       hdr.regs_size ?
					       (char *)sec + hdr.size : NULL,
					       hdr.regs_size);
		err = errno;
		t_import = now_ms() - t_import;
		free(sec);
		if (!r) {
			char regs[48] = "";

			if (hdr.regs_size)
				snprintf(regs, sizeof(regs),
					 ", register table %u", hdr.regs_size);
			say("imported %s (%" PRIu64 " bytes%s; its digest %s"
			    "%.0f ms, the entry %.0f ms, the import %.0f ms)",
			    name, hdr.size, regs,
			    indexed ? "by the index " : "", t_digest, t_entry,
			    t_import);
			d.imported++;
			return V_IMPORTED;
		}
		if (err == ENOEXEC || err == EINVAL) {
			/* The module refused the cached section: again. */
			say("the module refused the cached section of %s (%s): "
			    "synthesising it again", name, strerror(err));
			unlink(path);
			continue;
		}
		if (err == EEXIST) {
			d.own++;
			return V_OWN;
		}
		say("cannot import %s: %s%s", name, strerror(err),
		    err == EDQUOT ? " (its owner's share of import_max_bytes"
				    " is full)" : "");
		note_failed(name, strerror(err));
		if (err == ENOSPC || err == EDQUOT)
			return V_FULL;
		return err == ETXTBSY ? V_GONE : V_FAILED;
	}
	note_failed(name, "its section is refused");
	return V_FAILED;
}

/*
 * One file, queued by the module (@queued) or found by rescan(), charged
 * to @owner (daemon-shares.c).
 */
static void handle(const struct codectl_demand *r, int queued,
		   unsigned int owner)
{
	char name[CODECTL_DEMAND_PATH_MAX + 64];
	struct ident id, *seen;
	struct stat st;
	enum verdict v;
	int fd;

	d.queued += queued;
	snprintf(name, sizeof(name), "%s", r->path[0] ? r->path : "?");
	if (d.log_times)
		say("serving %s (pid %u, %s)", name, r->pid,
		    queued ? "queued" : "found");
	fd = open_queued(r, &st);
	if (fd < 0) {
		/* Replaced or gone: its successor is queued when met. */
		say("%s (pid %u): %s", name, r->pid,
		    errno == ESTALE ? "replaced since it was queued" :
		    strerror(errno));
		d.gone++;
		return;
	}
	ident_of_stat(&st, &id);
	seen = seen_find(&id);
	if (seen && !(queued && (seen->verdict == V_IMPORTED ||
				 seen->verdict == V_FULL))) {
		close(fd);
		return;
	}
	v = cover(fd, &st, name, owner);
	close(fd);
	id.verdict = v;
	if (v == V_GONE)
		return;
	if (seen)
		*seen = id;
	else
		seen_add(&id);
}

/* Read what the module queued, into the list to serve. */
static void drain(void)
{
	struct codectl_demand recs[16];
	ssize_t n;
	int i;

	for (;;) {
		n = read(d.fd, recs, sizeof(recs));
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				say("reading the queue: %s", strerror(errno));
			return;
		}
		if (d.log_times)
			say("read %zd records from the queue",
			    n / (ssize_t)sizeof(recs[0]));
		for (i = 0; i < n / (ssize_t)sizeof(recs[0]); i++) {
			if (!(recs[i].flags & CODECTL_DEMAND_OVERFLOW)) {
				pending_add(&recs[i], 1);
				continue;
			}
			d.lost++;
			if (!d.need_rescan)
				say("the queue overflowed: looking at every "
				    "process");
			d.need_rescan = 1;
		}
	}
}

/*
 * Handle what waits, fairly, until nothing does.  The module's queue is
 * read again before each object: what a process meets meanwhile comes
 * next (pending_next()), even during a look at every process.
 */
static void serve(void)
{
	struct codectl_demand r;
	unsigned int owner;
	int queued;

	while (!stop) {
		drain();
		if (d.need_rescan && now_ms() - d.last_rescan >= RESCAN_MS) {
			d.need_rescan = 0;
			collect();
		}
		if (!pending_next(&r, &queued, &owner))
			return;
		handle(&r, queued, owner);
		state_write();
	}
}

/*
 * Every process's mappings (daemon-rescan.c), then what waits served,
 * what the module queues meanwhile first.
 */
static void rescan(void)
{
	double t0 = now_ms();
	unsigned long before = d.imported;

	collect();
	serve();
	say("looked at every process's mappings: %lu imported, %.0f ms",
	    d.imported - before, now_ms() - t0);
}

/* ---- the system primed in the background (daemon-prime.c) ---------------- */

static pid_t primer;
static char primer_progress[4200];

static void primer_start(void)
{
	snprintf(primer_progress, sizeof(primer_progress), "%s.prime",
		 d.state);
	primer = prime_start(d.prime_share, d.prime_paths, primer_progress);
	if (primer < 0)
		say("cannot prime the cache: %s", strerror(errno));
	else
		say("priming the cache in the background (child %d, at most "
		    "%u%% of a CPU)", (int)primer, d.prime_share);
}

/* The primer ended (or, with @end, is ended): said in the log. */
static void primer_reap(int end)
{
	int status;

	if (primer <= 0)
		return;
	if (end)
		kill(primer, SIGTERM);
	if (waitpid(primer, &status, end ? 0 : WNOHANG) != primer)
		return;
	primer = 0;
	if (!end)
		say("primed the cache: %s", WIFEXITED(status) &&
		    !WEXITSTATUS(status) ? "done" : "stopped");
}

/* ---- the module ---------------------------------------------------------- */

/* Drop imports of files that are gone; trim the cache. */
static void maintain(void)
{
	struct codectl_import_info info = { .fd = -1,
					    .flags = CODECTL_IMPORT_PRUNE };
	int n;

	n = ioctl(d.fd, CODECTL_IOC_IMPORT, &info);
	if (n > 0)
		say("dropped %d imports of files that no longer exist", n);
	cache_trim();
}

static int attach(void)
{
	d.fd = open("/dev/codectl", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (d.fd < 0) {
		say("/dev/codectl: %s (is the codectl module loaded?)",
		    strerror(errno));
		return -1;
	}
	if (ioctl(d.fd, CODECTL_IOC_DEMAND)) {
		say("cannot read the demand queue: %s%s", strerror(errno),
		    errno == EBUSY ? " (another daemon reads it)" :
		    errno == EPERM ? " (needs CAP_SYS_ADMIN)" :
		    errno == ENOTTY ? " (the module is older than ABI 4)" : "");
		return -1;
	}
	/* libcodectl's imports go through this descriptor. */
	codectl_set_fd(d.fd);
	return 0;
}

/* ---- the command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv)
{
	int i;

	d.cache = CACHE_DIR;
	d.state = STATE_FILE;
	d.cache_max = CACHE_MAX;
	for (i = 0; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--cache"))
			d.cache = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--state"))
			d.state = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--cache-max"))
			d.cache_max = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--prime-share"))
			d.prime_share = strtoul(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--prime-paths"))
			d.prime_paths = argv[++i];
		else if (!strcmp(argv[i], "--log-times"))
			d.log_times = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--prime"))
			return i + 1;
		else
			return -1;
	}
	return d.prime_share > 100 ? -1 : 0;
}

static void mkdirs(const char *path)
{
	char p[4096];
	char *s;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

/**
 * cmd_daemon() - codectl daemon
 * @argc:	arguments after "daemon"
 * @argv:	them
 *
 * Return: the exit status: 0 after SIGTERM, 1 when the queue cannot be
 * read, 2 for bad arguments.
 */
int cmd_daemon(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	time_t last_maint;
	char dir[4096], *slash;

	int primed;

	if (argc > 1 && !strcmp(argv[0], "--hash"))
		return hash_files(argc - 1, argv + 1);
	primed = parse_args(argc, argv);
	if (primed < 0) {
		fputs("usage: codectl daemon [--cache DIR] [--cache-max BYTES] "
		      "[--state FILE] [--log-times]\n"
		      "                      [--prime-share PERCENT] "
		      "[--prime-paths DIR:...]\n"
		      "       codectl daemon [--cache DIR] --prime PATH...\n"
		      "       codectl daemon --hash FILE...\n",
		      stderr);
		return 2;
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	srandom(getpid() ^ time(NULL));
	d.seen = calloc(SEEN_MAX, sizeof(*d.seen));
	if (!d.seen)
		return 1;
	mkdirs(d.cache);
	index_open(NULL, 0);
	if (primed)
		return prime(argc - primed, argv + primed);
	snprintf(dir, sizeof(dir), "%s", d.state);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdirs(dir);
	}
	if (attach())
		return 1;
	d.started = time(NULL);
	say("reading the demand queue; cache %s (at most %" PRIu64 " bytes)",
	    d.cache, d.cache_max);
	cache_clean();
	maintain();
	rescan();
	state_write();
	if (d.prime_share)
		primer_start();
	last_maint = time(NULL);
	while (!stop) {
		struct pollfd pfd = { .fd = d.fd, .events = POLLIN };

		if (poll(&pfd, 1, d.need_rescan ? RESCAN_MS : 10000) < 0 &&
		    errno != EINTR)
			break;
		if (time(NULL) - last_maint >= MAINT_SECONDS) {
			maintain();
			last_maint = time(NULL);
		}
		serve();
		primer_reap(0);
		state_write();
	}
	primer_reap(1);
	if (primer_progress[0])
		unlink(primer_progress);
	say("stopping: %lu imported (%lu from the cache), %lu without CFI, "
	    "%lu failed", d.imported, d.cached, d.no_cfi, d.failed);
	unlink(d.state);
	close(d.fd);
	return stop ? 0 : 1;
}
