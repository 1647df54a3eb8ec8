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
#include <sys/mman.h>
#include <sys/stat.h>
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

/*
 * ioctl(@fd, uw_cmd, @a) by the system call instruction itself, inline in
 * the calling function (uw_unwind(), uw_unwind_fd()).
 */
#if defined(__x86_64__)
#define UW_IOCTL(ret, fd, a)						\
	__asm__ volatile("syscall"					\
			 : "=a"(ret)					\
			 : "0"((long)SYS_ioctl), "D"((long)(fd)),	\
			   "S"((long)uw_cmd), "d"(a)			\
			 : "rcx", "r11", "memory")
#elif defined(__aarch64__)
#define UW_IOCTL(ret, fd, a) do {					\
	register long x0 __asm__("x0") = (fd);				\
	register unsigned long x1 __asm__("x1") = uw_cmd;		\
	register void *x2 __asm__("x2") = (a);				\
	register long x8 __asm__("x8") = SYS_ioctl;			\
									\
	__asm__ volatile("svc #0"					\
			 : "+r"(x0)					\
			 : "r"(x1), "r"(x2), "r"(x8)			\
			 : "memory");					\
	(ret) = x0;							\
} while (0)
#else
#error "uw-common.c: no system call instruction for this architecture"
#endif

NOIPA long uw_unwind_fd(int fd, struct codectl_unwind_args *a)
{
	long ret;

	UW_IOCTL(ret, fd, a);
	return ret;
}

NOIPA long uw_unwind(struct codectl_unwind_args *a)
{
	long ret;

	UW_IOCTL(ret, uw_ufd, a);
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

/*
 * A static program (the arm64 guest's bench-unwind) has no dynamic symbol
 * table for dladdr1(): its own .symtab then, read once from
 * /proc/self/exe (linked at its addresses: not PIE).  The function symbol
 * containing @addr, or NULL.
 */
static const ElfW(Sym) *uw_static_sym(uint64_t addr, const char **name)
{
	static const ElfW(Sym) *syms;
	static const char *strs;
	static size_t nsyms;
	static int tried;
	const ElfW(Ehdr) *eh;
	const ElfW(Shdr) *sh;
	struct stat st;
	const char *p;
	size_t i;
	int fd;

	if (!tried) {
		tried = 1;
		fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return NULL;
		p = fstat(fd, &st) ? MAP_FAILED :
		    mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			return NULL;
		eh = (const ElfW(Ehdr) *)p;
		if (eh->e_type != ET_EXEC ||
		    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) >
		    (uint64_t)st.st_size)
			return NULL;
		sh = (const ElfW(Shdr) *)(p + eh->e_shoff);
		for (i = 0; i < eh->e_shnum; i++) {
			if (sh[i].sh_type != SHT_SYMTAB ||
			    sh[i].sh_link >= eh->e_shnum)
				continue;
			syms = (const ElfW(Sym) *)(p + sh[i].sh_offset);
			nsyms = sh[i].sh_size / sizeof(*syms);
			strs = p + sh[sh[i].sh_link].sh_offset;
			break;
		}
	}
	for (i = 0; i < nsyms; i++) {
		if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC &&
		    syms[i].st_size && addr >= syms[i].st_value &&
		    addr - syms[i].st_value < syms[i].st_size) {
			*name = strs + syms[i].st_name;
			return &syms[i];
		}
	}
	return NULL;
}

bool uw_func_range(const void *fn, uint64_t *lo, uint64_t *hi,
		   const char **name)
{
	const ElfW(Sym) *sym = NULL;
	const char *n;
	Dl_info info;

	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	    info.dli_saddr && sym->st_size) {
		*lo = (uintptr_t)info.dli_saddr;
		n = info.dli_sname;
	} else {
		/* A static program: its own .symtab. */
		sym = uw_static_sym((uintptr_t)fn, &n);
		if (!sym)
			return false;
		*lo = sym->st_value;
	}
	*hi = *lo + sym->st_size;
	if (name)
		*name = n;
	return (uintptr_t)fn >= *lo && (uintptr_t)fn < *hi;
}

const char *uw_sym(uint64_t pc, char *buf, size_t len)
{
	const ElfW(Sym) *sym = NULL;
	const char *name;
	Dl_info info;
	int found;

	found = pc && dladdr1((void *)(uintptr_t)pc, &info, (void **)&sym,
			      RTLD_DL_SYMENT);
	if (found && info.dli_sname && info.dli_saddr && sym &&
	    pc < (uintptr_t)info.dli_saddr + sym->st_size) {
		snprintf(buf, len, "%s+%#llx", info.dli_sname,
			 (unsigned long long)(pc - (uintptr_t)info.dli_saddr));
	} else if (pc && (sym = uw_static_sym(pc, &name))) {
		/* A static program's own function. */
		snprintf(buf, len, "%s+%#llx", name,
			 (unsigned long long)(pc - sym->st_value));
	} else if (!found) {
		snprintf(buf, len, "?");
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
