// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: CODECTL_IOC_IMPORT's argument checks and
 * errnos.  A section that imports, and its use by discovery, are tested
 * with libcodectl's synthesis through the codectl tool and disc-test
 * (guest-suite.sh): this suite builds no SFrame from CFI.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#define COPY		"/tmp/codectl-import-libc.so"
/*
 * An import there ends above the user address space (TASK_SIZE_MAX): the
 * last page of x86-64's, the first beyond arm64's largest (52-bit VA).
 */
#if defined(__aarch64__)
#define USER_END	(1ULL << 52)
#else
#define USER_END	0x7ffffffff000ULL
#endif
/* Far above any shared object's segments, page aligned. */
#define VADDR		0x40000000ULL

static int import(int fd, const void *sec, uint64_t size, uint64_t vaddr,
		  uint32_t flags)
{
	struct codectl_import_info ii = {
		.sframe = (uintptr_t)sec, .sframe_size = size,
		.sframe_vaddr = vaddr, .fd = fd, .flags = flags,
	};

	return cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &ii);
}

/* A valid-looking header and garbage after it. */
static void bad_section(uint8_t *buf, size_t len)
{
	struct sframe_hdr h = {
		.magic = SFRAME_MAGIC, .version = 3, .abi = sframe_host_abi(),
		.cfa_fixed_ra_offset = -8, .num_fdes = 1, .num_fres = 1,
		.fre_len = 8, .fdes_off = 0, .fres_off = 64,
	};

	memset(buf, 0xa5, len);
	memcpy(buf, &h, sizeof(h));
}

static int child_eperm(void *arg)
{
	int fd = *(int *)arg;
	uint8_t sec[256];

	if (setgid(65534) || setuid(65534))
		return 2;
	bad_section(sec, sizeof(sec));
	if (import(fd, sec, sizeof(sec), VADDR, 0) != -EPERM ||
	    import(-1, NULL, 0, 0, CODECTL_IMPORT_CLEAR) != -EPERM ||
	    import(fd, NULL, 0, 0, CODECTL_IMPORT_REMOVE) != -EPERM)
		return 1;
	return 0;
}

TEST(import_errors)
{
	unsigned long long imp_max = 0;
	int libc = -1, self = -1, devnull = -1, wr = -1, cp = -1;
	uint8_t sec[256];
	pid_t pid;
	int st;

	if (!sframe_host_abi())
		SKIP("no SFrame ABI for this machine");
	if (geteuid()) {
		/* The unprivileged pass: everything is EPERM. */
		EXPECT_RC(import(0, NULL, 0, 0, CODECTL_IMPORT_CLEAR), EPERM,
			  "IMPORT CLEAR without CAP_SYS_ADMIN");
		EXPECT_RC(import(0, sec, sizeof(sec), VADDR, 0), EPERM,
			  "IMPORT without CAP_SYS_ADMIN");
		return T_PASS;
	}
	bad_section(sec, sizeof(sec));
	libc = open(LIBC, O_RDONLY | O_CLOEXEC);
	REQUIRE(libc >= 0, "open %s: %s", LIBC, strerror(errno));
	self = open(g_self_exe, O_RDONLY | O_CLOEXEC);
	REQUIRE(self >= 0, "open %s: %s", g_self_exe, strerror(errno));
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	REQUIRE(devnull >= 0, "open /dev/null");

	/* EPERM: a child without the capability. */
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid)
		_exit(child_eperm(&libc));
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	EXPECT(WIFEXITED(st) && !WEXITSTATUS(st),
	       "uid 65534: IMPORT, CLEAR and REMOVE not all EPERM (status %#x)",
	       st);

	/* EINVAL: flags, address, size. */
	EXPECT_RC(import(libc, sec, sizeof(sec), VADDR, 0x8), EINVAL,
		  "IMPORT with an unknown flag");
	EXPECT_RC(import(libc, sec, sizeof(sec), VADDR,
			 CODECTL_IMPORT_REMOVE | CODECTL_IMPORT_CLEAR), EINVAL,
		  "IMPORT with REMOVE and CLEAR");
	EXPECT_RC(import(libc, sec, sizeof(sec), 0, 0), EINVAL,
		  "IMPORT at address 0");
	EXPECT_RC(import(libc, sec, sizeof(sec), VADDR + 8, 0), EINVAL,
		  "IMPORT at an address not page aligned");
	EXPECT_RC(import(libc, sec, 0, VADDR, 0), EINVAL, "IMPORT of 0 bytes");
	EXPECT_RC(import(libc, sec, sizeof(sec), USER_END, 0),
		  EINVAL, "IMPORT ending above the user address space");
	/*
	 * EFBIG: larger than import_max_bytes, which could never hold it
	 * (checked before anything); a section larger than sframe_flat_max
	 * is imported (decoded in a kernel copy: tests/vm/tracers.sh).
	 */
	REQUIRE_RC(param_read("import_max_bytes", &imp_max), 0,
		   "import_max_bytes");
	EXPECT_RC(import(libc, sec, imp_max + 1, VADDR, 0), EFBIG,
		  "IMPORT larger than import_max_bytes");
	/* EBADF */
	EXPECT_RC(import(-1, sec, sizeof(sec), VADDR, 0), EBADF,
		  "IMPORT of fd -1");
	EXPECT_RC(import(-1, NULL, 0, 0, CODECTL_IMPORT_REMOVE), EBADF,
		  "REMOVE of fd -1");
	/* ENOEXEC: not a regular file; inside the segments; bad section. */
	EXPECT_RC(import(devnull, sec, sizeof(sec), VADDR, 0), ENOEXEC,
		  "IMPORT for /dev/null");
	EXPECT_RC(import(libc, sec, sizeof(sec), 0x1000, 0), ENOEXEC,
		  "IMPORT at an address inside libc's segments");
	EXPECT_RC(import(libc, sec, sizeof(sec), VADDR, 0), ENOEXEC,
		  "IMPORT of an invalid section");
	/* EFAULT: the section cannot be read. */
	EXPECT_RC(import(libc, (void *)LOW_BAD_ADDR, sizeof(sec), VADDR, 0),
		  EFAULT, "IMPORT from an unmapped buffer");
	/* EEXIST: this program has its own SFrame section. */
	EXPECT_RC(import(self, sec, sizeof(sec), VADDR, 0), EEXIST,
		  "IMPORT for an object with PT_GNU_SFRAME");
	/* ENOENT: REMOVE of a file without import. */
	EXPECT_RC(import(devnull, NULL, 0, 0, CODECTL_IMPORT_REMOVE), ENOENT,
		  "REMOVE of a file without an import");
	/* ETXTBSY: a copy of libc that is open for writing. */
	REQUIRE(!copy_file(LIBC, COPY, 0644), "copy %s to %s", LIBC, COPY);
	wr = open(COPY, O_WRONLY | O_CLOEXEC);
	cp = open(COPY, O_RDONLY | O_CLOEXEC);
	REQUIRE(wr >= 0 && cp >= 0, "open %s", COPY);
	EXPECT_RC(import(cp, sec, sizeof(sec), VADDR, 0), ETXTBSY,
		  "IMPORT for a file open for writing");
	close(wr);
	wr = -1;
	EXPECT_RC(import(cp, sec, sizeof(sec), VADDR, 0), ENOEXEC,
		  "the same once closed: the section is judged");
	/* The ioctl without an argument. */
	EXPECT_RC(cc_ioctl(g_fd, CODECTL_IOC_IMPORT, (void *)LOW_BAD_ADDR),
		  EFAULT, "IMPORT with an unreadable argument");
	/* CLEAR always works. */
	EXPECT_RC(import(-1, NULL, 0, 0, CODECTL_IMPORT_CLEAR), 0,
		  "IMPORT CLEAR");
out:
	if (wr >= 0)
		close(wr);
	if (cp >= 0)
		close(cp);
	unlink(COPY);
	if (libc >= 0)
		close(libc);
	if (self >= 0)
		close(self);
	if (devnull >= 0)
		close(devnull);
	return T_PASS;
}
