// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool's verdicts on an object file (tools/coverage.c, what
 * "codectl status" says of each object): its own SFrame, an import with
 * the cache entry of its content, and every reason for none (no CFI per
 * an entry, refused with an errno, not handled yet, no daemon), with the
 * daemon's real cache code (tools/daemon-cache.c) writing the entries.
 * A look-alike's entry (another content under this content's name) and
 * hostile files (not ELF, truncated, absurd counts) are not believed.
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
#include <unistd.h>
#include <cmocka.h>

#include "coverage.h"
#include "daemon.h"

/* What daemon-cache.c takes from the daemon. */
struct daemon d;
int quiet = 1;

void say(const char *fmt, ...)
{
	(void)fmt;
}

#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"

static char dir[64], cache[128], obj[128];
static struct cov_ctx ctx;

/* A copy of libc (CFI, no SFrame) in the scratch directory. */
static void copy_file(const char *from, const char *to, size_t len)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	size_t done = 0;
	ssize_t n;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(out >= 0);
	while (done < len && (n = read(in, buf, sizeof(buf))) > 0) {
		if ((size_t)n > len - done)
			n = len - done;
		assert_int_equal(write(out, buf, n), n);
		done += n;
	}
	close(in);
	close(out);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_coverage.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	assert_int_equal(mkdir(cache, 0755), 0);
	snprintf(obj, sizeof(obj), "%s/libc.so.6", dir);
	copy_file(LIBC, obj, SIZE_MAX);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* A fresh context: imports known and empty, a daemon, an empty queue. */
static int reset(void **state)
{
	(void)state;
	cov_free(&ctx);
	memset(&ctx, 0, sizeof(ctx));
	snprintf(ctx.cache, sizeof(ctx.cache), "%s", cache);
	d.cache = ctx.cache;
	ctx.imports_known = 1;
	ctx.reader = 1;
	return 0;
}

static void verdict(const char *path, int key, struct coverage *v)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	cov_file(&ctx, fd, path, key, v);
	close(fd);
}

/* The object's SHA-256 and its entry's path and name. */
static void key_of(const char *path, unsigned char *md, char *entry,
		   char *hex)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	unsigned int i;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(file_sha256(fd, st.st_size, -1, md), 0);
	close(fd);
	entry_path(md, entry, 4200);
	for (i = 0; i < DIGEST_LEN; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

static void write_entry(const char *path, const unsigned char *md,
			uint32_t kind, const char *entry)
{
	static const char sec[64] = "a section";
	struct entry_hdr hdr;
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic));
	hdr.kind = kind;
	hdr.file_size = st.st_size;
	hdr.size = kind == ENTRY_SECTION ? sizeof(sec) : 0;
	memcpy(hdr.file_sha256, md, DIGEST_LEN);
	section_sum(sec, sizeof(sec), hdr.sum);
	assert_int_equal(entry_write(entry, &hdr, sec), 0);
}

static void test_not_seen(void **state)
{
	struct coverage v;

	(void)state;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_NO);
	assert_string_equal(v.how, "not seen by the daemon yet: queued at the "
			    "first unwind that meets it");
	ctx.pending = 3;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_NO);
	assert_non_null(strstr(v.how, "3 records pending"));
	ctx.reader = 0;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_NO);
	assert_non_null(strstr(v.how, "no daemon runs"));
	ctx.imports_known = 0;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_UNKNOWN);
}

static void test_no_cfi(void **state)
{
	unsigned char md[DIGEST_LEN];
	char entry[4200], hex[80], want[200];
	struct coverage v;

	(void)state;
	key_of(obj, md, entry, hex);
	write_entry(obj, md, ENTRY_NO_CFI, entry);
	verdict(obj, 0, &v);
	assert_int_equal(v.state, COV_NO);
	snprintf(want, sizeof(want), "no CFI, per cache entry %s", hex);
	assert_string_equal(v.how, want);
	unlink(entry);
}

/* Another content's entry under this content's name is not this one's. */
static void test_lookalike_entry(void **state)
{
	unsigned char md[DIGEST_LEN], other[DIGEST_LEN];
	char entry[4200], hex[80];
	struct coverage v;

	(void)state;
	key_of(obj, md, entry, hex);
	memcpy(other, md, DIGEST_LEN);
	other[DIGEST_LEN - 1] ^= 1;
	write_entry(obj, other, ENTRY_NO_CFI, entry);
	verdict(obj, 0, &v);
	assert_int_equal(v.state, COV_NO);
	assert_null(strstr(v.how, "no CFI"));
	unlink(entry);
}

static void test_imported(void **state)
{
	unsigned char md[DIGEST_LEN];
	char entry[4200], hex[80], want[200];
	struct cov_import imp;
	struct coverage v;
	struct stat st;

	(void)state;
	assert_int_equal(stat(obj, &st), 0);
	imp = (struct cov_import) { st.st_dev, st.st_ino, 1 };
	ctx.imports = malloc(sizeof(imp));
	assert_non_null(ctx.imports);
	ctx.imports[0] = imp;
	ctx.nimports = 1;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_YES);
	assert_non_null(strstr(v.how, "no cache entry for its content"));
	key_of(obj, md, entry, hex);
	write_entry(obj, md, ENTRY_SECTION, entry);
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_YES);
	snprintf(want, sizeof(want), "imported, cache entry %s", hex);
	assert_string_equal(v.how, want);
	verdict(obj, 0, &v);		/* no key wanted: not hashed */
	assert_int_equal(v.state, COV_YES);
	assert_string_equal(v.how, "imported");
	unlink(entry);
}

static void test_refused(void **state)
{
	struct coverage v;
	char want[200];

	(void)state;
	ctx.uncovered = calloc(2, sizeof(*ctx.uncovered));
	assert_non_null(ctx.uncovered);
	/* A path that only begins like the object's is another object. */
	snprintf(ctx.uncovered[0], sizeof(ctx.uncovered[0]),
		 "%s.old (Permission denied)", obj);
	ctx.nuncovered = 1;
	verdict(obj, 1, &v);
	assert_null(strstr(v.how, "refused"));
	snprintf(ctx.uncovered[1], sizeof(ctx.uncovered[1]),
		 "%s (No space left on device)", obj);
	ctx.nuncovered = 2;
	verdict(obj, 1, &v);
	assert_int_equal(v.state, COV_NO);
	snprintf(want, sizeof(want), "refused (No space left on device)");
	assert_string_equal(v.how, want);
}

/* Its own SFrame: this test program, built with --gsframe. */
static void test_own_sframe(void **state)
{
	struct coverage v;

	(void)state;
#ifdef HAVE_GSFRAME
	verdict("/proc/self/exe", 1, &v);
	assert_int_equal(v.state, COV_YES);
	assert_string_equal(v.how, "SFrame in the file");
#else
	(void)v;
	fail_msg("the assembler cannot --gsframe");
#endif
}

/* Hostile files: never believed, never a crash. */
static void test_hostile(void **state)
{
	char path[160];
	struct coverage v;
	unsigned char eh[64];
	int fd;

	(void)state;
	verdict("/etc/hostname", 1, &v);
	assert_int_equal(v.state, COV_NO);
	assert_non_null(strstr(v.how, "not an x86-64 ELF object"));
	snprintf(path, sizeof(path), "%s/short", dir);
	copy_file(LIBC, path, 40);		/* half an ELF header */
	verdict(path, 1, &v);
	assert_non_null(strstr(v.how, "not an x86-64 ELF object"));
	/* e_phnum 65535 at an offset past the end. */
	copy_file(LIBC, path, 64);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, eh, 64, 0), 64);
	eh[56] = 0xff;
	eh[57] = 0xff;				/* e_phnum */
	memset(eh + 32, 0xff, 8);		/* e_phoff */
	assert_int_equal(pwrite(fd, eh, 64, 0), 64);
	eh[56] = 4;
	eh[57] = 0;
	close(fd);
	verdict(path, 1, &v);
	assert_non_null(strstr(v.how, "not an x86-64 ELF object"));
	fd = open(path, O_RDWR);
	assert_int_equal(pwrite(fd, eh, 64, 0), 64);	/* 4 phdrs, far away */
	close(fd);
	verdict(path, 1, &v);
	assert_non_null(strstr(v.how, "not an x86-64 ELF object"));
	verdict("/tmp", 1, &v);			/* a directory */
	assert_int_equal(v.state, COV_NO);
	assert_string_equal(v.how, "not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_not_seen, reset),
		cmocka_unit_test_setup(test_no_cfi, reset),
		cmocka_unit_test_setup(test_lookalike_entry, reset),
		cmocka_unit_test_setup(test_imported, reset),
		cmocka_unit_test_setup(test_refused, reset),
		cmocka_unit_test_setup(test_own_sframe, reset),
		cmocka_unit_test_setup(test_hostile, reset),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
