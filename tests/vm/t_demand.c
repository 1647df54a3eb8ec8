// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: the demand queue (CODECTL_IOC_DEMAND,
 * read() and poll() of struct codectl_demand records) and
 * CODECTL_IMPORT_PRUNE.  The daemon that reads the queue, and what it
 * does with the records, are tested by tests/vm/ondemand.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

/* An object without SFrame (with CFI), copied: a file nothing knows. */
#define NOSF		"/tests/unwind/disc/libdiscnosf.so"
#define NOSF_COPY	"/tmp/codectl-demand-nosf.so"

static int demand_attach(int fd)
{
	return cc_ioctl(fd, CODECTL_IOC_DEMAND, NULL);
}

static int prune(void)
{
	struct codectl_import_info ii = { .fd = -1,
					  .flags = CODECTL_IMPORT_PRUNE };

	return cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &ii);
}

static int child_eperm(void)
{
	int fd;

	if (setgid(65534) || setuid(65534))
		return 2;
	fd = open(CODECTL_DEVICE, O_RDONLY);
	if (fd < 0)
		return 3;
	return demand_attach(fd) == -EPERM && prune() == -EPERM ? 0 : 1;
}

/*
 * A child maps the copy and unwinds itself: discovery examines its
 * mappings on the way back to user space, and queues the copy.
 */
static int child_meets_copy(void)
{
	struct codectl_unwind_args a;
	uint64_t ips[16];

	if (!dlopen(NOSF_COPY, RTLD_NOW | RTLD_LOCAL))
		return 2;
	memset(&a, 0, sizeof(a));
	a.ips = (uintptr_t)ips;
	a.max_frames = 16;
	if (cc_ioctl(g_fd, CODECTL_IOC_UNWIND, &a))
		return 3;
	/* Discovery ran before this returned to user space. */
	return 0;
}

TEST(demand_queue)
{
	struct codectl_demand recs[8], r;
	int fd1 = -1, fd2 = -1, st, i, found = 0;
	struct pollfd pfd;
	struct stat sb;
	ssize_t n;
	pid_t pid;

	if (geteuid()) {
		EXPECT_RC(demand_attach(g_fd), EPERM,
			  "DEMAND without CAP_SYS_ADMIN");
		return T_PASS;
	}
	/* EPERM: a child without the capability. */
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid)
		_exit(child_eperm());
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	EXPECT(WIFEXITED(st) && !WEXITSTATUS(st),
	       "uid 65534: DEMAND and IMPORT_PRUNE not EPERM (status %#x)", st);

	fd1 = open(CODECTL_DEVICE, O_RDONLY | O_NONBLOCK);
	fd2 = open(CODECTL_DEVICE, O_RDONLY | O_NONBLOCK);
	REQUIRE(fd1 >= 0 && fd2 >= 0, "open " CODECTL_DEVICE);
	/* Not attached: read EINVAL, poll EPOLLERR. */
	n = read(fd1, recs, sizeof(recs));
	EXPECT(n < 0 && errno == EINVAL, "read() before DEMAND: %zd (%s)", n,
	       n < 0 ? ename(errno) : "-");
	pfd = (struct pollfd){ .fd = fd1, .events = POLLIN };
	EXPECT(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR),
	       "poll() before DEMAND: revents %#x", pfd.revents);
	REQUIRE_RC(demand_attach(fd1), 0, "DEMAND");
	EXPECT_RC(demand_attach(fd1), 0, "DEMAND again on the same file");
	EXPECT_RC(demand_attach(fd2), EBUSY, "DEMAND with another attached");
	EXPECT_RC(cc_ioctl(fd2, _IOW(CODECTL_IOC_MAGIC, 0x47, int), NULL),
		  ENOTTY, "DEMAND's number with a size");
	n = read(fd2, recs, sizeof(recs));
	EXPECT(n < 0 && errno == EINVAL, "read() of the other file: %zd", n);
	n = read(fd1, recs, sizeof(recs[0]) - 1);
	EXPECT(n < 0 && errno == EINVAL, "read() shorter than a record: %zd",
	       n);
	/* Whatever discovery queued before: drained, then EAGAIN. */
	for (i = 0; i < 64 && read(fd1, recs, sizeof(recs)) > 0; i++)
		;
	n = read(fd1, recs, sizeof(recs));
	EXPECT(n < 0 && errno == EAGAIN, "read() of an empty queue: %zd (%s)",
	       n, n < 0 ? ename(errno) : "-");
	pfd.revents = 0;
	EXPECT(poll(&pfd, 1, 0) == 0, "poll() of an empty queue: revents %#x",
	       pfd.revents);

	/* A file an unwind meets without SFrame or import: one record. */
	unlink(NOSF_COPY);
	REQUIRE(!copy_file(NOSF, NOSF_COPY, 0755), "copy %s", NOSF);
	REQUIRE(!stat(NOSF_COPY, &sb), "stat");
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid)
		_exit(child_meets_copy());
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	REQUIRE(WIFEXITED(st) && !WEXITSTATUS(st), "child status %#x", st);
	pfd.revents = 0;
	EXPECT(poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLIN),
	       "poll() after the unwind: revents %#x", pfd.revents);
	while ((n = read(fd1, recs, sizeof(recs))) > 0) {
		EXPECT(n % sizeof(recs[0]) == 0, "read %zd bytes", n);
		for (i = 0; i < n / (ssize_t)sizeof(recs[0]); i++) {
			r = recs[i];
			EXPECT(!r.__reserved && r.path[sizeof(r.path) - 1] == 0,
			       "record: reserved %llu, path not terminated",
			       (unsigned long long)r.__reserved);
			if (strcmp(r.path, NOSF_COPY))
				continue;
			found++;
			EXPECT(r.ino == sb.st_ino && r.dev == sb.st_dev &&
			       r.size == sb.st_size &&
			       r.mtime_sec == sb.st_mtim.tv_sec &&
			       r.mtime_nsec == (uint32_t)sb.st_mtim.tv_nsec,
			       "record's identity %llu:%llu, the file's %llu:%llu",
			       (unsigned long long)r.dev,
			       (unsigned long long)r.ino,
			       (unsigned long long)sb.st_dev,
			       (unsigned long long)sb.st_ino);
			EXPECT(r.pid == (uint32_t)pid && r.vm_start < r.vm_end &&
			       !r.flags, "record: pid %u (child %d), %llx-%llx, "
			       "flags %#x", r.pid, pid,
			       (unsigned long long)r.vm_start,
			       (unsigned long long)r.vm_end, r.flags);
		}
	}
	EXPECT(found == 1, "%d records of %s, expected 1", found, NOSF_COPY);

	/* Closing detaches: the other file may attach. */
	close(fd1);
	fd1 = -1;
	EXPECT_RC(demand_attach(fd2), 0, "DEMAND after the reader closed");

	/* PRUNE: a count (ondemand.sh sees it drop an import). */
	EXPECT(prune() >= 0, "IMPORT_PRUNE: %d", prune());
	{
		struct codectl_import_info ii = {
			.fd = -1,
			.flags = CODECTL_IMPORT_PRUNE | CODECTL_IMPORT_CLEAR,
		};

		EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &ii), EINVAL,
			  "IMPORT with PRUNE and CLEAR");
	}
out:
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	unlink(NOSF_COPY);
	return T_PASS;
}
