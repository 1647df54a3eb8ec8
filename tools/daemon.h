/* SPDX-License-Identifier: GPL-2.0 */
/*
 * codectl daemon's internals, shared by its files: daemon.c (the queue
 * reader and main loop) over daemon-prime.c (--prime), daemon-rescan.c
 * (every process's mappings), daemon-shares.c (whom objects are charged
 * to, the order they are served in), daemon-synth.c (synthesis in a
 * child), daemon-index.c (system files' digests by their identity) and
 * daemon-cache.c (the cache), all over daemon-state.c (the state, the
 * log, the files handled this run).
 */
#ifndef CODECTL_TOOLS_DAEMON_H
#define CODECTL_TOOLS_DAEMON_H

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

#include <linux/codectl.h>
#include <linux/magic.h>

#define CACHE_DIR	"/var/cache/codectl"
#define STATE_FILE	"/run/codectl/daemon"
#define CACHE_MAX	(256ULL << 20)
#define MAINT_SECONDS	600
#define SYNTH_SECONDS	120		/* a child's time limit */
#define SYNTH_AS	(2ULL << 30)	/* and its address space, at most half of RAM */
#define SEEN_MAX	65536		/* files remembered per run */
#define ENTRY_MAX	(64ULL << 20)	/* a section's size, at most */
#define NOBODY		65534		/* the synthesis child's uid, gid */
#define FAILED_KEPT	8		/* for codectl status */
#define RESCAN_MS	1000		/* between rescans, at least */
#define CACHE_SHARE	8		/* a user's share: cache_max / this */
#define OWNER_SYSTEM	UINT64_MAX	/* root's files, root alone writes */
#define OWNER_NOBODY	(UINT64_MAX - 1)	/* no process to charge */

/*
 * Cache entries: header, then the section, then its register table (if
 * any).  Little-endian, the machine's own.
 */
/*
 * The magic changes with the entry's format and with what the
 * synthesiser makes of the same object (lib/synth.c): entries of an
 * earlier one are synthesised again.  3 -> 4: ld's x86-64 PLT CFI, and
 * AArch64's CFA below the return address (ld.so's lazy binding).  4 -> 5:
 * the register table (x86-64 ld.so's lazy binding).
 */
#define ENTRY_MAGIC	"CODECTL-SFRAME-5"
#define ENTRY_MAGIC_OLD	"CODECTL-SFRAME-2"	/* @sum a SHA-256 */
#define ENTRY_MAGIC_OLD3 "CODECTL-SFRAME-3"	/* the synthesiser before 4 */
#define ENTRY_MAGIC_OLD4 "CODECTL-SFRAME-4"	/* no register tables */
#define ENTRY_SECTION	0		/* @vaddr, @size: a section follows */
#define ENTRY_NO_CFI	1		/* nothing to synthesise from */
#define DIGEST_LEN	32		/* SHA-256 */

/*
 * An entry is named by @file_sha256, which it also holds: a hit needs
 * the whole digest to match the file the daemon opened.
 */
struct entry_hdr {
	char magic[16];
	uint32_t kind;
	uint32_t regs_size;	/* of the register table after it, or 0 */
	uint64_t file_size;	/* the object's */
	uint64_t vaddr;
	uint64_t size;		/* of the section */
	unsigned char file_sha256[DIGEST_LEN];	/* the object's content */
	unsigned char sum[DIGEST_LEN];		/* section_sum() of both */
};

/*
 * A file as fstat() shows it: as the module keys it (device, inode, size,
 * mtime), and its ctime, which no user can set.  Without padding: the
 * cache's index (daemon-index.c) stores it and compares it whole.
 */
struct file_stamp {
	uint64_t dev, ino;
	int64_t size, mtime_sec, ctime_sec;
	uint32_t mtime_nsec, ctime_nsec;
};

static inline void stamp_of_stat(const struct stat *st, struct file_stamp *f)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_sec = st->st_mtim.tv_sec;
	f->mtime_nsec = st->st_mtim.tv_nsec;
	f->ctime_sec = st->st_ctim.tv_sec;
	f->ctime_nsec = st->st_ctim.tv_nsec;
}

/*
 * Is @fd a file of overlayfs (a container's image)?  The module keys such
 * a file by the one underneath, whose device and inode the daemon has
 * from the module's record (open_queued()), and puts in its struct stat.
 */
static inline int fd_on_overlay(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && sf.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* What the daemon remembers it handled: a file_stamp ... */
enum verdict { V_IMPORTED, V_NO_CFI, V_OWN, V_FAILED, V_FULL, V_GONE };

/*
 * ... and, in the files handled this run, @verdict: one imported, or
 * refused for want of room, is handled again when the module queues it
 * (it has no import then: evicted, or room was made since).
 */
struct ident {
	struct file_stamp f;
	enum verdict verdict;
};

/* The daemon's state, one per process. */
struct daemon {
	const char *cache, *state;
	uint64_t cache_max;
	int fd;				/* /dev/codectl, attached */
	struct ident *seen;		/* handled this run */
	unsigned int nseen;
	unsigned long queued, imported, cached, synthesised, no_cfi, own,
		      failed, gone, rescans, lost;
	int need_rescan;		/* records were lost */
	double last_rescan;		/* now_ms() of the last */
	double synth_ms;
	unsigned int prime_share;	/* --prime-share: percent, 0 off */
	int log_times;			/* --log-times: CLOCK_MONOTONIC stamps */
	const char *prime_paths;	/* --prime-paths, or NULL */
	char failed_paths[FAILED_KEPT][CODECTL_DEMAND_PATH_MAX + 64];
	unsigned int nfailed;
	time_t started;
};

extern struct daemon d;
extern volatile sig_atomic_t stop;
extern int quiet;		/* --prime: no line per object */

/* daemon-state.c */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void state_write(void);
void note_failed(const char *path, const char *why);
void ident_of_stat(const struct stat *st, struct ident *id);
int ident_same_file(const struct ident *a, const struct ident *b);
struct ident *seen_find(const struct ident *id);
void seen_add(const struct ident *id);

/* daemon-cache.c */
int file_sha256(int fd, uint64_t size, int out, unsigned char *md);
void section_sum(const void *p, size_t n, unsigned char *sum);
void entry_path(const unsigned char *md, char *buf, size_t len);
int entry_read(const char *path, const unsigned char *md, uint64_t file_size,
	       struct entry_hdr *hdr, void **sec);
int entry_write(const char *path, const struct entry_hdr *hdr,
		const void *sec);
void cache_clean(void);
void cache_trim(void);
uint64_t cache_bytes(void);
int hash_files(int argc, char **argv);

/* daemon-index.c */
void index_open(const char *const *paths, unsigned int n);
void index_close(void);
int index_get(int fd, const struct stat *st, unsigned char *md);
void index_put(int fd, const struct stat *st, const struct timespec *began,
	       const unsigned char *md);
int file_digest(int fd, const struct stat *st, unsigned char *md,
		int use_index);

/* daemon-synth.c */
int synth_entry(int fd, const unsigned char *md, const char *path,
		uint64_t file_size, const char *name);

/* daemon-rescan.c */
void collect(void);

/* daemon-shares.c */
uint64_t owner_of(const struct stat *st, unsigned int pid);
void pending_add(const struct codectl_demand *r, int queued);
int pending_next(struct codectl_demand *r, int *queued, unsigned int *owner);
void share_synth(unsigned int owner, double ms);
int share_cache(unsigned int owner, uint64_t bytes);
const char *share_name(unsigned int owner, char *buf, size_t len);
unsigned long share_dropped(void);

/* daemon-prime.c */
int prime(int argc, char **argv);
pid_t prime_start(unsigned int share, const char *paths, const char *progress);

#endif
