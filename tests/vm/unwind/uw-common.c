// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by unwind-test.c and bench-unwind.c; see uw-common.h.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <codectl.h>
#include "uw-common.h"

int uw_fd = -1;
int uw_ufd = -1;
unsigned long uw_cmd = CODECTL_IOC_UNWIND;
const char *uw_dev = CODECTL_DEVICE;

static uint32_t uw_extra_flags(void);

int uw_open(void)
{
	if (uw_fd >= 0)
		return 0;
	uw_fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (uw_fd < 0)
		return -errno;
	uw_ufd = uw_fd;
	/* NOFAULT walks: the test module's device and ioctl only. */
	if (uw_extra_flags() & CODECTL_UNWIND_NOFAULT) {
		uw_dev = CODECTL_TEST_DEVICE;
		uw_cmd = CODECTL_TEST_IOC_UNWIND;
		uw_ufd = open(uw_dev, O_RDWR | O_CLOEXEC);
		if (uw_ufd < 0)
			return -errno;
	}
	return 0;
}

NOIPA long uw_unwind_fd(int fd, struct codectl_unwind_args *a)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ioctl), "D"((long)fd),
			   "S"((long)uw_cmd), "d"(a)
			 : "rcx", "r11", "memory");
	return ret;
}

NOIPA long uw_unwind(struct codectl_unwind_args *a)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ioctl), "D"((long)uw_ufd),
			   "S"((long)uw_cmd), "d"(a)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * $UW_EXTRA_FLAGS (a number) is or'ed into every unwind's flags:
 * guest-suite.sh runs the tests again with CODECTL_UNWIND_NOFAULT, the
 * tracer hooks' walk.
 */
static uint32_t uw_extra_flags(void)
{
	const char *env = getenv("UW_EXTRA_FLAGS");

	return env ? (uint32_t)strtoul(env, NULL, 0) : 0;
}

void uw_args(struct codectl_unwind_args *a, uint64_t *ips, uint8_t *methods,
	     uint32_t max, uint32_t flags)
{
	memset(a, 0, sizeof(*a));
	a->ips = (uintptr_t)ips;
	a->methods = (uintptr_t)methods;
	a->max_frames = max;
	a->flags = flags | uw_extra_flags();
}

bool uw_func_range(const void *fn, uint64_t *lo, uint64_t *hi,
		   const char **name)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !info.dli_saddr || !sym->st_size)
		return false;
	*lo = (uintptr_t)info.dli_saddr;
	*hi = *lo + sym->st_size;
	if (name)
		*name = info.dli_sname;
	return (uintptr_t)fn >= *lo && (uintptr_t)fn < *hi;
}

const char *uw_sym(uint64_t pc, char *buf, size_t len)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!pc || !dladdr1((void *)(uintptr_t)pc, &info, (void **)&sym,
			    RTLD_DL_SYMENT)) {
		snprintf(buf, len, "?");
	} else if (info.dli_sname && info.dli_saddr && sym &&
		   pc < (uintptr_t)info.dli_saddr + sym->st_size) {
		snprintf(buf, len, "%s+%#llx", info.dli_sname,
			 (unsigned long long)(pc - (uintptr_t)info.dli_saddr));
	} else {
		const char *obj = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;

		snprintf(buf, len, "%s+%#llx",
			 obj ? obj + 1 : (info.dli_fname ? info.dli_fname : "?"),
			 (unsigned long long)(pc - (uintptr_t)info.dli_fbase));
	}
	return buf;
}

const char *uw_method_name(unsigned int m)
{
	static const char *const names[] = {
		[CODECTL_FRAME_REGS] = "REGS", [CODECTL_FRAME_SFRAME] = "SFRAME",
		[CODECTL_FRAME_JIT] = "JIT", [CODECTL_FRAME_FP] = "FP",
		[CODECTL_FRAME_FP_ENTRY] = "FP_ENTRY",
		[CODECTL_FRAME_SIGNAL] = "SIGNAL",
	};

	return m < sizeof(names) / sizeof(names[0]) && names[m] ? names[m] : "?";
}

const char *uw_stop_name(unsigned int s)
{
	static const char *const names[] = {
		[CODECTL_STOP_OUTERMOST] = "OUTERMOST", [CODECTL_STOP_END] = "END",
		[CODECTL_STOP_DEPTH] = "DEPTH", [CODECTL_STOP_FAULT] = "FAULT",
		[CODECTL_STOP_SP] = "SP", [CODECTL_STOP_ALIGN] = "ALIGN",
		[CODECTL_STOP_TABLE] = "TABLE", [CODECTL_STOP_NO_USER] = "NO_USER",
		[CODECTL_STOP_NOMEM] = "NOMEM", [CODECTL_STOP_NOT_CODE] = "NOT_CODE",
		[CODECTL_STOP_NO_RULE] = "NO_RULE", [CODECTL_STOP_BUDGET] = "BUDGET",
	};

	return s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

int uw_register_all(void)
{
	int n = codectl_register_self();

	return n < 0 ? -errno : n;
}

int uw_query(uint64_t addr, struct codectl_query_info *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	if (codectl_query(q))
		return -errno;
	return addr >= q->text_start ? 0 : -ENOENT;
}
