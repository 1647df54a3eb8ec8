// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: deferred unwinding as a program sees it.
 *
 *   CODECTL_TEST_IOC_UNWIND_REQUEST	cookie never 0, a new one per kernel entry;
 *		the record (read() on the same file) carries it, the tid,
 *		and the stack as the ioctl returns: frame 0 the pc after the
 *		syscall instruction, frame 1 the caller's return address
 *   read/poll	EAGAIN, POLLIN, EINVAL for a short buffer (nothing
 *		consumed), 64 records at most and `lost` for the others
 *   threads	16 threads x 1000 requests, each gets its own records
 *   close	a file closed with records queued, or while other threads
 *		request on it, leaves no record, slot or task_work behind
 *   selftest	CODECTL_TEST_IOC_SELFTEST_START/STOP: hrtimer and self-NMI
 *		consumers agree on cookies and traces; a target thread that
 *		exits or is killed with requests pending still gets its
 *		callbacks
 *
 * The frame-by-frame checks of the unwinder itself are in tests/vm/unwind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codectl-test.h"
#include "consumer/consumer.h"

#define ULL(x) ((unsigned long long)(x))
#define REC_HDR		sizeof(struct codectl_trace_record)
#define REC_MAX		(REC_HDR + CODECTL_UNWIND_MAX_FRAMES * 9 + 8)

struct rec {
	struct codectl_trace_record h;
	uint64_t ips[CODECTL_UNWIND_MAX_FRAMES];
	uint8_t methods[CODECTL_UNWIND_MAX_FRAMES + 8];
};

static const uint8_t *rec_methods(const struct rec *r)
{
	return (const uint8_t *)r->ips + r->h.nr * 8;
}

static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

/*
 * An ioctl with the syscall instruction in this very function: a deferred
 * trace requested by it has frame 0 *@pc (the instruction after the
 * syscall) and frame 1 *@ra (our return address in the caller).
 * Return: 0 or -errno.
 */
static __attribute__((noinline)) int raw_ioctl_at(int fd, unsigned long cmd,
						  void *arg, uint64_t *pc,
						  uint64_t *ra)
{
#if defined(__x86_64__)
	uint64_t at;
	long ret;

	asm volatile("lea 1f(%%rip), %1\n\t"
		     "syscall\n"
		     "1:"
		     : "=a"(ret), "=&r"(at)
		     : "0"((long)SYS_ioctl), "D"((long)fd), "S"(cmd), "d"(arg)
		     : "rcx", "r11", "memory");
	*pc = at;
	*ra = (uintptr_t)__builtin_return_address(0);
	return ret;
#elif defined(__aarch64__)
	register long x0 asm("x0") = fd;
	register unsigned long x1 asm("x1") = cmd;
	register void *x2 asm("x2") = arg;
	register long x8 asm("x8") = SYS_ioctl;
	uint64_t at;

	asm volatile("adr %1, 1f\n\t"
		     "svc #0\n"
		     "1:"
		     : "+r"(x0), "=&r"(at)
		     : "r"(x1), "r"(x2), "r"(x8)
		     : "memory");
	*pc = at;
	*ra = (uintptr_t)__builtin_return_address(0);
	return x0;
#else
	*pc = *ra = 0;
	return ioctl(fd, cmd, arg) ? -errno : 0;
#endif
}

#if defined(__aarch64__)
/*
 * arm64: leaf_caller(a0, a1, a2, nr, &ra) stores the address its call of
 * leaf_ioctl() returns to and calls it; leaf_ioctl(a0, a1, a2, nr) makes
 * system call nr with its return address in x30 throughout (no frame:
 * SFrame says the RA is not saved), the pc after its svc at
 * leaf_ioctl_pc.
 */
long leaf_caller(long a0, unsigned long a1, void *a2, long nr, uint64_t *ra);
extern const char leaf_ioctl_pc[];
asm(".text\n"
    ".p2align 2\n"
    ".type leaf_ioctl, %function\n"
    "leaf_ioctl:\n"
    ".cfi_startproc\n"
    "	mov x8, x3\n"
    "	svc #0\n"
    ".globl leaf_ioctl_pc\n"
    ".hidden leaf_ioctl_pc\n"
    "leaf_ioctl_pc:\n"
    "	ret\n"
    ".cfi_endproc\n"
    ".size leaf_ioctl, .-leaf_ioctl\n"
    ".p2align 2\n"
    ".globl leaf_caller\n"
    ".hidden leaf_caller\n"
    ".type leaf_caller, %function\n"
    "leaf_caller:\n"
    ".cfi_startproc\n"
    "	stp x29, x30, [sp, #-16]!\n"
    ".cfi_def_cfa_offset 16\n"
    ".cfi_offset 29, -16\n"
    ".cfi_offset 30, -8\n"
    "	mov x29, sp\n"
    "	adr x9, 1f\n"
    "	str x9, [x4]\n"
    "	bl leaf_ioctl\n"
    "1:	ldp x29, x30, [sp], #16\n"
    ".cfi_restore 29\n"
    ".cfi_restore 30\n"
    ".cfi_def_cfa_offset 0\n"
    "	ret\n"
    ".cfi_endproc\n"
    ".size leaf_caller, .-leaf_caller\n");
#endif

#if defined(__aarch64__)
/*
 * arm64: functions without rules (no CFI, so no SFrame FDE either: as an
 * object without SFrame, Debian's libc), called from one with them.
 * norules_caller(a0, a1, a2, nr, out, framed) calls norules_leaf(a0, a1,
 * a2, nr), which makes system call nr with its return address in x30 and
 * sp its caller's (a leaf, as libc's memcpy), or with framed
 * norules_framed(), which has pushed a frame record first (x30 saved,
 * sp moved).  out[0]: where that call returns; out[1]: norules_caller's
 * own return address.  x29 is left as the C caller had it (a frame
 * record of its own, not norules_caller's, which keeps none).
 */
long norules_caller(long a0, unsigned long a1, void *a2, long nr,
		    uint64_t *out, long framed);
extern const char norules_leaf_pc[], norules_framed_pc[];
asm(".text\n"
    ".p2align 6\n"
    ".type norules_leaf, %function\n"
    "norules_leaf:\n"
    "	nop\n"
    "	mov x8, x3\n"
    "	svc #0\n"
    ".globl norules_leaf_pc\n"
    ".hidden norules_leaf_pc\n"
    "norules_leaf_pc:\n"
    "	ret\n"
    ".size norules_leaf, .-norules_leaf\n"
    ".p2align 2\n"
    ".type norules_framed, %function\n"
    "norules_framed:\n"
    "	stp x29, x30, [sp, #-16]!\n"
    "	mov x29, sp\n"
    "	mov x8, x3\n"
    "	svc #0\n"
    ".globl norules_framed_pc\n"
    ".hidden norules_framed_pc\n"
    "norules_framed_pc:\n"
    "	ldp x29, x30, [sp], #16\n"
    "	ret\n"
    ".size norules_framed, .-norules_framed\n"
    ".p2align 2\n"
    ".globl norules_caller\n"
    ".hidden norules_caller\n"
    ".type norules_caller, %function\n"
    "norules_caller:\n"
    ".cfi_startproc\n"
    "	sub sp, sp, #16\n"
    ".cfi_def_cfa_offset 16\n"
    "	str x30, [sp, #8]\n"
    ".cfi_offset 30, -8\n"
    "	str x30, [x4, #8]\n"
    "	adr x9, norules_leaf\n"
    "	adr x10, norules_framed\n"
    "	cmp x5, #0\n"
    "	csel x9, x9, x10, eq\n"
    "	adr x10, 1f\n"
    "	str x10, [x4]\n"
    "	blr x9\n"
    "1:	ldr x30, [sp, #8]\n"
    ".cfi_restore 30\n"
    "	add sp, sp, #16\n"
    ".cfi_def_cfa_offset 0\n"
    "	ret\n"
    ".cfi_endproc\n"
    ".size norules_caller, .-norules_caller\n");
#endif

/* CODECTL_TEST_IOC_UNWIND_REQUEST through raw_ioctl_at(). */
static __attribute__((noinline)) int raw_request(int fd, uint64_t *cookie,
						 uint64_t *pc, uint64_t *ra)
{
	return raw_ioctl_at(fd, CODECTL_TEST_IOC_UNWIND_REQUEST, cookie, pc, ra);
}

static int request(int fd, uint64_t *cookie)
{
	return ioctl(fd, CODECTL_TEST_IOC_UNWIND_REQUEST, cookie) ? -errno : 0;
}

/* One record: its size, or -errno. */
static long read_rec(int fd, struct rec *r, size_t len)
{
	ssize_t n = read(fd, r, len);

	return n < 0 ? -errno : n;
}

/*
 * The record is well formed: size, padding, counts; flags 0, since a
 * request from the thread's own ioctl is served at that ioctl's return,
 * with the very registers of the request (never CODECTL_TRACE_MOVED).
 */
static bool rec_valid(const struct rec *r, long n)
{
	size_t want = (REC_HDR + r->h.nr * 9 + 7) & ~(size_t)7;

	return EXPECT(n == (long)r->h.size && r->h.size == want &&
		      r->h.nr <= CODECTL_UNWIND_MAX_FRAMES &&
		      r->h.stop && r->h.stop < CODECTL_STOP_NR &&
		      !r->h.flags,
		      "record: read %ld, size %u (want %zu), nr %u, stop %u, flags %u",
		      n, r->h.size, want, r->h.nr, r->h.stop, r->h.flags);
}

/* Does the module have a real unwinder (not the stub)? */
static bool unwinder_real(void)
{
	struct codectl_unwind_args a = { 0 };
	uint64_t ips[4];

	a.ips = (uintptr_t)ips;
	a.max_frames = 4;
	return !cc_ioctl(g_fd, CODECTL_IOC_UNWIND, &a) && a.nr > 0;
}

/* Register this executable (its SFrame section) for exact frames. */
static bool register_self(struct self_image *si)
{
	struct codectl_elf_info ei;

	if (self_image_get(si))
		return false;
	ei = (struct codectl_elf_info){
		.elf_start = si->elf_start, .elf_end = si->elf_end,
		.text_start = si->text_start, .text_end = si->text_end,
		.sframe_start = si->sframe_start, .sframe_end = si->sframe_end,
	};
	return EXPECT_RC(cc_register_elf(g_fd, &ei), 0, "REGISTER_ELF self");
}

static void unregister_self(const struct self_image *si)
{
	EXPECT_RC(cc_unregister(g_fd, si->text_start, si->text_end), 0,
		  "UNREGISTER self");
}

static const char *const stats_ignore[] = STATS_EVENTS;
static const char *const *ignore_list(void)
{
	static const char *list[8];
	size_t i;

	for (i = 0; i < sizeof(stats_ignore) / sizeof(stats_ignore[0]); i++)
		list[i] = stats_ignore[i];
	list[i] = NULL;
	return list;
}

/* ---- requests and records --------------------------------------------- */

TEST(deferred_request)
{
	struct self_image si;
	uint64_t cookie = 0, pc, ra;
	bool reg = false, real;
	struct rec *r;
	long n;
	int rc;

	r = calloc(1, sizeof(*r));
	REQUIRE(r, "calloc");
	reg = register_self(&si);
	REQUIRE(reg, "registering this executable");
	real = unwinder_real();
	rc = raw_request(g_tfd, &cookie, &pc, &ra);
	REQUIRE_RC(rc, 0, "UNWIND_REQUEST");
	EXPECT(cookie != 0, "cookie is 0");
	/* Delivered on the way out of the ioctl: there at once. */
	n = read_rec(g_tfd, r, sizeof(*r));
	REQUIRE(n > 0, "read after the request: %s", ename(n));
	rec_valid(r, n);
	EXPECT(r->h.cookie == cookie, "record cookie %#llx, request's %#llx",
	       ULL(r->h.cookie), ULL(cookie));
	EXPECT(r->h.tid == (uint32_t)gettid_(), "tid %u, mine %d", r->h.tid,
	       gettid_());
	EXPECT(!r->h.lost, "lost %u", r->h.lost);
	printf("# cookie %#llx nr %u stop %u frame0 %#llx (want %#llx) frame1 %#llx (want %#llx)\n",
	       ULL(cookie), r->h.nr, r->h.stop, ULL(r->h.nr ? r->ips[0] : 0),
	       ULL(pc), ULL(r->h.nr > 1 ? r->ips[1] : 0), ULL(ra));
	if (!real) {
		printf("# the module's unwinder is a stub: no frame checks\n");
		goto out;
	}
	EXPECT(r->h.nr >= 2, "nr %u < 2 (stop %u)", r->h.nr, r->h.stop);
#if defined(__x86_64__) || defined(__aarch64__)
	if (r->h.nr >= 2) {
		EXPECT(r->ips[0] == pc, "frame 0 %#llx, the syscall returns to %#llx",
		       ULL(r->ips[0]), ULL(pc));
		EXPECT(rec_methods(r)[0] == CODECTL_FRAME_REGS,
		       "frame 0 method %u", rec_methods(r)[0]);
		EXPECT(r->ips[1] == ra, "frame 1 %#llx, raw_request returns to %#llx",
		       ULL(r->ips[1]), ULL(ra));
	}
#endif
#if defined(__aarch64__)
	/* From a leaf: frame 1 is the return address in x30. */
	rc = leaf_caller(g_tfd, CODECTL_TEST_IOC_UNWIND_REQUEST, &cookie,
			 SYS_ioctl, &ra);
	REQUIRE_RC(rc, 0, "UNWIND_REQUEST from a leaf");
	n = read_rec(g_tfd, r, sizeof(*r));
	REQUIRE(n > 0, "read after the leaf's request: %s", ename(n));
	rec_valid(r, n);
	printf("# leaf: nr %u stop %u frame0 %#llx (want %#llx) frame1 %#llx (want %#llx)\n",
	       r->h.nr, r->h.stop, ULL(r->h.nr ? r->ips[0] : 0),
	       ULL((uintptr_t)leaf_ioctl_pc), ULL(r->h.nr > 1 ? r->ips[1] : 0),
	       ULL(ra));
	EXPECT(r->h.nr >= 3, "leaf: nr %u < 3 (stop %u)", r->h.nr, r->h.stop);
	if (r->h.nr >= 2) {
		EXPECT(r->ips[0] == (uintptr_t)leaf_ioctl_pc,
		       "leaf: frame 0 %#llx, the svc returns to %#llx",
		       ULL(r->ips[0]), ULL((uintptr_t)leaf_ioctl_pc));
		EXPECT(r->ips[1] == ra && rec_methods(r)[1] == CODECTL_FRAME_SFRAME,
		       "leaf: frame 1 %#llx method %u, leaf_ioctl returns to %#llx (SFrame)",
		       ULL(r->ips[1]), rec_methods(r)[1], ULL(ra));
	}
#endif
out:
	if (reg)
		unregister_self(&si);
	free(r);
	return T_PASS;
}

#if defined(__aarch64__)
/* What unwind_signal_leaf's handler saw. */
static uint64_t sig_ips[32];
static uint8_t sig_methods[32];
static volatile int sig_rc, sig_nr;

static void on_usr2(int sig)
{
	struct codectl_unwind_args a = {
		.ips = (uintptr_t)sig_ips, .methods = (uintptr_t)sig_methods,
		.max_frames = 32,
	};

	register long x0 asm("x0") = g_fd;
	register unsigned long x1 asm("x1") = CODECTL_IOC_UNWIND;
	register void *x2 asm("x2") = &a;
	register long x8 asm("x8") = SYS_ioctl;

	(void)sig;
	/* From this function (SFrame), not glibc's ioctl() (none). */
	asm volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x8) : "memory");
	sig_rc = x0;
	sig_nr = a.nr;
}

/*
 * arm64: an unwind in a signal handler goes through the trampoline the
 * handler returns to (the vDSO's, unless SA_RESTORER) to the interrupted
 * leaf, the pc after its svc, and from it to the return address that was
 * in x30 when the signal came (the signal frame's).  x86-64 has its
 * signal tests in tests/vm/unwind.
 */
TEST(unwind_signal_leaf)
{
	struct sigaction sa = { .sa_handler = on_usr2 }, old, cur;
	struct self_image si;
	bool reg = false;
	uint64_t ra = 0;
	int i, sig = -1;
	long rc;

	reg = register_self(&si);
	REQUIRE(reg, "registering this executable");
	REQUIRE(!sigaction(SIGUSR2, &sa, &old), "sigaction: %m");
	if (!sigaction(SIGUSR2, NULL, &cur))
		printf("# the handler returns to %s\n",
		       cur.sa_flags & 0x04000000 /* SA_RESTORER */ ?
		       "its sa_restorer" : "the vDSO's trampoline");
	rc = leaf_caller(getpid(), SIGUSR2, NULL, SYS_kill, &ra);
	sigaction(SIGUSR2, &old, NULL);
	REQUIRE_RC(rc, 0, "kill from the leaf");
	REQUIRE_RC(sig_rc, 0, "UNWIND in the handler");
	for (i = 0; i < sig_nr; i++) {
		printf("# frame %d %#llx method %u\n", i, ULL(sig_ips[i]),
		       sig_methods[i]);
		if (sig < 0 && sig_methods[i] == CODECTL_FRAME_SIGNAL)
			sig = i;
	}
	REQUIRE(sig > 0, "no signal frame in %d frames", sig_nr);
	EXPECT(sig_ips[sig] == (uintptr_t)leaf_ioctl_pc,
	       "the interrupted frame %#llx, the svc returns to %#llx",
	       ULL(sig_ips[sig]), ULL((uintptr_t)leaf_ioctl_pc));
	EXPECT(sig + 1 < sig_nr && sig_ips[sig + 1] == ra &&
	       sig_methods[sig + 1] == CODECTL_FRAME_SFRAME,
	       "after the signal frame %#llx method %u, want %#llx (x30, SFrame)",
	       ULL(sig + 1 < sig_nr ? sig_ips[sig + 1] : 0),
	       sig + 1 < sig_nr ? sig_methods[sig + 1] : 0, ULL(ra));
out:
	if (reg)
		unregister_self(&si);
	return T_PASS;
}
#endif

#if defined(__aarch64__)
/*
 * arm64: an UNWIND from a leaf without rules, called from code with them
 * (the walk's leaf rule: Debian's libc's memcpy under sqlite3, issue 42).
 * Frame 1 is the return address in x30 (FP_ENTRY), frame 2 the caller's
 * own, by its SFrame rule from sp.  The frame-record walk would go by
 * x29, the C caller's record, and skip norules_caller.  Then from a
 * function without rules that has pushed a frame record (x30 saved, sp
 * moved): the link register is not taken for a leaf's, frame 1 comes
 * from the record (FP).
 */
TEST(unwind_leaf_norules)
{
	uint64_t ips[16], out[2] = { 0 };
	uint8_t methods[16];
	struct codectl_unwind_args a = {
		.ips = (uintptr_t)ips, .methods = (uintptr_t)methods,
		.max_frames = 16,
	};
	struct self_image si;
	bool reg = false;
	long rc;
	int i;

	reg = register_self(&si);
	REQUIRE(reg, "registering this executable");
	rc = norules_caller(g_fd, CODECTL_IOC_UNWIND, &a, SYS_ioctl, out, 0);
	REQUIRE_RC(rc, 0, "UNWIND from the leaf");
	for (i = 0; i < (int)a.nr && i < 4; i++)
		printf("# leaf: frame %d %#llx method %u\n", i, ULL(ips[i]),
		       methods[i]);
	printf("# leaf: want %#llx, %#llx (FP_ENTRY), %#llx (SFRAME); nr %u stop %u\n",
	       ULL((uintptr_t)norules_leaf_pc), ULL(out[0]), ULL(out[1]),
	       a.nr, a.stop);
	REQUIRE(a.nr >= 3, "leaf: nr %u < 3 (stop %u)", a.nr, a.stop);
	EXPECT(ips[0] == (uintptr_t)norules_leaf_pc,
	       "leaf: frame 0 %#llx, the svc returns to %#llx",
	       ULL(ips[0]), ULL((uintptr_t)norules_leaf_pc));
	EXPECT(ips[1] == out[0] && methods[1] == CODECTL_FRAME_FP_ENTRY,
	       "leaf: frame 1 %#llx method %u, want %#llx from x30 (FP_ENTRY)",
	       ULL(ips[1]), methods[1], ULL(out[0]));
	EXPECT(ips[2] == out[1] && methods[2] == CODECTL_FRAME_SFRAME,
	       "leaf: frame 2 %#llx method %u, want %#llx (SFrame)",
	       ULL(ips[2]), methods[2], ULL(out[1]));

	memset(&a, 0, sizeof(a));
	a.ips = (uintptr_t)ips;
	a.methods = (uintptr_t)methods;
	a.max_frames = 16;
	rc = norules_caller(g_fd, CODECTL_IOC_UNWIND, &a, SYS_ioctl, out, 1);
	REQUIRE_RC(rc, 0, "UNWIND from the framed function");
	for (i = 0; i < (int)a.nr && i < 4; i++)
		printf("# framed: frame %d %#llx method %u\n", i, ULL(ips[i]),
		       methods[i]);
	REQUIRE(a.nr >= 2, "framed: nr %u < 2 (stop %u)", a.nr, a.stop);
	EXPECT(ips[0] == (uintptr_t)norules_framed_pc,
	       "framed: frame 0 %#llx, the svc returns to %#llx",
	       ULL(ips[0]), ULL((uintptr_t)norules_framed_pc));
	EXPECT(ips[1] == out[0] && methods[1] == CODECTL_FRAME_FP,
	       "framed: frame 1 %#llx method %u, want %#llx from the record (FP)",
	       ULL(ips[1]), methods[1], ULL(out[0]));
out:
	if (reg)
		unregister_self(&si);
	return T_PASS;
}
#endif

TEST(deferred_cookies)
{
	uint64_t c[8];
	struct rec *r;
	long n;
	int i, j;

	r = calloc(1, sizeof(*r));
	REQUIRE(r, "calloc");
	for (i = 0; i < 8; i++)
		REQUIRE_RC(request(g_tfd, &c[i]), 0, "request %d", i);
	for (i = 0; i < 8; i++) {
		EXPECT(c[i], "cookie %d is 0", i);
		for (j = 0; j < i; j++)
			EXPECT(c[i] != c[j], "requests %d and %d (two ioctls) share cookie %#llx",
			       j, i, ULL(c[i]));
	}
	/* Records come in request order, one per request. */
	for (i = 0; i < 8; i++) {
		n = read_rec(g_tfd, r, sizeof(*r));
		REQUIRE(n > 0, "read %d: %s", i, ename(n));
		rec_valid(r, n);
		EXPECT(r->h.cookie == c[i], "record %d: cookie %#llx, want %#llx",
		       i, ULL(r->h.cookie), ULL(c[i]));
	}
	fcntl(g_tfd, F_SETFL, O_NONBLOCK);
	n = read_rec(g_tfd, r, sizeof(*r));
	EXPECT(n == -EAGAIN, "a 9th record: %s", ename(n));
out:
	free(r);
	return T_PASS;
}

TEST(deferred_read)
{
	struct pollfd pfd = { .events = POLLIN };
	struct rec *r;
	uint64_t c;
	long n, size;
	int fd = -1;

	r = calloc(1, sizeof(*r));
	REQUIRE(r, "calloc");
	fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	REQUIRE(fd >= 0, "open: %m");
	pfd.fd = fd;
	n = read_rec(fd, r, sizeof(*r));
	EXPECT(n == -EAGAIN, "read of an empty queue, O_NONBLOCK: %s", ename(n));
	EXPECT(poll(&pfd, 1, 0) == 0, "poll on an empty queue: revents %#x",
	       pfd.revents);
	REQUIRE_RC(request(fd, &c), 0, "request");
	EXPECT(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN),
	       "poll after a request: revents %#x", pfd.revents);

	/* Too small for the record: EINVAL, nothing consumed. */
	n = read_rec(fd, r, REC_HDR - 1);
	EXPECT(n == -EINVAL, "read of %zu bytes: %s", REC_HDR - 1, ename(n));
	n = read_rec(fd, r, 0);
	EXPECT(n == -EINVAL, "read of 0 bytes: %s", ename(n));
	n = read_rec(fd, r, sizeof(*r));
	REQUIRE(n > 0, "read after the EINVALs: %s", ename(n));
	rec_valid(r, n);
	EXPECT(r->h.cookie == c, "the EINVALs consumed the record");
	size = n;

	/* Exactly the record's size is enough; one byte less is not. */
	REQUIRE_RC(request(fd, &c), 0, "request");
	n = read_rec(fd, r, size - 1);
	if (n > 0) {
		/* Another unwind may be shorter: only check what we can. */
		EXPECT(n <= size - 1, "read %ld into %ld bytes", n, size - 1);
	} else {
		EXPECT(n == -EINVAL, "read of size - 1: %s", ename(n));
		n = read_rec(fd, r, r->h.size ? r->h.size : size);
		n = n == -EINVAL ? read_rec(fd, r, sizeof(*r)) : n;
		EXPECT(n > 0, "read: %s", ename(n));
	}
	EXPECT(poll(&pfd, 1, 0) == 0, "poll after reading all: revents %#x",
	       pfd.revents);

	/* A blocking read on another fd does not see this fd's records. */
	REQUIRE_RC(request(g_tfd, &c), 0, "request on g_tfd");
	n = read_rec(fd, r, sizeof(*r));
	EXPECT(n == -EAGAIN, "the other fd's record showed up here: %s", ename(n));
	n = read_rec(g_tfd, r, sizeof(*r));	/* blocking, but queued */
	EXPECT(n > 0 && r->h.cookie == c, "blocking read: %s", ename(n));
out:
	if (fd >= 0)
		close(fd);
	free(r);
	return T_PASS;
}

struct blocker {
	int fd;
	long n;
	uint64_t cookie;
};

static void *blocking_reader(void *arg)
{
	struct blocker *b = arg;
	struct rec *r = calloc(1, sizeof(*r));

	b->n = r ? read_rec(b->fd, r, sizeof(*r)) : -ENOMEM;
	if (r && b->n > 0)
		b->cookie = r->h.cookie;
	free(r);
	return NULL;
}

TEST(deferred_blocking_read)
{
	struct blocker b = { .fd = g_tfd };
	pthread_t t;
	uint64_t c;

	REQUIRE(!pthread_create(&t, NULL, blocking_reader, &b), "pthread_create");
	sleep_ms(200);		/* the reader is asleep in read() */
	REQUIRE_RC(request(g_tfd, &c), 0, "request");
	pthread_join(t, NULL);
	EXPECT(b.n > 0 && b.cookie == c,
	       "the sleeping reader got %s, cookie %#llx (want %#llx)",
	       ename(b.n), ULL(b.cookie), ULL(c));
out:
	return T_PASS;
}

TEST(deferred_overflow)
{
	uint64_t c[CODECTL_TRACE_QUEUE_MAX + 10];
	int i, nreq = CODECTL_TRACE_QUEUE_MAX + 10;
	struct rec *r;
	long n;

	r = calloc(1, sizeof(*r));
	REQUIRE(r, "calloc");
	fcntl(g_tfd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < nreq; i++)
		REQUIRE_RC(request(g_tfd, &c[i]), 0, "request %d", i);
	for (i = 0; i < CODECTL_TRACE_QUEUE_MAX; i++) {
		n = read_rec(g_tfd, r, sizeof(*r));
		REQUIRE(n > 0, "record %d of %d: %s", i, CODECTL_TRACE_QUEUE_MAX,
			ename(n));
		EXPECT(r->h.cookie == c[i], "record %d: cookie %#llx, want %#llx",
		       i, ULL(r->h.cookie), ULL(c[i]));
		/* Dropped since the previous read: all 10, told at once. */
		EXPECT(r->h.lost == (i ? 0u : 10u), "record %d: lost %u", i,
		       r->h.lost);
	}
	n = read_rec(g_tfd, r, sizeof(*r));
	EXPECT(n == -EAGAIN, "after %d records: %s", CODECTL_TRACE_QUEUE_MAX,
	       ename(n));
	/* The queue works again, and lost is back to 0. */
	REQUIRE_RC(request(g_tfd, &c[0]), 0, "request after draining");
	n = read_rec(g_tfd, r, sizeof(*r));
	EXPECT(n > 0 && r->h.cookie == c[0] && !r->h.lost,
	       "record after draining: %s, lost %u", ename(n), r->h.lost);
out:
	free(r);
	return T_PASS;
}

/* ---- threads ------------------------------------------------------------ */

#define NTHREADS	16
#define NREQ		1000

struct worker {
	pthread_t t;
	int fd;
	int iters;
	int errors;
	pid_t tid;
	uint64_t last_cookie;
};

static void *deferred_worker(void *arg)
{
	struct worker *w = arg;
	struct rec *r = malloc(sizeof(*r));
	uint64_t c, prev = 0;
	long n;
	int i, rc;

	w->tid = gettid_();
	if (!r) {
		FAIL("malloc");
		return NULL;
	}
	for (i = 0; i < w->iters; i++) {
		rc = request(w->fd, &c);
		if (rc) {
			FAIL("thread %d request %d: %s", w->tid, i, ename(rc));
			break;
		}
		/* Our own fd, O_NONBLOCK: the record must be there already. */
		n = read_rec(w->fd, r, sizeof(*r));
		if (n <= 0 || r->h.cookie != c || r->h.tid != (uint32_t)w->tid ||
		    r->h.lost || c == prev || !c) {
			if (!w->errors++)
				FAIL("thread %d request %d: read %s, cookie %#llx (want %#llx, previous %#llx), tid %u, lost %u",
				     w->tid, i, ename(n), ULL(n > 0 ? r->h.cookie : 0),
				     ULL(c), ULL(prev), n > 0 ? r->h.tid : 0,
				     n > 0 ? r->h.lost : 0);
		}
		prev = c;
	}
	n = read_rec(w->fd, r, sizeof(*r));
	if (n != -EAGAIN)
		FAIL("thread %d: extra record: %s", w->tid, ename(n));
	w->last_cookie = prev;
	free(r);
	return NULL;
}

TEST(deferred_threads)
{
	struct worker w[NTHREADS];
	struct timespec t0, t1;
	int i, n = 0, errors = 0;

	memset(w, 0, sizeof(w));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < NTHREADS; i++) {
		w[i].fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		REQUIRE(w[i].fd >= 0, "open: %m");
		w[i].iters = NREQ;
	}
	for (n = 0; n < NTHREADS; n++)
		REQUIRE(!pthread_create(&w[n].t, NULL, deferred_worker, &w[n]),
			"pthread_create");
out:
	for (i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		errors += w[i].errors;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < NTHREADS; i++)
		if (w[i].fd > 0)
			close(w[i].fd);
	printf("# %d threads x %d requests: %d bad records, %.2f s\n", n, NREQ,
	       errors, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return T_PASS;
}

/* ---- closing files with records and requests --------------------------- */

struct closer {
	pthread_t t;
	int fd;
	long reqs;
};

static void *close_requester(void *arg)
{
	struct closer *c = arg;
	uint64_t cookie;
	int rc;

	for (;;) {
		rc = request(c->fd, &cookie);
		if (rc == -EBADF)
			break;
		if (rc) {
			FAIL("request: %s", ename(rc));
			break;
		}
		c->reqs++;
	}
	return NULL;
}

/* The test module's queued records (debugfs codectl_test/stats), or -1. */
#define TEST_STATS_PATH	"/sys/kernel/debug/codectl_test/stats"
static long long test_trace_records(void)
{
	long long v = -1;
	FILE *f = fopen(TEST_STATS_PATH, "r");

	if (!f)
		return -1;
	if (fscanf(f, "trace_records %lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

TEST(deferred_close)
{
	struct cstats_all base, now;
	struct closer c[4];
	long long base_tr = -1;
	uint64_t cookie;
	int fd, i, n, round, rc;
	long reqs = 0;

	rc = stats_available();
	if (rc != T_PASS)
		return rc;
	discovery_settle(g_fd);
	REQUIRE(!stats_settle_all(&base), "reading %s", STATS_PATH);
	REQUIRE(stats_get(&base, "unwind_tasks") >= 0 &&
		stats_get(&base, "unwind_works") >= 0,
		"debugfs stats lack unwind_tasks, unwind_works");
	base_tr = test_trace_records();
	REQUIRE(base_tr >= 0, "cannot read " TEST_STATS_PATH);

	/* Records queued, nobody reads, the file is closed. */
	fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0, "open: %m");
	for (i = 0; i < 20; i++)
		EXPECT_RC(request(fd, &cookie), 0, "request %d", i);
	EXPECT(test_trace_records() >= base_tr + 20,
	       "trace_records %lld with 20 queued (baseline %lld)",
	       test_trace_records(), base_tr);
	close(fd);

	/* Threads request while the file is closed under them. */
	for (round = 0; round < 20; round++) {
		fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_CLOEXEC);
		REQUIRE(fd >= 0, "open: %m");
		for (n = 0; n < 4; n++) {
			c[n] = (struct closer){ .fd = fd };
			if (pthread_create(&c[n].t, NULL, close_requester, &c[n])) {
				FAIL("pthread_create");
				break;
			}
		}
		sleep_ms(5 + round);
		close(fd);
		for (i = 0; i < n; i++) {
			pthread_join(c[i].t, NULL);
			reqs += c[i].reqs;
		}
		if (t_nr_failed())
			break;
	}
	printf("# %ld requests on files closed under them\n", reqs);
out:
	if (!stats_wait_eq(&base, ignore_list(), 5000, &now))
		stats_report_diff("after closing files with records queued",
				  &base, &now, ignore_list());
	for (i = 0; i < 500 && test_trace_records() != base_tr; i++)
		sleep_ms(10);
	EXPECT(test_trace_records() == base_tr,
	       "trace_records %lld after closing, baseline %lld",
	       test_trace_records(), base_tr);
	return T_PASS;
}

/* ---- the self-test ----------------------------------------------------- */

/* A known call chain, each function in a section of its own. */
#define CHAIN(sec) __attribute__((noinline, used, section(sec)))
extern const char __start_dchain_leaf_text[], __stop_dchain_leaf_text[];
extern const char __start_dchain_mid_text[], __stop_dchain_mid_text[];
extern const char __start_dchain_top_text[], __stop_dchain_top_text[];
static volatile unsigned long chain_sink;

CHAIN("dchain_leaf_text") void dchain_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		chain_sink += i;
}

CHAIN("dchain_mid_text") void dchain_mid(unsigned long n)
{
	dchain_leaf(n);
	chain_sink++;
}

CHAIN("dchain_top_text") void dchain_top(unsigned long n)
{
	dchain_mid(n);
	chain_sink++;
}

static bool in_sec(uint64_t pc, const char *start, const char *stop)
{
	return pc >= (uintptr_t)start && pc < (uintptr_t)stop;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Pin the calling thread to the CPU it runs on. */
static bool pin_here(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	return EXPECT(!sched_setaffinity(0, sizeof(set), &set),
		      "sched_setaffinity: %m");
}

static int st_start_flags(int fd, unsigned int period_us, unsigned int flags)
{
	struct codectl_selftest_args a = { .period_us = period_us,
					   .flags = flags };

	return cc_ioctl(fd, CODECTL_TEST_IOC_SELFTEST_START, &a);
}

static int st_start(int fd, unsigned int period_us)
{
	return st_start_flags(fd, period_us, 0);
}

static int st_stop(int fd, struct codectl_selftest_args *a, uint64_t *ips,
		   unsigned int max)
{
	memset(a, 0, sizeof(*a));
	a->ips = (uintptr_t)ips;
	a->max_frames = max;
	return cc_ioctl(fd, CODECTL_TEST_IOC_SELFTEST_STOP, a);
}

static void st_print(const char *what, const struct codectl_selftest_args *a)
{
	printf("# %s: irq %llu/%llu nmi %llu/%llu (requests/callbacks) entries %llu cookie_mismatches %llu trace_mismatches %llu refused %llu nmi_user %llu moved %u last nr %u stop %u\n",
	       what, ULL(a->irq_requests), ULL(a->irq_callbacks),
	       ULL(a->nmi_requests), ULL(a->nmi_callbacks), ULL(a->entries),
	       ULL(a->cookie_mismatches), ULL(a->trace_mismatches),
	       ULL(a->refused), ULL(a->nmi_user), a->moved, a->nr, a->stop);
	if (a->nmi_walks)
		printf("# %s: the hooks' walk in %llu NMIs: %llu frames; compared with the task-context trace %llu, the same %llu\n",
		       what, ULL(a->nmi_walks), ULL(a->nmi_walk_frames),
		       ULL(a->nmi_walk_compared), ULL(a->nmi_walk_equal));
}

/* Every request called back, no mismatch. */
static void st_check(const char *what, const struct codectl_selftest_args *a)
{
	st_print(what, a);
	EXPECT(a->irq_callbacks == a->irq_requests,
	       "%s: hrtimer consumer: %llu requests, %llu callbacks", what,
	       ULL(a->irq_requests), ULL(a->irq_callbacks));
	EXPECT(a->nmi_callbacks == a->nmi_requests,
	       "%s: NMI consumer: %llu requests, %llu callbacks", what,
	       ULL(a->nmi_requests), ULL(a->nmi_callbacks));
	EXPECT(!a->cookie_mismatches, "%s: %llu cookie mismatches", what,
	       ULL(a->cookie_mismatches));
	EXPECT(!a->trace_mismatches, "%s: %llu trace mismatches", what,
	       ULL(a->trace_mismatches));
}

static int need_root(void)
{
	if (geteuid())
		SKIP("the self-test needs CAP_SYS_ADMIN");
	return T_PASS;
}

static uint64_t st_ips[CODECTL_UNWIND_MAX_FRAMES];

/*
 * The self-test over a known call chain: register this program, pin to
 * this CPU, START with @flags at 100 us, 1 s of dchain_top(), STOP into
 * *@a and st_ips.  Return: 0; START's -errno; 1 when the setup or STOP
 * failed (reported).
 */
static int st_run_chain(unsigned int flags, struct codectl_selftest_args *a)
{
	struct self_image si;
	double end;
	int rc;

	if (!EXPECT(register_self(&si), "registering this program"))
		return 1;
	rc = pin_here() ? st_start_flags(g_tfd, 100, flags) : 1;
	if (!rc) {
		end = now_s() + 1.0;
		while (now_s() < end)
			dchain_top(20000);
		rc = st_stop(g_tfd, a, st_ips, CODECTL_UNWIND_MAX_FRAMES);
		if (!EXPECT_RC(rc, 0, "SELFTEST_STOP"))
			rc = 1;
	}
	unregister_self(&si);
	return rc;
}

/* The last trace, if it was taken in the leaf, goes on to mid and top. */
static void st_last_trace(const char *what,
			  const struct codectl_selftest_args *a)
{
	const uint64_t *ips = st_ips;

	if (a->nr >= 1 && in_sec(ips[0], __start_dchain_leaf_text, __stop_dchain_leaf_text)) {
		printf("# last trace: %#llx %#llx %#llx (leaf, mid, top)\n",
		       ULL(ips[0]), ULL(a->nr > 1 ? ips[1] : 0),
		       ULL(a->nr > 2 ? ips[2] : 0));
		EXPECT(a->nr >= 3 &&
		       in_sec(ips[1], __start_dchain_mid_text, __stop_dchain_mid_text) &&
		       in_sec(ips[2], __start_dchain_top_text, __stop_dchain_top_text),
		       "%s: last trace in dchain_leaf: nr %u, frames 1, 2 not in mid, top",
		       what, a->nr);
	} else {
		printf("# last trace: nr %u stop %u frame 0 %#llx (not in the leaf)\n",
		       a->nr, a->stop, ULL(a->nr ? ips[0] : 0));
	}
}

TEST(deferred_selftest)
{
	struct codectl_selftest_args a;
	int rc;

	if (need_root() == T_SKIP)
		return T_SKIP;
	rc = st_run_chain(0, &a);
	if (rc == -EOPNOTSUPP)
		SKIP("no self-NMI on this machine");
	REQUIRE(!rc, "the self-test, 1 s at 100 us: %s",
		rc < 0 ? ename(rc) : "setup or STOP failed");
	st_check("1 s at 100 us", &a);
	EXPECT(a.irq_requests > 0, "no hrtimer request");
	EXPECT(a.nmi_requests > 0, "no NMI request");
	EXPECT(a.entries > 0, "no entry with both callbacks");
	st_last_trace("1 s at 100 us", &a);
	/* STOP again: nothing runs. */
	EXPECT_RC(st_stop(g_tfd, &a, NULL, 0), EINVAL, "a second STOP");
out:
	return T_PASS;
}

/*
 * REMOTE: the timer on the other CPU sends NMIs that interrupt our user
 * code, as PMU overflows do; only the NMI consumer asks.  Its task_work
 * runs at the interrupt that follows (TWA_NMI_CURRENT, or the module's
 * irq_work kick on 6.1), so traces may be MOVED, but they are traces of
 * this thread: the last one that hit the leaf goes on to mid and top.
 */
TEST(deferred_selftest_remote)
{
	struct codectl_selftest_args a;
	int rc;

	if (need_root() == T_SKIP)
		return T_SKIP;
	rc = st_run_chain(CODECTL_SELFTEST_REMOTE, &a);
	if (rc == -EOPNOTSUPP)
		SKIP("no NMI or no second CPU on this machine");
	REQUIRE(!rc, "the self-test, REMOTE, 1 s at 100 us: %s",
		rc < 0 ? ename(rc) : "setup or STOP failed");
	st_check("REMOTE, 1 s at 100 us", &a);
	EXPECT(!a.irq_requests, "REMOTE: %llu hrtimer requests", ULL(a.irq_requests));
	EXPECT(a.nmi_requests > 0 && a.nmi_user > 0,
	       "REMOTE: %llu NMI requests, %llu from user code",
	       ULL(a.nmi_requests), ULL(a.nmi_user));
	EXPECT(a.nr >= 1, "REMOTE: no trace of an NMI that hit user code");
	st_last_trace("REMOTE", &a);
	/*
	 * Each NMI that hit user code ran a tracer hook's walk there; the
	 * callers it found are those the task-context walk found a few
	 * instructions later, unless dchain's functions returned meanwhile.
	 */
	EXPECT(a.nmi_walks > 0 && a.nmi_walks <= a.nmi_user,
	       "REMOTE: %llu hook walks in NMI for %llu requests from user code",
	       ULL(a.nmi_walks), ULL(a.nmi_user));
	EXPECT(a.nmi_walk_frames >= 3 * a.nmi_walks,
	       "REMOTE: %llu frames in %llu hook walks in NMI (want >= 3 each)",
	       ULL(a.nmi_walk_frames), ULL(a.nmi_walks));
	EXPECT(a.nmi_walk_compared >= 10 &&
	       a.nmi_walk_equal * 100 >= a.nmi_walk_compared * 90,
	       "REMOTE: hook walks in NMI the same as in task context: %llu of %llu",
	       ULL(a.nmi_walk_equal), ULL(a.nmi_walk_compared));
	EXPECT_RC(st_start_flags(g_tfd, 100, 4), EINVAL, "START with an unknown flag");
	EXPECT_RC(st_start_flags(g_tfd, 100, CODECTL_SELFTEST_REMOTE |
				 CODECTL_SELFTEST_SLOW),
		  EINVAL, "START with REMOTE and SLOW");
out:
	return T_PASS;
}

/* The SLOW target: pinned, armed, user code only, its longest gap timed. */
struct slow_target {
	int rc;
	int stop_rc;
	double secs;		/* of user code to run */
	double max_gap;		/* longest time between two clock readings */
	struct codectl_selftest_args a;
	volatile int done;
};

static void *slow_target_fn(void *arg)
{
	struct slow_target *t = arg;
	double start, prev, now;

	pin_here();
	t->rc = st_start_flags(g_tfd, 20, CODECTL_SELFTEST_SLOW);
	if (!t->rc) {
		start = prev = now_s();
		do {
			now = now_s();
			if (now - prev > t->max_gap)
				t->max_gap = now - prev;
			prev = now;
		} while (now - start < t->secs);
		/* Disarmed before the thread exits: no request refused. */
		t->stop_rc = st_stop(g_tfd, &t->a, NULL, 0);
	}
	t->done = 1;
	return NULL;
}

/*
 * Requests faster than deliveries (issue 43): the hrtimer asks every
 * 20 us, and each delivery is followed by a task_work on the way out
 * that waits until the timer has asked 3 more times.  The target must
 * get back to user space every time: its user code runs 2 s and never
 * waits long for the CPU.  Before deferred_last, each request on the way
 * out started a new delivery there, whose task_work waited for the next
 * requests, and so on: the target never left the kernel, and the
 * watchdog (this thread) STOPped it after 10 s.
 */
TEST(deferred_selftest_slow_exit)
{
	struct slow_target t = { .secs = 2.0 };
	struct codectl_selftest_args a;
	bool watchdog = false;
	double end;
	pthread_t th;

	if (need_root() == T_SKIP)
		return T_SKIP;
	REQUIRE(!pthread_create(&th, NULL, slow_target_fn, &t),
		"pthread_create");
	end = now_s() + 10.0;
	while (!t.done && now_s() < end)
		sleep_ms(50);
	if (!t.done) {
		/* Disarm from here: the target gets out, its gap tells. */
		watchdog = true;
		EXPECT_RC(st_stop(g_tfd, &a, NULL, 0), 0, "STOP from the watchdog");
	}
	pthread_join(th, NULL);
	REQUIRE_RC(t.rc, 0, "START SLOW in the target thread");
	if (!watchdog) {
		REQUIRE_RC(t.stop_rc, 0, "STOP in the target thread");
		a = t.a;
	}
	printf("# slow exit: longest time out of user space %.3f s; %llu deliveries, each followed by a task_work that waited for 3 more requests; %llu requests answered with a cookie already delivered\n",
	       t.max_gap, ULL(a.slow_works), ULL(a.repeats));
	EXPECT(!watchdog, "the target stayed in the kernel: STOPped by the watchdog after 10 s");
	EXPECT(t.max_gap < 0.25 * time_scale(),
	       "the target was kept from user space for %.3f s (want < %.2f s)",
	       t.max_gap, 0.25 * time_scale());
	st_check("SLOW, 2 s at 20 us", &a);
	EXPECT(!a.refused, "SLOW: %llu requests refused", ULL(a.refused));
	EXPECT(a.irq_requests > 0 && a.slow_works > 0,
	       "SLOW: %llu requests, %llu spinning task_works",
	       ULL(a.irq_requests), ULL(a.slow_works));
	EXPECT(a.repeats > 0, "SLOW: no request came while a delivery was on its way out");
out:
	return T_PASS;
}

/*
 * Another module using the exported API (tests/vm/consumer, loaded by
 * guest-suite.sh): its request gets a cookie, its callback the trace of
 * this thread with that cookie, once; a second request in the same entry
 * returns 1 with the same cookie and no second callback.
 */
TEST(deferred_consumer_module)
{
	struct codectl_consumer_last l0, l1;
	struct codectl_consumer_req req;
	uint64_t pc, ra;
	int fd, rc;

	fd = open("/dev/codectl_consumer", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		SKIP("the consumer module (tests/vm/consumer) is not loaded");
	REQUIRE_RC(cc_ioctl(fd, CONSUMER_IOC_LAST, &l0), 0, "LAST");

	memset(&req, 0, sizeof(req));
	req.times = 1;
	rc = raw_ioctl_at(fd, CONSUMER_IOC_REQUEST, &req, &pc, &ra);
	REQUIRE_RC(rc, 0, "REQUEST once");
	REQUIRE_RC(cc_ioctl(fd, CONSUMER_IOC_LAST, &l1), 0, "LAST");
	EXPECT(req.ret[0] == 0 && req.cookie[0], "request: %d, cookie %#llx",
	       req.ret[0], ULL(req.cookie[0]));
	EXPECT(l1.callbacks == l0.callbacks + 1 && l1.cookie == req.cookie[0] &&
	       l1.nr >= 2 && l1.stop && l1.stop < CODECTL_STOP_NR && !l1.flags,
	       "callback: %llu -> %llu, cookie %#llx (want %#llx), nr %u, stop %u, flags %u",
	       ULL(l0.callbacks), ULL(l1.callbacks), ULL(l1.cookie),
	       ULL(req.cookie[0]), l1.nr, l1.stop, l1.flags);
#if defined(__x86_64__) || defined(__aarch64__)
	EXPECT(l1.ips[0] == pc && l1.ips[1] == ra,
	       "the consumer's trace: frames 0, 1 %#llx %#llx, want %#llx %#llx",
	       ULL(l1.ips[0]), ULL(l1.ips[1]), ULL(pc), ULL(ra));
#endif

	memset(&req, 0, sizeof(req));
	req.times = 2;
	rc = cc_ioctl(fd, CONSUMER_IOC_REQUEST, &req);
	REQUIRE_RC(rc, 0, "REQUEST twice in one entry");
	REQUIRE_RC(cc_ioctl(fd, CONSUMER_IOC_LAST, &l0), 0, "LAST");
	EXPECT(req.ret[0] == 0 && req.ret[1] == 1 &&
	       req.cookie[0] && req.cookie[1] == req.cookie[0] &&
	       req.cookie[0] != l1.cookie,
	       "two requests: %d %d, cookies %#llx %#llx (the previous %#llx)",
	       req.ret[0], req.ret[1], ULL(req.cookie[0]), ULL(req.cookie[1]),
	       ULL(l1.cookie));
	EXPECT(l0.callbacks == l1.callbacks + 1 && l0.cookie == req.cookie[0],
	       "two requests, one entry: %llu callbacks (want 1), cookie %#llx",
	       ULL(l0.callbacks - l1.callbacks), ULL(l0.cookie));
	EXPECT_RC(cc_ioctl(fd, CONSUMER_IOC_REQUEST, &(struct codectl_consumer_req){ .times = 3 }),
		  EINVAL, "REQUEST 3 times");
out:
	close(fd);
	return T_PASS;
}

TEST(deferred_selftest_errors)
{
	struct codectl_selftest_args a;
	int rc;

	if (geteuid()) {
		EXPECT_RC(st_start(g_tfd, 100), EPERM, "START without CAP_SYS_ADMIN");
		EXPECT_RC(st_stop(g_tfd, &a, NULL, 0), EPERM,
			  "STOP without CAP_SYS_ADMIN");
		return T_PASS;
	}
	EXPECT_RC(st_stop(g_tfd, &a, NULL, 0), EINVAL, "STOP without START");
	EXPECT_RC(st_start(g_tfd, 9), EINVAL, "period 9 us");
	EXPECT_RC(st_start(g_tfd, 1000001), EINVAL, "period 1000001 us");
	rc = st_start(g_tfd, 1000000);
	if (rc == -EOPNOTSUPP)
		SKIP("no self-NMI on this machine");
	REQUIRE_RC(rc, 0, "START, 1 s");
	EXPECT_RC(st_start(g_tfd, 100), EBUSY, "a second START");
	EXPECT_RC(st_stop(g_tfd, &a, NULL, 0), 0, "STOP");
	st_check("idle 1 s timer", &a);
out:
	return T_PASS;
}

/* The target thread: pinned, START, busy with user code and syscalls. */
struct st_target {
	int fd;
	int rc;
	double secs;
	bool exit_raw;
};

static void busy(double secs)
{
	double end = now_s() + secs;
	int i;

	while (now_s() < end) {
		dchain_top(2000);
		for (i = 0; i < 20; i++)
			syscall(SYS_getppid);
	}
}

static void *st_target_fn(void *arg)
{
	struct st_target *t = arg;

	pin_here();
	t->rc = st_start(t->fd, 20);
	if (!t->rc)
		busy(t->secs);
	/* Exit with the timer armed, requests pending in the exit syscall. */
	if (t->exit_raw)
		syscall(SYS_exit, 0);
	return NULL;
}

/* Unwinds that ended with @stop so far (UNWIND_STATS), or 0. */
static uint64_t stops_of(unsigned int stop)
{
	struct codectl_unwind_stats us;

	if (cc_ioctl(g_fd, CODECTL_IOC_UNWIND_STATS, &us))
		return 0;
	return us.stops[stop];
}

static void print_exit_stops(const char *what, uint64_t no_user)
{
	printf("# %s: %llu deferred traces at task exit (STOP_NO_USER)\n",
	       what, ULL(stops_of(CODECTL_STOP_NO_USER) - no_user));
}

TEST(deferred_selftest_exit)
{
	uint64_t no_user = stops_of(CODECTL_STOP_NO_USER);
	struct codectl_selftest_args a;
	struct st_target t;
	pthread_t th;
	int round;

	if (need_root() == T_SKIP)
		return T_SKIP;
	for (round = 0; round < 6; round++) {
		t = (struct st_target){ .fd = g_tfd, .secs = 0.15,
					.exit_raw = round & 1 };
		REQUIRE(!pthread_create(&th, NULL, st_target_fn, &t),
			"pthread_create");
		pthread_join(th, NULL);
		if (t.rc == -EOPNOTSUPP)
			SKIP("no self-NMI on this machine");
		REQUIRE_RC(t.rc, 0, "START in the target thread");
		/* The target is gone: every callback ran at its exit. */
		REQUIRE_RC(st_stop(g_tfd, &a, NULL, 0), 0, "STOP from main");
		st_check(round & 1 ? "target exited (SYS_exit)" :
			 "target exited (return)", &a);
		EXPECT(a.irq_requests > 0, "no request");
	}
	print_exit_stops("target threads exited", no_user);
out:
	return T_PASS;
}

static int st_child(void *arg)
{
	int rc;

	(void)arg;
	pin_here();
	rc = st_start(g_tfd, 20);
	/* No self-NMI (arm64): wait for the kill, the parent then skips. */
	while (rc == -EOPNOTSUPP)
		pause();
	if (rc)
		return 1;
	printf("# child armed\n");
	fflush(stdout);
	for (;;)
		busy(1.0);
	return 0;
}

TEST(deferred_selftest_kill)
{
	uint64_t no_user = stops_of(CODECTL_STOP_NO_USER);
	struct codectl_selftest_args a;
	int round, rc;
	pid_t pid;

	if (need_root() == T_SKIP)
		return T_SKIP;
	for (round = 0; round < 4; round++) {
		pid = t_fork_child(st_child, NULL);
		REQUIRE(pid > 0, "fork");
		sleep_ms(150 + 50 * round);
		kill(pid, SIGKILL);
		t_wait_child(pid, SIGKILL, "self-test child");
		/* Nothing of the dead child remains but the test's counters. */
		rc = st_stop(g_tfd, &a, NULL, 0);
		if (rc == -EINVAL)
			SKIP("the child could not START (no self-NMI?)");
		REQUIRE_RC(rc, 0, "STOP after SIGKILL");
		st_check("target killed", &a);
	}
	print_exit_stops("target processes killed", no_user);
out:
	return T_PASS;
}

/* ---- --deferred-hammer, for guest-suite.sh's rmmod step --------------- */

struct hammer {
	pthread_t t;
	int fd;
	volatile int *stop;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	struct rec *r = malloc(sizeof(*r));
	uint64_t c;

	while (r && !*h->stop) {
		if (request(h->fd, &c))
			break;
		read_rec(h->fd, r, sizeof(*r));
	}
	free(r);
	return NULL;
}

/* Set by SIGUSR1 and SIGUSR2: guest-suite.sh moves the hammer on. */
static volatile sig_atomic_t hammer_go;

static void hammer_sig(int sig)
{
	hammer_go = sig;
}

/* busy() until signal @sig came, or @secs at most. */
static void busy_until(int sig, double secs)
{
	double end = now_s() + secs;

	while (hammer_go != sig && now_s() < end)
		busy(0.1);
}

/*
 * 8 threads request and read while this thread runs the self-test (as
 * root) at 200 us, with its NMIs: requests still come in while the
 * deliveries run, at a rate the guest follows (at 20 us one interrupt of
 * its timer, with the NMI it waits for, took up to 127 us under TCG:
 * longer than the period).  Print "# hammering"; on SIGUSR1 (or after
 * @secs) close every fd and print "# closed", then keep running user
 * code and syscalls with the self-test still armed (the module may be
 * unloaded meanwhile) until SIGUSR2 (or @secs more); exit 0.  The
 * signals make the shell's steps independent of how long it takes to see
 * our lines.
 */
int deferred_hammer_main(int secs)
{
	struct hammer h[8];
	volatile int stop = 0;
	int fd, i, armed;

	signal(SIGUSR1, hammer_sig);
	signal(SIGUSR2, hammer_sig);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = cc_topen();
	if (fd < 0) {
		printf("# open " CODECTL_TEST_DEVICE ": %s\n", ename(fd));
		return 1;
	}
	for (i = 0; i < 8; i++) {
		h[i] = (struct hammer){ .fd = fd, .stop = &stop };
		pthread_create(&h[i].t, NULL, hammer_fn, &h[i]);
	}
	pin_here();
	armed = !geteuid() && !st_start(fd, 200);
	printf("# hammering, self-test %s\n", armed ? "armed at 200 us" : "not armed");
	busy_until(SIGUSR1, secs);
	stop = 1;
	for (i = 0; i < 8; i++)
		pthread_join(h[i].t, NULL);
	close(fd);
	printf("# closed\n");
	busy_until(SIGUSR2, secs);
	printf("# done\n");
	return 0;
}
