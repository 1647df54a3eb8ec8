// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, the index: which content (the SHA-256 that names its
 * cache entry, daemon-cache.c) a system file has, by the file's identity,
 * so that an object already hashed (by the primer, an earlier demand or an
 * earlier run) is looked up in the cache without reading it whole again.
 *
 * The identity is what the module keys its imports on and what no user
 * can copy or set: device, inode number and generation (FS_IOC_GETVERSION,
 * where the file system has it), size, mtime, and the ctime, which the
 * kernel alone sets, to the current time, whenever the content or the
 * inode changes (a copy is another inode, with a ctime of its own).  Only
 * files where that is enough get an entry (index_key()):
 *  - owned by root and writable by root alone (mode bits: with an ACL
 *    granting anyone else write, the group bits show it), so that no
 *    user can change the content, in place or through a shared mapping
 *    whose writes move no timestamp until written back;
 *  - on a file system of the system's standard paths (/usr/bin, /usr/lib,
 *    ...): not one a user mounted (FUSE, a loop-mounted image), whose
 *    identities and ownership its owner makes up;
 *  - whose ctime is INDEX_SETTLE_S older than the moment the daemon began
 *    reading it, and unchanged once it was read: a file changed during or
 *    after the read gets a later ctime, whatever the clock's granularity
 *    (git's "racily clean" entries, the same way).
 * A file of overlayfs (a container's) has the identity of the file
 * underneath, as the module keys it (open_queued() puts it in its struct
 * stat; index_put() keeps it when it stats the file again).
 * Everything else is hashed each time, as before.
 *
 * One file, DIR/.index (outside the cache's entries, so neither listed
 * nor trimmed with them): INDEX_SLOTS slots of 128 bytes, a slot's place
 * chosen by the device and inode number, INDEX_PROBE places tried; each
 * slot whole with its checksum, written with one pwrite(); the daemon and
 * its primer write it concurrently, a torn or damaged slot is a miss.  Its
 * word is taken for nothing but which entry to read: a miss, or an entry
 * absent or bad, falls back to hashing the file, and an entry found is
 * checked as before (the digest in its header, the file's size, the
 * section's checksum), the section by the module when imported.  The file
 * must be the daemon's own (its owner, no one else may write it), else it
 * is not used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "daemon.h"

#define INDEX_NAME	".index"
#define INDEX_MAGIC	"CDX-ID-1"
#define INDEX_SLOTS	16384		/* 2 MiB */
#define INDEX_PROBE	8
#define INDEX_SETTLE_S	2		/* the ctime at least this old */
#define INDEX_DEVS	16
#define INDEX_GEN	0x1u		/* @gen is the file system's */

struct index_slot {
	char magic[8];
	struct file_stamp f;
	uint32_t gen, flags;
	unsigned char digest[DIGEST_LEN];
	uint64_t check;		/* FNV-1a of the bytes before it */
	unsigned char __pad[24];
};

_Static_assert(sizeof(struct file_stamp) == 48, "a stamp has no padding");
_Static_assert(sizeof(struct index_slot) == 128, "a slot is 128 bytes");

static int index_fd = -1;
static dev_t sys_devs[INDEX_DEVS];
static unsigned int nsys_devs;

/* The standard paths, whose file systems are the system's. */
static const char *const sys_paths[] = {
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec", "/usr/local/bin",
	"/usr/local/lib", "/usr/lib64", "/usr/lib32",
};

static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* splitmix64's finaliser: the slot of a device and inode number. */
static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static off_t slot_first(const struct index_slot *k)
{
	uint64_t h = mix(k->f.dev * 0x9e3779b97f4a7c15ULL ^ mix(k->f.ino));

	return (off_t)(h % (INDEX_SLOTS - INDEX_PROBE + 1)) *
	       (off_t)sizeof(struct index_slot);
}

static int sys_dev(dev_t dev)
{
	unsigned int i;

	for (i = 0; i < nsys_devs; i++)
		if (sys_devs[i] == dev)
			return 1;
	return 0;
}

/*
 * A file's identity for the index into @k (magic, digest and checksum
 * not filled): 1 when the file may be indexed (a system file: see above;
 * the ctime's age is index_put()'s to check), else 0.
 */
static int index_key(int fd, const struct stat *st, struct index_slot *k)
{
	unsigned int gen;

	if (!S_ISREG(st->st_mode) || st->st_uid != 0 ||
	    (st->st_mode & (S_IWGRP | S_IWOTH)) || !sys_dev(st->st_dev))
		return 0;
	memset(k, 0, sizeof(*k));
	stamp_of_stat(st, &k->f);
	/* tmpfs (the test guests' root) has none: the ctime then suffices. */
	if (!ioctl(fd, FS_IOC_GETVERSION, &gen)) {
		k->gen = gen;
		k->flags = INDEX_GEN;
	}
	return 1;
}

/* Same file, same ctime: every field of the identity equal. */
static int same_key(const struct index_slot *a, const struct index_slot *b)
{
	return !memcmp(&a->f, &b->f, sizeof(a->f)) &&
	       a->gen == b->gen && a->flags == b->flags;
}

static int slot_valid(const struct index_slot *s)
{
	return !memcmp(s->magic, INDEX_MAGIC, sizeof(s->magic)) &&
	       s->check == fnv1a(s, offsetof(struct index_slot, check)) &&
	       !(s->flags & ~INDEX_GEN);
}

/**
 * index_open() - the index of the cache d.cache, at start
 * @paths:	the system's paths, whose file systems' files may be
 *		indexed; NULL: the standard ones (a test names its own)
 * @n:		how many
 *
 * Opens (creates) DIR/.index and notes the devices of those paths.
 * Without it (not the daemon's own file, no room), index_get() misses
 * and index_put() does nothing.
 */
void index_open(const char *const *paths, unsigned int n)
{
	char path[4200];
	struct stat st;
	unsigned int i;
	int fd;

	if (!paths) {
		paths = sys_paths;
		n = sizeof(sys_paths) / sizeof(sys_paths[0]);
	}
	nsys_devs = 0;
	for (i = 0; i < n; i++)
		if (!stat(paths[i], &st) && !sys_dev(st.st_dev) &&
		    nsys_devs < INDEX_DEVS)
			sys_devs[nsys_devs++] = st.st_dev;
	if (index_fd >= 0)
		close(index_fd);
	index_fd = -1;
	snprintf(path, sizeof(path), "%s/%s", d.cache, INDEX_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (st.st_size != INDEX_SLOTS * (off_t)sizeof(struct index_slot) &&
	     ftruncate(fd, INDEX_SLOTS * (off_t)sizeof(struct index_slot)))) {
		say("%s: not the daemon's own file, or cannot be sized: "
		    "objects are hashed each time", path);
		close(fd);
		return;
	}
	index_fd = fd;
}

/**
 * index_get() - the digest of a file, known by its identity
 * @fd:		the file, open
 * @st:		its fstat()
 * @md:		out: its content's SHA-256
 *
 * Return: 1 (found), 0 (not indexed, or not a file that may be).
 */
int index_get(int fd, const struct stat *st, unsigned char *md)
{
	struct index_slot k, s[INDEX_PROBE];
	ssize_t n;
	int i;

	if (index_fd < 0 || !index_key(fd, st, &k))
		return 0;
	n = pread(index_fd, s, sizeof(s), slot_first(&k));
	for (i = 0; n == (ssize_t)sizeof(s) && i < INDEX_PROBE; i++)
		if (slot_valid(&s[i]) && same_key(&s[i], &k)) {
			memcpy(md, s[i].digest, DIGEST_LEN);
			return 1;
		}
	return 0;
}

/**
 * index_put() - note a file's digest
 * @fd:		the file, open
 * @st:		its fstat() before it was read
 * @began:	CLOCK_REALTIME when the read began
 * @md:		the SHA-256 of what was read
 *
 * Only for a file that may be indexed, unchanged since @st, whose ctime
 * is INDEX_SETTLE_S older than @began.  Replaces the slot of the same
 * file (another ctime: changed since), else takes a free one, else one of
 * the INDEX_PROBE.
 */
void index_put(int fd, const struct stat *st, const struct timespec *began,
	       const unsigned char *md)
{
	struct index_slot k, k2, s[INDEX_PROBE];
	struct stat now;
	int i, pick = -1;
	off_t first;

	if (index_fd < 0 || !index_key(fd, st, &k))
		return;
	if (st->st_ctim.tv_sec > began->tv_sec - INDEX_SETTLE_S ||
	    fstat(fd, &now))
		return;
	if (fd_on_overlay(fd)) {	/* see open_queued() */
		now.st_dev = st->st_dev;
		now.st_ino = st->st_ino;
	}
	if (!index_key(fd, &now, &k2) || !same_key(&k, &k2))
		return;
	first = slot_first(&k);
	if (pread(index_fd, s, sizeof(s), first) != (ssize_t)sizeof(s))
		memset(s, 0, sizeof(s));
	for (i = 0; i < INDEX_PROBE; i++) {
		if (!slot_valid(&s[i])) {
			if (pick < 0)
				pick = i;
		} else if (s[i].f.dev == k.f.dev && s[i].f.ino == k.f.ino) {
			pick = i;
			break;
		}
	}
	if (pick < 0)
		pick = (int)(mix(k.f.ctime_nsec ^ k.f.ino) % INDEX_PROBE);
	memcpy(k.magic, INDEX_MAGIC, sizeof(k.magic));
	memcpy(k.digest, md, DIGEST_LEN);
	k.check = fnv1a(&k, offsetof(struct index_slot, check));
	if (pwrite(index_fd, &k, sizeof(k),
		   first + pick * (off_t)sizeof(k)) != (ssize_t)sizeof(k))
		say("the cache's index: %s", strerror(errno ?: EIO));
}

/* The synthesis child, which runs as nobody, must not write it. */
void index_close(void)
{
	if (index_fd >= 0)
		close(index_fd);
	index_fd = -1;
}

/**
 * file_digest() - the SHA-256 of the file at @fd, which names its entry
 * @fd:		the file, open
 * @st:		its fstat()
 * @md:		out: the digest
 * @use_index:	0: read the file whatever the index says
 *
 * Return: 1 (from the index: the file not read), 0 (the file read and
 * hashed, and indexed where it may be), -1 (errno set: cannot read it).
 */
int file_digest(int fd, const struct stat *st, unsigned char *md,
		int use_index)
{
	struct timespec began;

	if (use_index && index_get(fd, st, md))
		return 1;
	clock_gettime(CLOCK_REALTIME, &began);
	if (file_sha256(fd, st->st_size, -1, md))
		return -1;
	index_put(fd, st, &began, md);
	return 0;
}
