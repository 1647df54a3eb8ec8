// SPDX-License-Identifier: GPL-2.0
/*
 * The order the daemon serves objects in (tools/daemon-shares.c): what
 * the module queued (a process unwinds through the object now) before
 * what a look at every process found, even when that look came first;
 * a found object queued afterwards moves up; within each, the system's
 * objects before a user's.
 */
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

#include "daemon.h"

/* What daemon-shares.c takes from the daemon. */
struct daemon d;

/* A record of @path (its identity from stat), pid 0: charged by the file. */
static struct codectl_demand rec(const char *path)
{
	struct codectl_demand r;
	struct stat st;

	memset(&r, 0, sizeof(r));
	assert_int_equal(stat(path, &st), 0);
	snprintf(r.path, sizeof(r.path), "%s", path);
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	r.size = st.st_size;
	r.mtime_sec = st.st_mtim.tv_sec;
	r.mtime_nsec = st.st_mtim.tv_nsec;
	return r;
}

/* The path of the next record served, and whether it was queued. */
static const char *next(int *queued)
{
	static struct codectl_demand r;
	unsigned int owner;

	assert_int_equal(pending_next(&r, queued, &owner), 1);
	return r.path;
}

static char user_file[64];

static void test_demand_first(void **state)
{
	const char *found[] = { "/bin/sh", "/etc/passwd", "/etc/group" };
	struct codectl_demand r;
	unsigned int owner, i;
	int queued;

	(void)state;
	/* A look at every process finds three of the system's objects. */
	for (i = 0; i < 3; i++) {
		r = rec(found[i]);
		pending_add(&r, 0);
	}
	/* Then the module queues a user's object, and one of those three. */
	r = rec(user_file);
	pending_add(&r, 1);
	r = rec("/etc/group");
	pending_add(&r, 1);
	/* Queued first, the system's before the user's; then the rest. */
	assert_string_equal(next(&queued), "/etc/group");
	assert_int_equal(queued, 1);
	assert_string_equal(next(&queued), user_file);
	assert_int_equal(queued, 1);
	assert_string_equal(next(&queued), "/bin/sh");
	assert_int_equal(queued, 0);
	/* Queued after a found one: served before it. */
	r = rec("/bin/ls");
	pending_add(&r, 1);
	assert_string_equal(next(&queued), "/bin/ls");
	assert_int_equal(queued, 1);
	assert_string_equal(next(&queued), "/etc/passwd");
	assert_int_equal(queued, 0);
	assert_int_equal(pending_next(&r, &queued, &owner), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demand_first),
	};
	int fd, ret;

	/* A file of a user's (not root's): not the system's. */
	snprintf(user_file, sizeof(user_file), "/tmp/codectl-shares-XXXXXX");
	fd = mkstemp(user_file);
	if (fd < 0 || fchown(fd, 4242, 4242))
		return 1;
	close(fd);
	d.cache_max = 1 << 20;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(user_file);
	return ret;
}
