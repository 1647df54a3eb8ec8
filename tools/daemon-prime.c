// SPDX-License-Identifier: GPL-2.0
/*
 * The cache filled ahead of demand, nothing imported (no module needed):
 *
 *   codectl daemon --prime PATH...: every ELF object under each PATH,
 *   then what it took: objects, sections and their bytes (what imports
 *   of them all would hold in the kernel), time, and the daemon's and
 *   its children's peak memory;
 *
 *   codectl daemon --prime-share PERCENT: the system primed in the
 *   background (prime_start()), so that a program's objects are in the
 *   cache when it is first met: a child of the daemon's at idle priority
 *   goes through the standard paths (or --prime-paths), holds its CPU
 *   time and its synthesis children's to PERCENT of the time since it
 *   began, stops when the cache holds three quarters of --cache-max, and
 *   writes its progress to STATE.prime for codectl status.  The daemon
 *   serving demand runs at its own priority meanwhile: demand first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "daemon.h"

/* The standard paths of executables and libraries (merged /usr). */
#define PRIME_PATHS	"/usr/bin:/usr/sbin:/usr/lib:/usr/libexec:" \
			"/usr/local/bin:/usr/local/lib"

struct prime {
	unsigned long files, objects, sections, no_cfi, own, failed;
	uint64_t bytes, text;
	/* In the background: */
	unsigned long written;	/* entries synthesised */
	uint64_t cache_bytes;	/* the cache's, as it grows */
	unsigned int share;	/* percent of the CPU, at most */
	double t0;
	pid_t parent;
	const char *progress;	/* STATE.prime */
	const char *end;	/* why it stopped early, or NULL */
};

static void prime_progress(const struct prime *p, int done)
{
	char tmp[4200];
	FILE *f;

	if (!p->progress)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", p->progress);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "prime_pid %d\nprime_files %lu\nprime_objects %lu\n"
		"prime_written %lu\nprime_cache_bytes %" PRIu64 "\n"
		"prime_seconds %.0f\nprime_done %d\n%s%s%s",
		(int)getpid(), p->files, p->objects, p->written,
		p->cache_bytes, (now_ms() - p->t0) / 1e3, done,
		p->end ? "prime_end " : "", p->end ?: "", p->end ? "\n" : "");
	if (fclose(f) == 0)
		rename(tmp, p->progress);
}

/* CPU seconds of this process and its reaped children. */
static double cpu_seconds(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_utime.tv_sec + self.ru_stime.tv_sec +
	       kids.ru_utime.tv_sec + kids.ru_stime.tv_sec +
	       (self.ru_utime.tv_usec + self.ru_stime.tv_usec +
		kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
}

/*
 * In the background, before each object: stop when the daemon is gone,
 * asked to, or the cache is three quarters full; else wait until the CPU
 * time spent is within the share of the time since the start.
 */
static int prime_go_on(struct prime *p)
{
	double wall, cpu;

	if (!p->share)
		return !stop;
	if (stop || getppid() != p->parent)
		return 0;
	if (p->cache_bytes >= d.cache_max / 4 * 3) {
		p->end = "the cache holds three quarters of --cache-max";
		return 0;
	}
	for (;;) {
		wall = (now_ms() - p->t0) / 1e3;
		cpu = cpu_seconds();
		if (cpu * 100 <= wall * p->share || stop)
			break;
		usleep((useconds_t)((cpu * 100 / p->share - wall) * 1e6) + 1000);
	}
	return !stop;
}

static int is_elf(int fd)
{
	unsigned char m[4];

	return pread(fd, m, 4, 0) == 4 && !memcmp(m, ELFMAG, SELFMAG);
}

static void prime_file(const char *path, struct prime *p)
{
	unsigned char md[DIGEST_LEN];
	struct entry_hdr hdr;
	struct stat st;
	struct ident id;
	char entry[4200];
	void *sec;
	int fd, err = 0, wrote, indexed;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !is_elf(fd)) {
		close(fd);
		return;
	}
	ident_of_stat(&st, &id);
	if (seen_find(&id)) {	/* a hard link to a file seen */
		close(fd);
		return;
	}
	seen_add(&id);
	p->objects++;
	indexed = file_digest(fd, &st, md, 1);
	if (indexed < 0) {
		p->failed++;
		close(fd);
		return;
	}
	entry_path(md, entry, sizeof(entry));
	wrote = entry_read(entry, md, st.st_size, &hdr, &sec) != 0;
	if (wrote && indexed) {
		/* Indexed, its entry gone since: read and hashed after all. */
		if (file_digest(fd, &st, md, 0) < 0) {
			p->failed++;
			close(fd);
			return;
		}
		entry_path(md, entry, sizeof(entry));
		wrote = entry_read(entry, md, st.st_size, &hdr, &sec) != 0;
	}
	if (wrote)
		err = synth_entry(fd, md, entry, st.st_size, path);
	else
		free(sec);
	if (!err && !entry_read(entry, md, st.st_size, &hdr, &sec)) {
		if (wrote) {
			p->written++;
			p->cache_bytes += sizeof(hdr) + hdr.size +
					  hdr.regs_size;
		}
		if (hdr.kind == ENTRY_SECTION) {
			p->sections++;
			p->bytes += hdr.size;
		} else {
			p->no_cfi++;
		}
		free(sec);
	} else if (err == EEXIST) {
		p->own++;
	} else if (err != ENOEXEC) {
		p->failed++;
	} else {
		p->objects--;	/* not an object of this machine */
	}
	close(fd);
}

static void prime_dir(const char *dir, struct prime *p)
{
	struct dirent *e;
	char path[4096];
	DIR *d = opendir(dir);

	if (!d) {
		if (prime_go_on(p)) {
			prime_file(dir, p);
			prime_progress(p, 0);
		}
		return;
	}
	while (!p->end && prime_go_on(p) && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			prime_dir(path, p);
		else if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) {
			p->files++;
			prime_file(path, p);
			prime_progress(p, 0);
		}
	}
	closedir(d);
}

int prime(int argc, char **argv)
{
	struct rusage self, kids;
	struct prime p = {};
	double t0 = now_ms();
	int i;

	/* The children's log lines are the cache's business, not this. */
	quiet = 1;
	for (i = 0; i < argc; i++)
		prime_dir(argv[i], &p);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("files %lu\nobjects %lu\nsections %lu\nsection_bytes %" PRIu64
	       "\nno_cfi %lu\nown_sframe %lu\nfailed %lu\nseconds %.1f\n"
	       "daemon_maxrss_kb %ld\nchild_maxrss_kb %ld\n",
	       p.files, p.objects, p.sections, p.bytes, p.no_cfi, p.own,
	       p.failed, (now_ms() - t0) / 1e3, self.ru_maxrss,
	       kids.ru_maxrss);
	return 0;
}

/**
 * prime_start() - the system primed in a child, in the background
 * @share:	percent of the CPU it may take (1-100)
 * @paths:	directories (or files) separated by ':', NULL for the
 *		standard paths
 * @progress:	its progress file
 *
 * Return: the child's pid, or -1 (errno set).
 */
pid_t prime_start(unsigned int share, const char *paths, const char *progress)
{
	struct sched_param sp = { 0 };
	struct prime p = { .share = share, .progress = progress };
	char *list, *dir, *save;
	pid_t pid;

	p.parent = getpid();
	pid = fork();
	if (pid)
		return pid;
	/*
	 * The child: the queue is the daemon's, and so is its device.  It
	 * ends at once when the daemon does (a synthesis child of its own
	 * then meets a closed pipe; nothing half-written is kept).
	 */
	close(d.fd);
	signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != p.parent)
		_exit(0);
	setpriority(PRIO_PROCESS, 0, 19);
	sched_setscheduler(0, SCHED_IDLE, &sp);
	quiet = 1;
	p.t0 = now_ms();
	p.cache_bytes = cache_bytes();
	list = strdup(paths ?: PRIME_PATHS);
	for (dir = strtok_r(list, ":", &save); dir && !p.end && !stop;
	     dir = strtok_r(NULL, ":", &save))
		prime_dir(dir, &p);
	prime_progress(&p, !stop);
	_exit(0);
}
