// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's index (tools/daemon-index.c): a system file's digest found
 * by its identity without reading the file; nothing found for a file whose
 * ctime moved (chmod, a write in place with its mtime put back), for a copy
 * (another inode, the same size, mtime and bytes), for a file changed
 * within INDEX_SETTLE_S of its read, for one a user may write or owns, or
 * on a file system not the system's; a damaged slot, or an index file
 * others may write, is a miss.  Run as root (the files are root's).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon.h"

/* What daemon-index.c and daemon-cache.c take from the daemon. */
struct daemon d;
int quiet = 1;

void say(const char *fmt, ...)
{
	(void)fmt;
}

static char dir[64], cache[96];
static const char *sys[1] = { dir };

/* A file of @n bytes of @c in the test's directory, its path in @path. */
static void make_file(char *path, size_t len, const char *name, int c,
		      size_t n, mode_t mode)
{
	char *buf = malloc(n);
	int fd;

	assert_non_null(buf);
	memset(buf, c, n);
	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	free(buf);
}

/* Its identity and digest noted, as if read @later seconds from now. */
static void put(const char *path, int later, unsigned char *md)
{
	struct timespec began;
	struct stat st;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(file_sha256(fd, st.st_size, -1, md), 0);
	clock_gettime(CLOCK_REALTIME, &began);
	began.tv_sec += later;
	index_put(fd, &st, &began, md);
	close(fd);
}

/* Found in the index: 1 with the digest in @md, else 0. */
static int get(const char *path, unsigned char *md)
{
	struct stat st;
	int fd = open(path, O_RDONLY), r;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	r = index_get(fd, &st, md);
	close(fd);
	return r;
}

/* @path's ctime moved since @st, its size and mtime not. */
static int moved(const char *path, const struct stat *st)
{
	struct stat now;

	return !stat(path, &now) && now.st_size == st->st_size &&
	       now.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       now.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       (now.st_ctim.tv_sec != st->st_ctim.tv_sec ||
		now.st_ctim.tv_nsec != st->st_ctim.tv_nsec);
}

static void test_hit_without_reading(void **state)
{
	unsigned char md[DIGEST_LEN], got[DIGEST_LEN];
	char path[160];
	struct stat st;
	int fd;

	(void)state;
	make_file(path, sizeof(path), "obj", 'a', 100000, 0755);
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	assert_memory_equal(got, md, DIGEST_LEN);
	/*
	 * Through a descriptor that cannot be read (opening for writing
	 * moves no time): from the index, or not at all.
	 */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	memset(got, 0, sizeof(got));
	assert_int_equal(file_digest(fd, &st, got, 1), 1);
	assert_memory_equal(got, md, DIGEST_LEN);
	assert_int_equal(file_digest(fd, &st, got, 0), -1);
	close(fd);
}

static void test_ctime_moved(void **state)
{
	unsigned char md[DIGEST_LEN], got[DIGEST_LEN];
	struct timespec times[2];
	char path[160];
	struct stat st;
	int fd;

	(void)state;
	make_file(path, sizeof(path), "chmod", 'b', 5000, 0755);
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	/* The same bytes, only the ctime moved: looked at again. */
	assert_int_equal(stat(path, &st), 0);
	usleep(20000);		/* past the coarse clock's tick */
	assert_int_equal(chmod(path, 0555), 0);
	assert_true(moved(path, &st));
	assert_int_equal(get(path, got), 0);

	/* Written in place, its size and mtime put back. */
	make_file(path, sizeof(path), "inplace", 'c', 5000, 0755);
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	assert_int_equal(stat(path, &st), 0);
	usleep(20000);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, 100), 1);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(futimens(fd, times), 0);
	close(fd);
	assert_true(moved(path, &st));
	assert_int_equal(get(path, got), 0);
}

static void test_copy(void **state)
{
	unsigned char md[DIGEST_LEN], got[DIGEST_LEN];
	char path[160], copy[160];
	struct timespec times[2];
	struct stat st;
	int fd;

	(void)state;
	make_file(path, sizeof(path), "orig", 'd', 7000, 0755);
	put(path, 10, md);
	assert_int_equal(stat(path, &st), 0);
	/* The same bytes, size, mode and times (bar the ctime): a copy. */
	make_file(copy, sizeof(copy), "copy", 'd', 7000, 0755);
	fd = open(copy, O_WRONLY);
	assert_true(fd >= 0);
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(futimens(fd, times), 0);
	close(fd);
	assert_int_equal(get(copy, got), 0);
	assert_int_equal(get(path, got), 1);
}

static void test_not_indexed(void **state)
{
	unsigned char md[DIGEST_LEN], got[DIGEST_LEN];
	char path[160];

	(void)state;
	/* Read within INDEX_SETTLE_S of its last change: racily clean. */
	make_file(path, sizeof(path), "recent", 'e', 3000, 0755);
	put(path, 0, md);
	assert_int_equal(get(path, got), 0);
	/* Others may write it. */
	make_file(path, sizeof(path), "gw", 'f', 3000, 0775);
	put(path, 10, md);
	assert_int_equal(get(path, got), 0);
	make_file(path, sizeof(path), "ow", 'g', 3000, 0757);
	put(path, 10, md);
	assert_int_equal(get(path, got), 0);
	/* A user's. */
	make_file(path, sizeof(path), "user", 'h', 3000, 0755);
	assert_int_equal(chown(path, 4242, 4242), 0);
	put(path, 10, md);
	assert_int_equal(get(path, got), 0);
	/* A file system not the system's: indexed, then not looked up. */
	make_file(path, sizeof(path), "elsewhere", 'i', 3000, 0755);
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	index_open((const char *const[]){ "/proc" }, 1);
	assert_int_equal(get(path, got), 0);
	index_open(sys, 1);
	assert_int_equal(get(path, got), 1);
}

/* Every valid slot's digest changed by a byte: each a miss. */
static void test_damaged(void **state)
{
	unsigned char md[DIGEST_LEN], got[DIGEST_LEN], slot[128];
	char path[160], idx[160];
	off_t off;
	int fd, n = 0;

	(void)state;
	make_file(path, sizeof(path), "damaged", 'j', 9000, 0755);
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	snprintf(idx, sizeof(idx), "%s/.index", cache);
	fd = open(idx, O_RDWR);
	assert_true(fd >= 0);
	for (off = 0; pread(fd, slot, sizeof(slot), off) == sizeof(slot);
	     off += sizeof(slot))
		if (!memcmp(slot, "CDX-ID-1", 8)) {
			slot[72] ^= 1;		/* in the digest */
			assert_int_equal(pwrite(fd, slot, sizeof(slot), off),
					 sizeof(slot));
			n++;
		}
	close(fd);
	assert_true(n > 0);
	assert_int_equal(get(path, got), 0);
	/* Noted again: found again. */
	put(path, 10, md);
	assert_int_equal(get(path, got), 1);
	/* An index file others may write is not used. */
	assert_int_equal(chmod(idx, 0666), 0);
	index_open(sys, 1);
	assert_int_equal(get(path, got), 0);
	assert_int_equal(chmod(idx, 0644), 0);
	index_open(sys, 1);
	assert_int_equal(get(path, got), 1);
}

/* Many files: each found, with its own digest. */
static void test_many(void **state)
{
	unsigned char md[200][DIGEST_LEN], got[DIGEST_LEN];
	char path[160], name[32];
	int i;

	(void)state;
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "many-%d", i);
		make_file(path, sizeof(path), name, i, 1000 + i, 0755);
		put(path, 10, md[i]);
	}
	for (i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "%s/many-%d", dir, i);
		assert_int_equal(get(path, got), 1);
		assert_memory_equal(got, md[i], DIGEST_LEN);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_without_reading),
		cmocka_unit_test(test_ctime_moved),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_not_indexed),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_many),
	};
	char cmd[128];
	int ret;

	if (geteuid() != 0) {
		fprintf(stderr, "test_index: must run as root\n");
		return 1;
	}
	umask(022);
	snprintf(dir, sizeof(dir), "/tmp/codectl-index-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	if (mkdir(cache, 0755))
		return 1;
	d.cache = cache;
	index_open(sys, 1);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		ret = 1;
	return ret;
}
