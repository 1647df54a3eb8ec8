// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: the max_registrations and max_bytes limits
 * (module parameters, changed at run time by root).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#define ULL(x) ((unsigned long long)(x))
#define LIMIT 16

static struct codectl_jit_unwind_table *lim_tbl;

/* Register range @i of @code: ELF for even @i, JIT for odd. */
static int reg_nth(uint8_t *code, int i, const char *path)
{
	uint64_t s = (uintptr_t)code + 64 * i;

	return cc_register_range(i % 2, s, s + 48, (uintptr_t)lim_tbl, path);
}

static int unreg_nth(uint8_t *code, int i)
{
	uint64_t s = (uintptr_t)code + 64 * i;

	return cc_unregister(g_fd, s, s + 48);
}

TEST(limit_registrations)
{
	unsigned long long orig;
	struct codectl_version v;
	uint8_t *code = NULL;
	int i, rc, up[2] = { -1, -1 }, down[2] = { -1, -1 };
	pid_t child = -1;
	char c;
	bool live[LIMIT + 2] = { false };

	rc = param_writable("max_registrations");
	if (rc != T_PASS)
		return rc;
	REQUIRE_RC(param_read("max_registrations", &orig), 0, "reading max_registrations");
	code = map_code(1);
	lim_tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && lim_tbl, "mmap");
	jit_table_init(lim_tbl, 24, 24, 4, 1);
	REQUIRE_RC(param_write("max_registrations", LIMIT), 0,
		   "setting max_registrations to %d", LIMIT);
	REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
	EXPECT(v.max_registrations == LIMIT, "VERSION max_registrations %llu, expected %d",
	       ULL(v.max_registrations), LIMIT);

	/* The limit is per address space: a child holding LIMIT does not count. */
	REQUIRE(!pipe(up) && !pipe(down), "pipe: %m");
	child = fork();
	REQUIRE(child >= 0, "fork: %m");
	if (!child) {
		int n = 0;

		close(up[0]);
		close(down[1]);
		for (i = 0; i < LIMIT; i++)
			n += !reg_nth(code, i, "/child/lib.so");
		n += reg_nth(code, LIMIT, "/child/lib.so") == -ENOSPC;
		c = n == LIMIT + 1 ? 'y' : 'n';
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	REQUIRE(read(up[0], &c, 1) == 1, "child died before registering");
	EXPECT(c == 'y', "child: %d registrations then ENOSPC did not hold", LIMIT);

	for (i = 0; i < LIMIT; i++) {
		rc = reg_nth(code, i, "/parent/lib.so");
		REQUIRE_RC(rc, 0, "registration %d of %d (%s)", i + 1, LIMIT,
			   i % 2 ? "JIT" : "ELF");
		live[i] = true;
	}
	rc = reg_nth(code, LIMIT, "/parent/lib.so");
	EXPECT_RC(rc, ENOSPC, "ELF registration %d with max_registrations %d",
		  LIMIT + 1, LIMIT);
	live[LIMIT] = !rc;
	rc = reg_nth(code, LIMIT + 1, NULL);
	EXPECT_RC(rc, ENOSPC, "JIT registration %d with max_registrations %d",
		  LIMIT + 1, LIMIT);
	live[LIMIT + 1] = !rc;
	EXPECT(cc_nr(g_fd) == LIMIT, "nr_registrations %ld after ENOSPC, expected %d",
	       cc_nr(g_fd), LIMIT);

	/* Removing one makes room for exactly one. */
	REQUIRE_RC(unreg_nth(code, 3), 0, "UNREGISTER");
	live[3] = false;
	rc = reg_nth(code, LIMIT, "/parent/lib.so");
	EXPECT_RC(rc, 0, "registration after freeing a slot");
	live[LIMIT] = !rc;
	rc = reg_nth(code, 3, "/parent/lib.so");
	EXPECT_RC(rc, ENOSPC, "another registration at the limit");
	live[3] = !rc;

	/* Lowering the limit below the current count: nothing new, nothing lost. */
	REQUIRE_RC(param_write("max_registrations", LIMIT / 2), 0,
		   "setting max_registrations to %d", LIMIT / 2);
	rc = reg_nth(code, 3, "/parent/lib.so");
	EXPECT_RC(rc, ENOSPC, "registration with %d registrations and max_registrations %d",
		  LIMIT, LIMIT / 2);
	live[3] = !rc;
	EXPECT(cc_walk_count(g_fd) == LIMIT,
	       "QUERY walk sees %ld registrations after lowering the limit, expected %d",
	       cc_walk_count(g_fd), LIMIT);
	/* Raising it back lets registrations in again. */
	REQUIRE_RC(param_write("max_registrations", orig), 0, "restoring max_registrations");
	rc = reg_nth(code, 3, "/parent/lib.so");
	EXPECT_RC(rc, 0, "registration after restoring max_registrations to %llu", orig);
	live[3] = !rc;
out:
	for (i = 0; i < LIMIT + 2; i++)
		if (live[i])
			EXPECT_RC(unreg_nth(code, i), 0, "UNREGISTER %d", i);
	if (child > 0) {
		if (down[1] >= 0)
			close(down[1]);
		down[1] = -1;
		waitpid(child, NULL, 0);
	}
	for (i = 0; i < 2; i++) {
		if (up[i] >= 0)
			close(up[i]);
		if (down[i] >= 0)
			close(down[i]);
	}
	param_write("max_registrations", orig);
	unmap_pages(code, 1);
	unmap_pages(lim_tbl, 1);
	return T_PASS;
}

static char bigpath[CODECTL_PATH_MAX];

TEST(limit_bytes)
{
	unsigned long long orig;
	struct codectl_version v0, v1, v;
	uint8_t *code = NULL;
	bool live[8] = { false };
	int i, rc;

	rc = param_writable("max_bytes");
	if (rc != T_PASS)
		return rc;
	REQUIRE_RC(param_read("max_bytes", &orig), 0, "reading max_bytes");
	code = map_code(1);
	lim_tbl = map_pages(1, PROT_READ | PROT_WRITE);
	REQUIRE(code && lim_tbl, "mmap");
	jit_table_init(lim_tbl, 24, 24, 4, 1);
	REQUIRE_RC(cc_version(g_fd, &v0), 0, "VERSION");

	/* max_bytes 1: nothing fits. */
	rc = param_write("max_bytes", 1);
	if (rc)
		printf("# the module refuses max_bytes 1 (%s); testing larger limits only\n",
		       ename(rc));
	else {
		REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
		EXPECT(v.max_bytes == 1, "VERSION max_bytes %llu, expected 1",
		       ULL(v.max_bytes));
		rc = reg_nth(code, 0, "/lib/a.so");
		EXPECT_RC(rc, ENOMEM, "ELF registration with max_bytes 1");
		live[0] = !rc;
		rc = reg_nth(code, 1, NULL);
		EXPECT_RC(rc, ENOMEM, "JIT registration with max_bytes 1");
		live[1] = !rc;
		REQUIRE_RC(param_write("max_bytes", orig), 0, "restoring max_bytes");
	}
	EXPECT(cc_nr(g_fd) == (long)v0.nr_registrations, "ENOMEM changed nr_registrations");

	/* One registration, then a limit of exactly what is in use. */
	for (i = 0; i < 2; i++)
		if (live[i] && !unreg_nth(code, i))
			live[i] = false;
	rc = reg_nth(code, 0, "/lib/a.so");
	REQUIRE_RC(rc, 0, "ELF registration with max_bytes %llu", orig);
	live[0] = true;
	REQUIRE_RC(cc_version(g_fd, &v1), 0, "VERSION");
	REQUIRE(v1.bytes > v0.bytes, "one registration uses no bytes (%llu -> %llu)",
		ULL(v0.bytes), ULL(v1.bytes));
	REQUIRE_RC(param_write("max_bytes", v1.bytes), 0, "setting max_bytes to %llu",
		   ULL(v1.bytes));
	rc = reg_nth(code, 2, "/lib/a.so");
	EXPECT_RC(rc, ENOMEM, "ELF registration with max_bytes == bytes in use (%llu)",
		  ULL(v1.bytes));
	live[2] = !rc;
	rc = reg_nth(code, 3, NULL);
	EXPECT_RC(rc, ENOMEM, "JIT registration with max_bytes == bytes in use");
	live[3] = !rc;
	REQUIRE_RC(cc_version(g_fd, &v), 0, "VERSION");
	EXPECT(v.bytes == v1.bytes && v.nr_registrations == v1.nr_registrations,
	       "failed registrations changed bytes %llu -> %llu, nr %llu -> %llu",
	       ULL(v1.bytes), ULL(v.bytes), ULL(v1.nr_registrations),
	       ULL(v.nr_registrations));

	/* Strings are counted: 1000 bytes of room do not hold a 4 KiB path. */
	REQUIRE_RC(param_write("max_bytes", v1.bytes + 1000), 0, "setting max_bytes");
	memset(bigpath, 'q', sizeof(bigpath) - 1);
	rc = reg_nth(code, 4, bigpath);
	EXPECT_RC(rc, ENOMEM, "registration with a %zu-byte pathname and 1000 bytes left",
		  sizeof(bigpath));
	live[4] = !rc;

	/* Below what is in use: still no new ones, removal works. */
	REQUIRE_RC(param_write("max_bytes", v1.bytes / 2), 0, "setting max_bytes");
	rc = reg_nth(code, 5, NULL);
	EXPECT_RC(rc, ENOMEM, "JIT registration with max_bytes below bytes in use");
	live[5] = !rc;
	REQUIRE_RC(unreg_nth(code, 0), 0, "UNREGISTER over the limit");
	live[0] = false;

	/* Restored: registrations fit again. */
	REQUIRE_RC(param_write("max_bytes", orig), 0, "restoring max_bytes");
	rc = reg_nth(code, 4, bigpath);
	EXPECT_RC(rc, 0, "registration with a %zu-byte pathname after restoring max_bytes",
		  sizeof(bigpath));
	live[4] = !rc;
out:
	for (i = 0; i < 8; i++)
		if (live[i])
			EXPECT_RC(unreg_nth(code, i), 0, "UNREGISTER %d", i);
	param_write("max_bytes", orig);
	unmap_pages(code, 1);
	unmap_pages(lim_tbl, 1);
	return T_PASS;
}
