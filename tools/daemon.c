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
 * queue's one reader (CODECTL_IOC_DEMAND).  For each file it:
 *  1. opens the very file the process maps, /proc/PID/map_files/START-END
 *     (any mount namespace), else the path discovery saw, and checks it
 *     against the identity queued (device, inode, size, mtime): a file
 *     replaced meanwhile is left alone (its successor is queued when met);
 *  2. looks in the cache (DIR, default /var/cache/codectl): one file per
 *     object, named by its build id (else its device and inode), size and
 *     mtime,
 *     with a header and a checksum; entries that fail the check are
 *     removed; objects without CFI have an entry saying so;
 *  3. else synthesises in a child process (libcodectl's
 *     codectl_import_synth(), as nobody, with limits on time and memory:
 *     a hostile ELF costs a child without privileges, never the daemon),
 *     which sends the section back down a pipe; the daemon writes the
 *     entry under a temporary name and renames it (readers and
 *     concurrent writers see whole entries or none);
 *  4. imports the entry's section (codectl_import_sframe()); the module
 *     checks it against the file once more.
 *
 * At start, and whenever the module says records were lost, it looks at
 * every running process's executable mappings itself (imports what the
 * cache has in milliseconds, synthesises the rest): after a restart,
 * a crash or a module reload nothing in use stays uncovered.  Every 10
 * minutes it asks the module to drop imports of files whose path no
 * longer leads to them (CODECTL_IMPORT_PRUNE) and trims the cache to
 * BYTES (default 256 MiB), the least recently used first.  It logs one
 * line per object to stderr (the journal, under systemd) and keeps a
 * summary for "codectl status" in FILE (default /run/codectl/daemon).
 * SIGTERM and SIGINT end it.
 *
 * --prime fills the cache with every ELF object under each PATH (no
 * module needed, nothing imported) and prints what it took: objects,
 * sections and their bytes (what imports of them all would hold in the
 * kernel), time, and the daemon's and its children's peak memory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>
#include <linux/codectl.h>

#include "commands.h"

#define CACHE_DIR	"/var/cache/codectl"
#define STATE_FILE	"/run/codectl/daemon"
#define CACHE_MAX	(256ULL << 20)
#define MAINT_SECONDS	600
#define SYNTH_SECONDS	120		/* a child's time limit */
#define SYNTH_AS	(2ULL << 30)	/* and its address space */
#define SEEN_MAX	65536		/* files remembered per run */
#define ENTRY_MAX	(64ULL << 20)	/* a section's size, at most */
#define NOBODY		65534		/* the synthesis child's uid, gid */
#define FAILED_KEPT	8		/* for codectl status */

/* Cache entries: header, then the section.  Little-endian, x86-64 only. */
#define ENTRY_MAGIC	"CODECTL-SFRAME-1"
#define ENTRY_SECTION	0		/* @vaddr, @size: a section follows */
#define ENTRY_NO_CFI	1		/* nothing to synthesise from */

struct entry_hdr {
	char magic[16];
	uint32_t kind;
	uint32_t __pad;
	uint64_t file_size;	/* the object's */
	uint64_t vaddr;
	uint64_t size;		/* of the section */
	uint64_t sum;		/* FNV-1a of the section */
};

/* A file, as the module keys it. */
struct ident {
	uint64_t dev, ino;
	int64_t size, mtime_sec;
	uint32_t mtime_nsec;
};

enum verdict { V_IMPORTED, V_NO_CFI, V_OWN, V_FAILED, V_GONE };

static struct {
	const char *cache, *state;
	uint64_t cache_max;
	int fd;				/* /dev/codectl, attached */
	struct ident *seen;		/* handled this run */
	unsigned int nseen;
	unsigned long queued, imported, cached, synthesised, no_cfi, own,
		      failed, gone, rescans, lost;
	double synth_ms;
	char failed_paths[FAILED_KEPT][CODECTL_DEMAND_PATH_MAX + 64];
	unsigned int nfailed;
	time_t started;
} d;

static volatile sig_atomic_t stop;
static int quiet;		/* --prime: no line per object */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	fputs("codectl-daemon: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t fnv64(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

/* ---- the state file, for codectl status -------------------------------- */

static void state_write(void)
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
static void note_failed(const char *path, const char *why)
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

static int ident_eq(const struct ident *a, const struct ident *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

static int seen_has(const struct ident *id)
{
	unsigned int i;

	for (i = 0; i < d.nseen; i++)
		if (ident_eq(&d.seen[i], id))
			return 1;
	return 0;
}

static void seen_add(const struct ident *id)
{
	if (d.nseen == SEEN_MAX)
		d.nseen = 0;	/* forget all: at worst a second look */
	d.seen[d.nseen++] = *id;
}

static void ident_of_stat(const struct stat *st, struct ident *id)
{
	memset(id, 0, sizeof(*id));
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = st->st_size;
	id->mtime_sec = st->st_mtim.tv_sec;
	id->mtime_nsec = st->st_mtim.tv_nsec;
}

/* ---- the cache --------------------------------------------------------- */

/* The GNU build id of the ELF file at @fd, as hex, or "" */
static void build_id_hex(int fd, char *hex, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char note[512];
	unsigned int i, j;

	hex[0] = 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 128)
		return;
	for (i = 0; i < eh.e_phnum; i++) {
		size_t off = 0, n;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			return;
		if (ph.p_type != PT_NOTE)
			continue;
		n = ph.p_filesz < sizeof(note) ? ph.p_filesz : sizeof(note);
		if (pread(fd, note, n, ph.p_offset) != (ssize_t)n)
			continue;
		while (off + 12 <= n) {
			uint32_t nsz, dsz, type;
			size_t desc;

			memcpy(&nsz, note + off, 4);
			memcpy(&dsz, note + off + 4, 4);
			memcpy(&type, note + off + 8, 4);
			desc = off + 12 + ((nsz + 3) & ~3u);
			if (nsz > n || dsz > n || desc + dsz > n)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 &&
			    !memcmp(note + off + 12, "GNU", 4) && dsz &&
			    dsz * 2 < len) {
				for (j = 0; j < dsz; j++)
					sprintf(hex + 2 * j, "%02x",
						note[desc + j]);
				return;
			}
			off = desc + ((dsz + 3) & ~3u);
		}
	}
}

/* The cache entry's path for the file at @fd. */
static void entry_path(int fd, const struct ident *id, char *buf, size_t len)
{
	char bid[130];

	build_id_hex(fd, bid, sizeof(bid));
	/*
	 * The build id and the mtime: a file changed in place (a new mtime)
	 * whose build id stayed (patched, or damaged) is another entry.
	 */
	if (bid[0])
		snprintf(buf, len, "%s/%s-%" PRId64 "-%" PRId64 ".%09u.sframe",
			 d.cache, bid, id->size, id->mtime_sec, id->mtime_nsec);
	else
		snprintf(buf, len, "%s/id-%" PRIx64 "-%" PRIu64 "-%" PRId64
			 "-%" PRId64 ".%09u.sframe", d.cache, id->dev, id->ino,
			 id->size, id->mtime_sec, id->mtime_nsec);
}

/*
 * Read the entry at @path for an object of @file_size bytes: 0 with
 * @hdr (and @sec for a section), -1 when absent, -2 when it was bad
 * (removed).
 */
static int entry_read(const char *path, uint64_t file_size,
		      struct entry_hdr *hdr, void **sec)
{
	struct stat st;
	void *buf = NULL;
	int fd, ret = -2;

	*sec = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || pread(fd, hdr, sizeof(*hdr), 0) != sizeof(*hdr))
		goto bad;
	if (memcmp(hdr->magic, ENTRY_MAGIC, sizeof(hdr->magic)) ||
	    hdr->file_size != file_size ||
	    (hdr->kind != ENTRY_SECTION && hdr->kind != ENTRY_NO_CFI) ||
	    (uint64_t)st.st_size != sizeof(*hdr) + hdr->size)
		goto bad;
	if (hdr->kind == ENTRY_SECTION) {
		if (!hdr->size || hdr->size > ENTRY_MAX)
			goto bad;
		buf = malloc(hdr->size);
		if (!buf || pread(fd, buf, hdr->size, sizeof(*hdr)) !=
		    (ssize_t)hdr->size || fnv64(buf, hdr->size) != hdr->sum)
			goto bad;
	}
	/* Recently used: the cache trims by access time. */
	futimens(fd, (struct timespec[2]){ { 0, UTIME_NOW },
					    { 0, UTIME_OMIT } });
	close(fd);
	*sec = buf;
	return 0;
bad:
	free(buf);
	close(fd);
	say("cache entry %s is damaged: removed", path);
	unlink(path);
	return ret;
}

/*
 * Write an entry: a temporary file of its own, then rename(): a reader
 * sees the whole entry or none, and concurrent writers (two daemons, a
 * second host on a shared cache) each write theirs whole.
 */
static int entry_write(const char *path, const struct entry_hdr *hdr,
		       const void *sec)
{
	char tmp[4200];
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s/.tmp.%d.%ld", d.cache, (int)getpid(),
		 (long)random());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ok = write(fd, hdr, sizeof(*hdr)) == sizeof(*hdr) &&
	     (!hdr->size || write(fd, sec, hdr->size) == (ssize_t)hdr->size) &&
	     fsync(fd) == 0;
	if (close(fd) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Remove temporaries a killed daemon or child left. */
static void cache_clean_tmp(void)
{
	struct dirent *e;
	DIR *dir = opendir(d.cache);
	char p[4200];

	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, ".tmp.", 5)) {
			snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
			unlink(p);
			say("removed %s, left by a synthesis that did not finish",
			    p);
		}
	closedir(dir);
}

struct cache_file {
	char name[256];
	time_t atime;
	off_t size;
};

static int by_atime(const void *a, const void *b)
{
	const struct cache_file *x = a, *y = b;

	return x->atime < y->atime ? -1 : x->atime > y->atime;
}

/* Keep the cache under d.cache_max bytes: least recently used go first. */
static void cache_trim(void)
{
	struct cache_file *v = NULL, *t;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *e;
	struct stat st;
	char p[4200];
	DIR *dir = opendir(d.cache);

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 256)
			continue;
		snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			t = realloc(v, cap * sizeof(*v));
			if (!t)
				break;
			v = t;
		}
		strcpy(v[n].name, e->d_name);
		v[n].atime = st.st_atime;
		v[n].size = st.st_size;
		total += st.st_size;
		n++;
	}
	closedir(dir);
	qsort(v, n, sizeof(*v), by_atime);
	for (i = 0; i < n && total > d.cache_max; i++) {
		snprintf(p, sizeof(p), "%s/%s", d.cache, v[i].name);
		if (!unlink(p)) {
			total -= v[i].size;
			say("cache over %" PRIu64 " bytes: removed %s",
			    d.cache_max, p);
		}
	}
	free(v);
}

/* ---- synthesis, in a child --------------------------------------------- */

/*
 * Write (@out) or read exactly @len bytes of a pipe: 1, or 0 at EOF or
 * an error.
 */
static int pipe_all(int fd, void *buf, size_t len, int out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/* The synthesis child: never returns. */
static void synth_child(int fd, int out, uint64_t file_size)
{
	struct rlimit as = { SYNTH_AS, SYNTH_AS }, cpu = { SYNTH_SECONDS,
							   SYNTH_SECONDS };
	struct entry_hdr hdr;
	uint64_t vaddr;
	size_t size;
	void *sec = NULL;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
		_exit(EPERM);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	setrlimit(RLIMIT_AS, &as);
	setrlimit(RLIMIT_CPU, &cpu);
	alarm(SYNTH_SECONDS);
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic));
	hdr.file_size = file_size;
	if (codectl_import_synth(fd, &sec, &size, &vaddr, NULL)) {
		int err = errno;

		if (err != ENOENT && err != ENODATA)
			_exit(err & 0xff ?: EIO);
		hdr.kind = ENTRY_NO_CFI;
	} else {
		hdr.kind = ENTRY_SECTION;
		hdr.vaddr = vaddr;
		hdr.size = size;
		hdr.sum = fnv64(sec, size);
	}
	if (!pipe_all(out, &hdr, sizeof(hdr), 1) ||
	    (hdr.size && !pipe_all(out, sec, hdr.size, 1)))
		_exit(EIO);
	_exit(0);
}

/*
 * Synthesise the entry for the object at @fd into @path.  A child does
 * the work, as nobody (no capabilities, no new privileges), limited in
 * time and memory: the file is whatever a process mapped, and libdw
 * parses it.  It sends the header and the section down a pipe; the
 * daemon checks and writes them.  Returns 0 (written), the errno the
 * child reported (ENOENT/ENODATA: no CFI, written as such), or EIO when
 * it died or sent something else.
 */
static int synth_entry(int fd, const char *path, uint64_t file_size,
		       const char *name)
{
	struct entry_hdr hdr;
	void *sec = NULL;
	int p[2], status, ok;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return errno;
	}
	if (!pid)
		synth_child(fd, p[1], file_size);
	close(p[1]);
	say("synthesising %s (child %d)", name, (int)pid);
	ok = pipe_all(p[0], &hdr, sizeof(hdr), 0) &&
	     !memcmp(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic)) &&
	     hdr.file_size == file_size &&
	     (hdr.kind == ENTRY_NO_CFI ? !hdr.size :
	      hdr.kind == ENTRY_SECTION && hdr.size && hdr.size <= ENTRY_MAX);
	if (ok && hdr.size) {
		sec = malloc(hdr.size);
		ok = sec && pipe_all(p[0], sec, hdr.size, 0) &&
		     fnv64(sec, hdr.size) == hdr.sum;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(sec);
			return EIO;
		}
	if (!WIFEXITED(status)) {
		say("synthesis for %s killed by signal %d", name,
		    WTERMSIG(status));
		free(sec);
		return EIO;
	}
	if (WEXITSTATUS(status) || !ok) {
		free(sec);
		return WEXITSTATUS(status) ?: EIO;
	}
	status = entry_write(path, &hdr, sec) ? errno ?: EIO : 0;
	free(sec);
	return status;
}

/* ---- one file ---------------------------------------------------------- */

/* Open the file a record names and check it is @want, the one queued. */
static int open_queued(const struct codectl_demand *r,
		       const struct ident *want, struct stat *st)
{
	struct ident got;
	char p[128];
	int fd = -1;

	if (r->pid) {
		snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx", r->pid,
			 (unsigned long long)r->vm_start,
			 (unsigned long long)r->vm_end);
		fd = open(p, O_RDONLY | O_CLOEXEC);
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
	if (!ident_eq(want, &got)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/*
 * Import the object open at @fd: from the cache, else synthesised into
 * it.  @name is for the log.
 */
static enum verdict cover(int fd, const struct stat *st, const char *name)
{
	struct entry_hdr hdr;
	struct ident id;
	char path[4200];
	void *sec;
	double t0;
	int r, tries, err;

	ident_of_stat(st, &id);
	entry_path(fd, &id, path, sizeof(path));
	for (tries = 0; tries < 2; tries++) {
		r = entry_read(path, st->st_size, &hdr, &sec);
		if (r) {
			t0 = now_ms();
			err = synth_entry(fd, path, st->st_size, name);
			if (err == EEXIST) {
				d.own++;
				return V_OWN;
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
			say("synthesised %s in %.0f ms", name, t0);
			r = entry_read(path, st->st_size, &hdr, &sec);
			if (r)
				continue;
		} else {
			d.cached++;
		}
		if (hdr.kind == ENTRY_NO_CFI) {
			say("%s has no CFI: nothing to import", name);
			d.no_cfi++;
			return V_NO_CFI;
		}
		r = codectl_import_sframe(fd, sec, hdr.size, hdr.vaddr);
		err = errno;
		free(sec);
		if (!r) {
			say("imported %s (%" PRIu64 " bytes)", name, hdr.size);
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
		say("cannot import %s: %s", name, strerror(err));
		note_failed(name, strerror(err));
		return err == ETXTBSY ? V_GONE : V_FAILED;
	}
	note_failed(name, "its section is refused");
	return V_FAILED;
}

/* One file, queued by the module (@queued) or found by rescan(). */
static void handle(const struct codectl_demand *r, int queued)
{
	char name[CODECTL_DEMAND_PATH_MAX + 64];
	struct ident id = {
		.dev = r->dev, .ino = r->ino, .size = r->size,
		.mtime_sec = r->mtime_sec, .mtime_nsec = r->mtime_nsec,
	};
	struct stat st;
	enum verdict v;
	int fd;

	d.queued += queued;
	if (seen_has(&id))
		return;
	snprintf(name, sizeof(name), "%s", r->path[0] ? r->path : "?");
	fd = open_queued(r, &id, &st);
	if (fd < 0) {
		/* Replaced or gone: its successor is queued when met. */
		say("%s (pid %u): %s", name, r->pid,
		    errno == ESTALE ? "replaced since it was queued" :
		    strerror(errno));
		d.gone++;
		return;
	}
	v = cover(fd, &st, name);
	close(fd);
	if (v != V_GONE)
		seen_add(&id);
}

/* ---- every process's mappings ------------------------------------------- */

/*
 * Every executable file mapping of every process, as if queued: what a
 * restart, a crash or a full queue may have missed.
 */
static void rescan(void)
{
	struct codectl_demand r;
	struct dirent *e;
	char p[320], line[4600];
	DIR *proc = opendir("/proc");
	double t0 = now_ms();
	unsigned long before = d.imported;

	if (!proc)
		return;
	d.rescans++;
	while (!stop && (e = readdir(proc))) {
		unsigned long long lo, hi, off, ino;
		unsigned int maj, min;
		char perms[8];
		FILE *f;
		int n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/maps", e->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *path;
			struct stat st;

			n = 0;
			if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n",
				   &lo, &hi, perms, &off, &maj, &min, &ino,
				   &n) < 7 || perms[2] != 'x' || !ino || !n)
				continue;
			path = line + n;
			path[strcspn(path, "\n")] = 0;
			memset(&r, 0, sizeof(r));
			r.pid = atoi(e->d_name);
			r.vm_start = lo;
			r.vm_end = hi;
			r.vm_pgoff = off;
			if (path[0] == '/' && strlen(path) < sizeof(r.path) &&
			    !strstr(path, " (deleted)"))
				strcpy(r.path, path);
			/* The identity is the file's as it is now. */
			snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx",
				 r.pid, lo, hi);
			if (stat(p, &st) || !S_ISREG(st.st_mode))
				continue;
			r.dev = st.st_dev;
			r.ino = st.st_ino;
			r.size = st.st_size;
			r.mtime_sec = st.st_mtim.tv_sec;
			r.mtime_nsec = st.st_mtim.tv_nsec;
			handle(&r, 0);
		}
		fclose(f);
	}
	closedir(proc);
	say("looked at every process's mappings: %lu imported, %.0f ms",
	    d.imported - before, now_ms() - t0);
}

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

/* ---- --prime ------------------------------------------------------------ */

struct prime {
	unsigned long files, objects, sections, no_cfi, own, failed;
	uint64_t bytes, text;
};

static int is_elf(int fd)
{
	unsigned char m[4];

	return pread(fd, m, 4, 0) == 4 && !memcmp(m, ELFMAG, SELFMAG);
}

static void prime_file(const char *path, struct prime *p)
{
	struct entry_hdr hdr;
	struct stat st;
	struct ident id;
	char entry[4200];
	void *sec;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !is_elf(fd)) {
		close(fd);
		return;
	}
	ident_of_stat(&st, &id);
	if (seen_has(&id)) {	/* a hard link to a file seen */
		close(fd);
		return;
	}
	seen_add(&id);
	p->objects++;
	entry_path(fd, &id, entry, sizeof(entry));
	err = entry_read(entry, st.st_size, &hdr, &sec) ?
	      synth_entry(fd, entry, st.st_size, path) : 0;
	if (!err && !entry_read(entry, st.st_size, &hdr, &sec)) {
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
		p->objects--;	/* not an x86-64 object */
	}
	close(fd);
}

static void prime_dir(const char *dir, struct prime *p)
{
	struct dirent *e;
	char path[4096];
	DIR *d = opendir(dir);

	if (!d) {
		prime_file(dir, p);
		return;
	}
	while (!stop && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			prime_dir(path, p);
		else if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) {
			p->files++;
			prime_file(path, p);
		}
	}
	closedir(d);
}

static int prime(int argc, char **argv)
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
		else if (i + 1 < argc && !strcmp(argv[i], "--prime"))
			return i + 1;
		else
			return -1;
	}
	return 0;
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
	struct codectl_demand recs[16];
	struct sigaction sa = { .sa_handler = on_signal };
	time_t last_maint;
	char dir[4096], *slash;

	int primed = parse_args(argc, argv);

	if (primed < 0) {
		fputs("usage: codectl daemon [--cache DIR] [--cache-max BYTES] "
		      "[--state FILE]\n"
		      "       codectl daemon [--cache DIR] --prime PATH...\n",
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
	cache_clean_tmp();
	maintain();
	rescan();
	state_write();
	last_maint = time(NULL);
	while (!stop) {
		struct pollfd pfd = { .fd = d.fd, .events = POLLIN };
		ssize_t n;
		int i, overflow = 0;

		if (poll(&pfd, 1, 10000) < 0 && errno != EINTR)
			break;
		if (time(NULL) - last_maint >= MAINT_SECONDS) {
			maintain();
			last_maint = time(NULL);
		}
		if (!(pfd.revents & POLLIN))
			continue;
		n = read(d.fd, recs, sizeof(recs));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			say("reading the queue: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n / (ssize_t)sizeof(recs[0]) && !stop; i++) {
			if (recs[i].flags & CODECTL_DEMAND_OVERFLOW)
				overflow = 1;
			else
				handle(&recs[i], 1);
		}
		if (overflow) {
			d.lost++;
			say("the queue overflowed: looking at every process");
			rescan();
		}
		state_write();
	}
	say("stopping: %lu imported (%lu from the cache), %lu without CFI, "
	    "%lu failed", d.imported, d.cached, d.no_cfi, d.failed);
	unlink(d.state);
	close(d.fd);
	return stop ? 0 : 1;
}
