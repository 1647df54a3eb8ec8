// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * codectl(): the codectl(2) system call over the ioctls of /dev/codectl,
 * and one wrapper per option.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "../shared/names.h"

/*
 * The descriptor, -1 while not open.  Opened without a lock: threads that
 * race on the first call each open the device, one wins the CAS and the
 * others close theirs.  No lock also means nothing to repair after fork().
 */
static int codectl_fd = -1;

CODECTL_EXPORT int codectl_get_fd(void)
{
	int fd, expected = -1;

	fd = __atomic_load_n(&codectl_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0)
		return fd;

	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			errno = ENODEV;	/* no device node: no module */
		return -1;
	}
	if (!__atomic_compare_exchange_n(&codectl_fd, &expected, fd, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		int saved = errno;

		close(fd);
		errno = saved;
		return expected;
	}
	return fd;
}

CODECTL_EXPORT int codectl_set_fd(int fd)
{
	int expected = -1;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		errno = EBADF;
		return -1;
	}
	if (!__atomic_compare_exchange_n(&codectl_fd, &expected, fd, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		errno = EBUSY;
		return -1;
	}
	return 0;
}

CODECTL_EXPORT void codectl_close(void)
{
	int saved = errno;
	int fd = __atomic_exchange_n(&codectl_fd, -1, __ATOMIC_ACQ_REL);

	if (fd >= 0)
		close(fd);
	errno = saved;
}

CODECTL_EXPORT int codectl(unsigned int option, void *info, size_t info_size,
			   unsigned int flags)
{
	struct codectl_args args;
	int fd;

	/* The option is the ioctl's _IOC_NR: 8 bits. */
	if (option > _IOC_NRMASK) {
		errno = EINVAL;
		return -1;
	}
	fd = codectl_get_fd();
	if (fd < 0)
		return -1;

	memset(&args, 0, sizeof(args));
	args.info = (uint64_t)(uintptr_t)info;
	args.info_size = info_size;
	args.flags = flags;
	return ioctl(fd, CODECTL_IOC(option), &args);
}

/*
 * The wrappers pass the VER0 sizes: a program built against an older
 * <linux/codectl.h> hands us a VER0 struct.  The VER1 fields (flags,
 * origin) are reached with codectl() and sizeof of the caller's struct;
 * codectl_query_pid(), new with VER2, passes the VER3 size (maps_fd).
 */
CODECTL_EXPORT int codectl_register_elf(const struct codectl_elf_info *info)
{
	return codectl(CODECTL_REGISTER_ELF, (void *)(uintptr_t)info,
		       CODECTL_ELF_INFO_SIZE_VER0, 0);
}

CODECTL_EXPORT int codectl_register_jit(const struct codectl_jit_info *info)
{
	return codectl(CODECTL_REGISTER_JIT, (void *)(uintptr_t)info,
		       sizeof(*info), 0);
}

CODECTL_EXPORT int codectl_unregister(uint64_t text_start, uint64_t text_end)
{
	struct codectl_unregister_info info = {
		.text_start = text_start,
		.text_end = text_end,
	};

	return codectl(CODECTL_UNREGISTER, &info, sizeof(info), 0);
}

CODECTL_EXPORT int codectl_query(struct codectl_query_info *info)
{
	return codectl(CODECTL_QUERY, info, CODECTL_QUERY_INFO_SIZE_VER0, 0);
}

/*
 * Another process: the module wants an fd of its /proc/PID/maps, opened
 * by us (VER3); it checks the file is procfs's and opens it again itself.
 */
CODECTL_EXPORT int codectl_query_pid(pid_t pid, struct codectl_query_info *info)
{
	char path[32];
	int ret, err;

	info->pid = pid;
	info->maps_fd = -1;
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		info->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (info->maps_fd < 0) {
			if (errno == ENOENT)
				errno = ESRCH;
			return -1;
		}
	}
	ret = codectl(CODECTL_QUERY, info, CODECTL_QUERY_INFO_SIZE_VER3, 0);
	if (info->maps_fd >= 0) {
		err = errno;
		close(info->maps_fd);
		errno = err;
	}
	info->maps_fd = -1;
	return ret;
}

/*
 * The struct as libcodectl 0.1 knew it: a caller built with an older
 * header has no room for VER1 (options_map: call codectl() with the
 * struct's size for it).
 */
CODECTL_EXPORT int codectl_version(struct codectl_version *version)
{
	return codectl(CODECTL_VERSION, version, CODECTL_VERSION_SIZE_VER0, 0);
}

CODECTL_EXPORT int codectl_check_sframe(struct codectl_sframe_check *check)
{
	return codectl(CODECTL_CHECK_SFRAME, check, sizeof(*check), 0);
}

/*
 * The unwinding ioctls, issued with the syscall instruction inside
 * libcodectl (built with SFrame) rather than through the C library's
 * ioctl(): the kernel unwinds from the pc of that instruction, and a C
 * library without SFrame or frame pointers (Debian's, for one) would hide
 * every caller behind its ioctl() frame.
 */
static long codectl_raw_ioctl(int fd, unsigned long cmd, void *arg)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile ("syscall"
			  : "=a" (ret)
			  : "0" ((long)SYS_ioctl), "D" ((long)fd), "S" (cmd),
			    "d" (arg)
			  : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = -ret;
		return -1;
	}
	return ret;
#else
	return ioctl(fd, cmd, arg);
#endif
}

CODECTL_EXPORT int codectl_unwind_self(struct codectl_unwind_args *args)
{
	int fd = codectl_get_fd();

	if (fd < 0)
		return -1;
	return codectl_raw_ioctl(fd, CODECTL_IOC_UNWIND, args);
}

/*
 * Deferred trace requests were a test facility of the module's ABI 1 and
 * 2; since ABI 3 they are the test module's (tests/vm/testmod), never
 * installed.  Kept for the library's ABI: fails with ENOTTY, as the
 * module's ioctl would.
 */
CODECTL_EXPORT int codectl_unwind_request(uint64_t *cookie)
{
	(void)cookie;
	errno = ENOTTY;
	return -1;
}

CODECTL_EXPORT int codectl_unwind_stats(struct codectl_unwind_stats *stats)
{
	int fd = codectl_get_fd();

	if (fd < 0)
		return -1;
	return ioctl(fd, CODECTL_IOC_UNWIND_STATS, stats);
}

CODECTL_EXPORT int codectl_hook_stats(unsigned int index,
				      struct codectl_hook_stats *stats)
{
	int fd = codectl_get_fd();

	if (fd < 0)
		return -1;
	memset(stats, 0, sizeof(*stats));
	stats->index = index;
	return ioctl(fd, CODECTL_IOC_HOOK_STATS, stats);
}

CODECTL_EXPORT const char *codectl_frame_name(unsigned int method)
{
	static const char *const names[] = CODECTL_FRAME_NAMES;

	if (method < sizeof(names) / sizeof(names[0]) && names[method])
		return names[method];
	return "unknown";
}

CODECTL_EXPORT const char *codectl_stop_name(unsigned int stop)
{
	static const char *const names[] = CODECTL_STOP_NAMES;

	if (stop < sizeof(names) / sizeof(names[0]) && names[stop])
		return names[stop];
	return "unknown";
}
