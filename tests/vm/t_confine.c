// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks stay killable in the module's task_works (issue 23, finding 5):
 * a discovery that waits for a page of an object (here: a page that a
 * userfaultfd never serves) is ended by kill -9, and SIGKILL and SIGSTOP
 * are never in the task's blocked mask meanwhile.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif

static int stall_err(const char *what)
{
	printf("# stall object: %s: %m\n", what);
	fflush(stdout);
	return -1;
}

/*
 * A two-page ELF object in a memfd: page 0 the executable PT_LOAD (the
 * headers and an ioctl() function), page 1 a read-only PT_LOAD holding
 * PT_GNU_SFRAME, never written (a hole).  Mapped as a loader would, page
 * 1 behind a userfaultfd that reports its first touch and never serves
 * it.
 * Returns the uffd, or -1; *@sframe gets the SFrame page's address.
 */
static int stall_object(uint64_t *sframe)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_api api = { .api = UFFD_API };
	unsigned char page[4096] = { 0 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)page;
	Elf64_Phdr *ph = (Elf64_Phdr *)(page + sizeof(*eh));
	size_t pg = g_page;
	char path[64];
	int mfd, ro, uffd;
	char *base;

	if (pg != sizeof(page))
		return -1;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
#if defined(__aarch64__)
	eh->e_machine = EM_AARCH64;
#else
	eh->e_machine = EM_X86_64;
#endif
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 3;
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			      .p_offset = 0, .p_vaddr = 0, .p_filesz = pg,
			      .p_memsz = pg, .p_align = pg };
	ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R,
			      .p_offset = pg, .p_vaddr = pg, .p_filesz = pg,
			      .p_memsz = pg, .p_align = pg };
	ph[2] = (Elf64_Phdr){ .p_type = PT_GNU_SFRAME, .p_flags = PF_R,
			      .p_offset = pg, .p_vaddr = pg, .p_filesz = 64,
			      .p_memsz = 64, .p_align = 8 };
	/*
	 * long f(fd, cmd, arg): ioctl() made from the object's own text, so
	 * that the unwind it asks for starts at a pc of the object: mov
	 * $SYS_ioctl, %eax; syscall; ret (arm64: mov x8, #SYS_ioctl; svc #0;
	 * ret).
	 */
#if defined(__aarch64__)
	memcpy(page + pg - 16,
	       "\xa8\x03\x80\xd2\x01\x00\x00\xd4\xc0\x03\x5f\xd6", 12);
#else
	memcpy(page + pg - 16, "\xb8\x10\x00\x00\x00\x0f\x05\xc3", 8);
#endif

	mfd = memfd_create("codectl-stall", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, 2 * pg) ||
	    pwrite(mfd, page, pg, 0) != (ssize_t)pg)
		return stall_err("memfd");
	/* Discovery refuses files open for writing: map a read-only open. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	close(mfd);
	if (ro < 0)
		return stall_err("reopening the memfd read-only");
	base = mmap(NULL, 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (base == MAP_FAILED ||
	    mmap(base, pg, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, ro,
		 0) == MAP_FAILED ||
	    mmap(base + pg, pg, PROT_READ, MAP_PRIVATE | MAP_FIXED, ro,
		 pg) == MAP_FAILED)
		return stall_err("mmap");
	close(ro);
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return stall_err("userfaultfd");
	reg.range.start = (uintptr_t)base + pg;
	reg.range.len = pg;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return stall_err("UFFDIO_REGISTER");
	*sframe = (uintptr_t)base + pg;
	return uffd;
}

typedef long (*stall_ioctl_fn)(long fd, unsigned long cmd, void *arg);

struct stall_info {
	int uffd;
	uint64_t sframe;
};

/* The child: set the object up, report it, then unwind (discovery). */
static void stall_child(int wfd)
{
	struct codectl_unwind_args a;
	struct stall_info si;
	stall_ioctl_fn f;
	uint64_t ips[4];

	si.uffd = stall_object(&si.sframe);
	if (write(wfd, &si, sizeof(si)) != sizeof(si) || si.uffd < 0)
		_exit(2);
	/*
	 * An unwind from the object's text: its first pc is one no
	 * registration covers, so the object is examined on the way back,
	 * whatever this process's other objects have (a sweep of every
	 * object would reach it too, but only when some pc asks for one).
	 */
	f = (stall_ioctl_fn)(uintptr_t)(si.sframe - 16);
	memset(&a, 0, sizeof(a));
	a.ips = (uintptr_t)ips;
	a.max_frames = 4;
	f(g_fd, CODECTL_IOC_UNWIND, &a);
	discovery_settle(g_fd);
	_exit(0);
}

/* SigBlk of @pid, or ~0 when it cannot be read. */
static unsigned long long sigblk(pid_t pid)
{
	unsigned long long v = ~0ULL;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Wait up to @ms for @pid to end; its status, or -1. */
static int wait_ms(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		sleep_ms(10);
	}
	return -1;
}

TEST(discovery_sigkill)
{
	unsigned long long blk = 0;
	struct uffd_msg msg;
	struct stall_info si = { .uffd = -1 };
	char flat[64] = "";
	struct pollfd pfd;
	int p[2], pidfd = -1, uffd = -1, status = -1;
	pid_t pid = -1;

	if (geteuid())
		SKIP("needs root (userfaultfd of kernel accesses, parameters)");
	REQUIRE(!param_read_str("sframe_flat_max", flat, sizeof(flat)),
		"reading sframe_flat_max");
	/* No flat table: the section is read from the task's memory. */
	REQUIRE(!param_write("sframe_flat_max", 0), "sframe_flat_max=0");
	REQUIRE(!pipe2(p, O_CLOEXEC), "pipe: %m");
	pid = fork();
	REQUIRE(pid >= 0, "fork: %m");
	if (!pid) {
		close(p[0]);
		stall_child(p[1]);
	}
	close(p[1]);
	REQUIRE(read(p[0], &si, sizeof(si)) == sizeof(si) && si.uffd >= 0,
		"the child could not set up its object");
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	uffd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, si.uffd, 0);
	REQUIRE(uffd >= 0, "the child's userfaultfd: %m");
	/* Discovery touches the SFrame page: the child waits there. */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	REQUIRE(poll(&pfd, 1, 120000) == 1 &&
		read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		msg.event == UFFD_EVENT_PAGEFAULT &&
		msg.arg.pagefault.address >= si.sframe &&
		msg.arg.pagefault.address < si.sframe + g_page,
		"discovery never read the object's SFrame page");
	blk = sigblk(pid);
	printf("# SigBlk of the task in discovery: %016llx\n", blk);
	EXPECT(!(blk & (1ULL << (SIGKILL - 1))) &&
	       !(blk & (1ULL << (SIGSTOP - 1))),
	       "SIGKILL or SIGSTOP blocked during discovery (SigBlk %016llx)",
	       blk);
	kill(pid, SIGKILL);
	/* Generous for TCG: a woken task dies in microseconds. */
	status = wait_ms(pid, 10000);
	EXPECT(status != -1 && WIFSIGNALED(status) &&
	       WTERMSIG(status) == SIGKILL,
	       "kill -9 of a task waiting in discovery: not dead after 10 s");
out:
	if (pid > 0 && status == -1) {
		/* Serve the page, so that the child can die. */
		static char zero[4096];
		struct uffdio_copy c = {
			.dst = si.sframe, .src = (uintptr_t)zero,
			.len = g_page,
		};

		if (uffd >= 0)
			ioctl(uffd, UFFDIO_COPY, &c);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (uffd >= 0)
		close(uffd);
	if (pidfd >= 0)
		close(pidfd);
	if (flat[0])
		param_write_str("sframe_flat_max", flat);
	return T_PASS;
}

/*
 * codectl-abi-test --sched-sample MS: what `perf record -e
 * sched:sched_switch -a -g` does to the module, for MS milliseconds: a
 * sched_switch sample with a user call chain on every CPU at every
 * switch, so that tasks going to sleep are unwound (by the module's perf
 * hook, which queues a discovery on each: guest-suite.sh's rmmod test).
 * Prints "# sampling" once the events are enabled, then "sampled N" (N:
 * samples written); exit status 1 on errors.
 */
int sched_sample_main(int ms)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/sched/sched_switch/id",
		"/sys/kernel/debug/tracing/events/sched/sched_switch/id",
	};
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), n = 0;
	size_t len = 9 * (size_t)sysconf(_SC_PAGESIZE);
	unsigned long long id = 0;
	struct perf_event_mmap_page *pgs[64];
	int fds[64], i, cpus = 0;
	FILE *f = NULL;

	for (i = 0; i < 2 && !f; i++)
		f = fopen(ids[i], "re");
	if (!f || fscanf(f, "%llu", &id) != 1) {
		printf("sched_switch tracepoint id: %m\n");
		return 1;
	}
	fclose(f);
	attr.config = id;
	for (i = 0; i < ncpu && i < 64; i++) {
		fds[i] = syscall(SYS_perf_event_open, &attr, -1, i, -1,
				 PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			printf("perf_event_open cpu %d: %m\n", i);
			return 1;
		}
		pgs[i] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			      fds[i], 0);
		if (pgs[i] == MAP_FAILED) {
			printf("mmap of the ring: %m\n");
			return 1;
		}
		cpus++;
	}
	for (i = 0; i < cpus; i++)
		ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0);
	/* Tasks that go to sleep from now on are sampled. */
	printf("# sampling\n");
	fflush(stdout);
	sleep_ms(ms);
	for (i = 0; i < cpus; i++) {
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		n += __atomic_load_n(&pgs[i]->data_head, __ATOMIC_ACQUIRE) ?
		     1 : 0;
		munmap(pgs[i], len);
		close(fds[i]);
	}
	printf("sampled on %ld of %d CPUs\n", n, cpus);
	return n ? 0 : 1;
}
