// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: CODECTL_IOC_IMPORT's argument checks and
 * errnos.  A section that imports, and its use by discovery, are tested
 * with libcodectl's synthesis through the codectl tool and disc-test
 * (guest-suite.sh): this suite builds no SFrame from CFI; a valid section
 * for the register table's checks comes from the codectl tool (codectl
 * synth -o).
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

static int import_regs(int fd, const void *sec, uint64_t size,
		       uint64_t vaddr, uint32_t flags, const void *regs,
		       uint64_t regs_size)
{
	struct codectl_import_info ii = {
		.sframe = (uintptr_t)sec, .sframe_size = size,
		.sframe_vaddr = vaddr, .fd = fd, .flags = flags,
		.regs = (uintptr_t)regs, .regs_size = regs_size,
	};

	return cc_ioctl(g_fd, CODECTL_IOC_IMPORT, &ii);
}

static int import(int fd, const void *sec, uint64_t size, uint64_t vaddr,
		  uint32_t flags)
{
	return import_regs(fd, sec, size, vaddr, flags, NULL, 0);
}

/*
 * libc's section synthesised for VADDR by the codectl tool (malloc()ed,
 * *@size bytes), or NULL.
 */
static void *tool_section(uint64_t *size)
{
	static const char out[] = "/tmp/codectl-import-libc.sframe";
	char cmd[256];
	void *buf = NULL;
	FILE *f;
	long n;

	snprintf(cmd, sizeof(cmd), "codectl synth -a %#llx -o %s %s >/dev/null",
		 (unsigned long long)VADDR, out, LIBC);
	if (system(cmd))
		return NULL;
	f = fopen(out, "re");
	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*size = n;
	}
	if (f)
		fclose(f);
	unlink(out);
	return buf;
}

/* libc's line of debugfs codectl/imports: its register table's bytes. */
static long long regs_listed(void)
{
	char line[4608], path[4096];
	long long regs = -1, size, r;
	FILE *f = fopen("/sys/kernel/debug/codectl/imports", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %*s %lld %lld %4095s", &size,
			   &r, path) == 3 && strstr(path, "libc.so.6"))
			regs = r;
	if (f)
		fclose(f);
	return regs;
}

/*
 * The register table (VER2): its arguments checked with the rest; read
 * before the section is judged; judged as the section is.  A valid
 * section for libc (from the codectl tool) taken as libc's register
 * table is kept and listed (x86-64), and refused on arm64, which has no
 * register tables; garbage is refused.
 */
static void import_regs_errors(int libc, const uint8_t *bad, size_t badlen)
{
	unsigned long long imp_max = 0;
	uint64_t size = 0;
	void *good;

	EXPECT_RC(import_regs(libc, bad, badlen, VADDR, 0, bad, 0), EINVAL,
		  "IMPORT with a register table of 0 bytes");
	EXPECT_RC(import_regs(libc, bad, badlen, VADDR, 0, NULL, badlen),
		  EINVAL, "IMPORT with a register table's size only");
	EXPECT_RC(import_regs(libc, NULL, 0, 0, CODECTL_IMPORT_REMOVE, bad,
			      badlen), EINVAL, "REMOVE with a register table");
	EXPECT_RC(import_regs(-1, NULL, 0, 0, CODECTL_IMPORT_CLEAR, bad,
			      badlen), EINVAL, "CLEAR with a register table");
	if (!param_read("import_max_bytes", &imp_max))
		EXPECT_RC(import_regs(libc, bad, badlen, VADDR, 0, bad,
				      imp_max + 1), EFBIG,
			  "IMPORT with a register table over import_max_bytes");
	EXPECT_RC(import_regs(libc, bad, badlen, VADDR, 0,
			      (void *)LOW_BAD_ADDR, badlen), EFAULT,
		  "IMPORT with an unreadable register table");
	good = tool_section(&size);
	EXPECT(good, "codectl synth -o of %s failed", LIBC);
	if (!good)
		return;
	EXPECT_RC(import_regs(libc, good, size, VADDR, 0, bad, badlen),
		  ENOEXEC, "IMPORT with an invalid register table");
	EXPECT(regs_listed() == -1, "libc listed after refused imports");
#if defined(__aarch64__)
	EXPECT_RC(import_regs(libc, good, size, VADDR, 0, good, size), ENOEXEC,
		  "IMPORT with a register table on arm64 (none there)");
#else
	EXPECT_RC(import_regs(libc, good, size, VADDR, 0, good, size), 0,
		  "IMPORT with a valid register table");
	EXPECT(regs_listed() > 0, "libc's register table listed: %lld bytes",
	       regs_listed());
	EXPECT_RC(import(libc, good, size, VADDR, 0), 0,
		  "IMPORT of the section alone");
	EXPECT(regs_listed() == 0, "libc listed with a register table of %lld "
	       "bytes after an import without one", regs_listed());
#endif
	free(good);
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
	import_regs_errors(libc, sec, sizeof(sec));
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
