// SPDX-License-Identifier: GPL-2.0
/* One wrapper per option: the ioctl, the info and its size, errors. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "fakedev.h"

_Static_assert(sizeof(struct codectl_elf_info) == CODECTL_ELF_INFO_SIZE_VER1,
	       "elf info size");
_Static_assert(sizeof(struct codectl_jit_info) == CODECTL_JIT_INFO_SIZE_VER0,
	       "jit info size");
_Static_assert(sizeof(struct codectl_unregister_info) ==
	       CODECTL_UNREGISTER_INFO_SIZE_VER0, "unregister info size");
_Static_assert(sizeof(struct codectl_query_info) ==
	       CODECTL_QUERY_INFO_SIZE_VER3, "query info size");
_Static_assert(offsetof(struct codectl_query_info, pid) ==
	       CODECTL_QUERY_INFO_SIZE_VER1, "query info VER1 size");
_Static_assert(sizeof(struct codectl_version) == CODECTL_VERSION_SIZE_VER1,
	       "version size");
_Static_assert(sizeof(struct codectl_args) == 24, "args size");

/* The call of the last (only) ioctl. */
static const struct fake_call *only_call(unsigned long request, size_t size,
					 const void *info)
{
	const struct fake_call *c = &fake_log[0];

	assert_int_equal(fake_log_count(), 1);
	assert_int_equal(c->request, request);
	assert_int_equal(c->args.info, (uintptr_t)info);
	assert_int_equal(c->args.info_size, size);
	assert_int_equal(c->args.flags, 0);
	assert_int_equal(c->args.__reserved, 0);
	return c;
}

static void test_register_elf(void **state)
{
	static const char path[] = "/usr/lib/libx.so";
	struct codectl_elf_info info = {
		.elf_start = 0x400000, .elf_end = 0x500000,
		.text_start = 0x401000, .text_end = 0x480000,
		.sframe_start = 0x490000, .sframe_end = 0x491000,
		.pathname = (uintptr_t)path,
	};
	const struct fake_call *c;

	(void)state;
	errno = EDOM;
	assert_int_equal(codectl_register_elf(&info), 0);
	assert_int_equal(errno, EDOM);
	c = only_call(CODECTL_IOC_REGISTER_ELF, CODECTL_ELF_INFO_SIZE_VER0,
		      &info);
	assert_memory_equal(c->info, &info, CODECTL_ELF_INFO_SIZE_VER0);
}

static void test_register_jit(void **state)
{
	struct codectl_jit_info info = {
		.text_start = 0x7f0000000000, .text_end = 0x7f0000010000,
		.unwind_head = 0x7f0000100000,
	};
	const struct fake_call *c;

	(void)state;
	assert_int_equal(codectl_register_jit(&info), 0);
	c = only_call(CODECTL_IOC_REGISTER_JIT, CODECTL_JIT_INFO_SIZE_VER0,
		      &info);
	assert_memory_equal(c->info, &info, sizeof(info));
}

static void test_unregister(void **state)
{
	const struct fake_call *c;
	struct codectl_unregister_info u;

	(void)state;
	assert_int_equal(codectl_unregister(0x1000, UINT64_MAX), 0);
	c = &fake_log[0];
	assert_int_equal(fake_log_count(), 1);
	assert_int_equal(c->request, CODECTL_IOC_UNREGISTER);
	assert_int_equal(c->args.info_size, CODECTL_UNREGISTER_INFO_SIZE_VER0);
	assert_int_equal(c->args.flags, 0);
	assert_int_not_equal(c->args.info, 0);
	memcpy(&u, c->info, sizeof(u));
	assert_int_equal(u.text_start, 0x1000);
	assert_int_equal(u.text_end, UINT64_MAX);
}

/* A kernel answering QUERY and VERSION, as the module would. */
static int kernel_answers(unsigned long request, struct codectl_args *args)
{
	if (request == CODECTL_IOC_QUERY) {
		struct codectl_query_info *q = (void *)(uintptr_t)args->info;

		if (q->addr >= 0x2000)
			return -ENOENT;
		q->kind = CODECTL_KIND_JIT;
		q->text_start = 0x1000;
		q->text_end = 0x2000;
		q->unwind_head = 0x3000;
		q->pathname_len = 0;
		return 0;
	}
	if (request == CODECTL_IOC_CHECK_SFRAME) {
		struct codectl_sframe_check *c = (void *)(uintptr_t)args->info;

		c->error = CODECTL_SFRAME_E_FRE_ORDER;
		c->version = 3;
		return 0;
	}
	if (request == CODECTL_IOC_VERSION) {
		struct codectl_version *v = (void *)(uintptr_t)args->info;

		memset(v, 0, args->info_size);
		v->abi_version = CODECTL_ABI_VERSION;
		v->options = (1u << CODECTL_NR_OPTIONS) - 1;
		v->max_registrations = 1024;
		return 0;
	}
	return -ENOTTY;
}

static void test_query(void **state)
{
	struct codectl_query_info q = { .addr = 0 };

	(void)state;
	fake_kernel = kernel_answers;
	assert_int_equal(codectl_query(&q), 0);
	only_call(CODECTL_IOC_QUERY, CODECTL_QUERY_INFO_SIZE_VER0, &q);
	assert_int_equal(q.kind, CODECTL_KIND_JIT);
	assert_int_equal(q.text_end, 0x2000);
	assert_int_equal(q.unwind_head, 0x3000);
	/* Iterate: the next cursor is the previous text_end. */
	q.addr = q.text_end;
	errno = 0;
	assert_int_equal(codectl_query(&q), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_query_pid(void **state)
{
	struct codectl_query_info q = { .addr = 0, .pid = 99 };
	pid_t self = getpid();

	(void)state;
	fake_kernel = kernel_answers;
	assert_int_equal(codectl_query_pid(self, &q), 0);
	only_call(CODECTL_IOC_QUERY, CODECTL_QUERY_INFO_SIZE_VER3, &q);
	assert_int_equal(q.pid, self);
	assert_int_equal(q.maps_fd, -1);
	assert_int_equal(q.kind, CODECTL_KIND_JIT);
	memcpy(&q, fake_log[0].info, sizeof(q));
	assert_int_equal(q.pid, self);
	/* The fd of /proc/PID/maps was passed, and is closed again. */
	assert_true(q.maps_fd >= 0);
	assert_int_equal(fcntl(q.maps_fd, F_GETFD), -1);
	/* A process that does not exist: ESRCH before any call. */
	errno = 0;
	assert_int_equal(codectl_query_pid(-2, &q), -1);
	assert_int_equal(errno, ESRCH);
}

static void test_version(void **state)
{
	struct codectl_version v;

	(void)state;
	memset(&v, 0xff, sizeof(v));
	fake_kernel = kernel_answers;
	assert_int_equal(codectl_version(&v), 0);
	only_call(CODECTL_IOC_VERSION, CODECTL_VERSION_SIZE_VER0, &v);
	assert_int_equal(v.abi_version, CODECTL_ABI_VERSION);
	assert_int_equal(v.__reserved, 0);
	assert_int_equal(v.options, 0x3f);	/* options 0..5 */
	assert_int_equal(v.max_registrations, 1024);
	assert_int_equal(v.bytes, 0);
}

static void test_check_sframe(void **state)
{
	struct codectl_sframe_check c = {
		.sframe_start = 0x1000, .sframe_end = 0x2000,
	};

	(void)state;
	fake_kernel = kernel_answers;
	assert_int_equal(codectl_check_sframe(&c), 0);
	only_call(CODECTL_IOC_CHECK_SFRAME, CODECTL_SFRAME_CHECK_SIZE_VER0, &c);
	assert_int_equal(c.error, CODECTL_SFRAME_E_FRE_ORDER);
	assert_int_equal(c.version, 3);
}

/* Every wrapper returns -1 with the kernel's errno, and ENODEV. */
#define NR_WRAPPERS	6

static int call_wrapper(int which)
{
	static struct codectl_elf_info elf;
	static struct codectl_jit_info jit;
	static struct codectl_query_info q;
	static struct codectl_version v;
	static struct codectl_sframe_check c;

	switch (which) {
	case 0: return codectl_register_elf(&elf);
	case 1: return codectl_register_jit(&jit);
	case 2: return codectl_unregister(1, 2);
	case 3: return codectl_query(&q);
	case 4: return codectl_version(&v);
	default: return codectl_check_sframe(&c);
	}
}

static void test_wrapper_errors(void **state)
{
	static const int errs[] = { EINVAL, EFAULT, E2BIG, EEXIST, ENOSPC,
				    ENOMEM, ENOENT, ENOEXEC, EINTR };

	(void)state;
	fake_kernel = fake_kernel_fail;
	for (int w = 0; w < NR_WRAPPERS; w++) {
		for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
			fake_fail_errno = errs[i];
			errno = 0;
			assert_int_equal(call_wrapper(w), -1);
			assert_int_equal(errno, errs[i]);
		}
	}
}

static void test_wrapper_enodev(void **state)
{
	(void)state;
	fake_open_errno = ENOENT;
	for (int w = 0; w < NR_WRAPPERS; w++) {
		errno = 0;
		assert_int_equal(call_wrapper(w), -1);
		assert_int_equal(errno, ENODEV);
	}
	assert_int_equal(fake_ioctls, 0);
}

static void test_wrapper_requests(void **state)
{
	static const unsigned long req[] = {
		CODECTL_IOC_REGISTER_ELF, CODECTL_IOC_REGISTER_JIT,
		CODECTL_IOC_UNREGISTER, CODECTL_IOC_QUERY, CODECTL_IOC_VERSION,
		CODECTL_IOC_CHECK_SFRAME,
	};

	(void)state;
	for (int w = 0; w < NR_WRAPPERS; w++) {
		errno = EDOM;
		assert_int_equal(call_wrapper(w), 0);
		assert_int_equal(errno, EDOM);
		assert_int_equal(fake_log[w].request, req[w]);
	}
	assert_int_equal(fake_opens, 1);
}

/* Names all distinct within their kind; n of them, none "unknown". */
static void assert_distinct(const char *const *names, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		assert_string_not_equal(names[i], "unknown");
		for (j = 0; j < i; j++)
			assert_string_not_equal(names[i], names[j]);
	}
}

/* Every method and stop reason has its own name; others are "unknown". */
static void test_names(void **state)
{
	const char *frames[CODECTL_FRAME_SIGNAL], *stops[CODECTL_STOP_NR - 1];
	unsigned int i;

	(void)state;
	for (i = CODECTL_FRAME_REGS; i <= CODECTL_FRAME_SIGNAL; i++)
		frames[i - 1] = codectl_frame_name(i);
	for (i = CODECTL_STOP_OUTERMOST; i < CODECTL_STOP_NR; i++)
		stops[i - 1] = codectl_stop_name(i);
	assert_distinct(frames, CODECTL_FRAME_SIGNAL);
	assert_distinct(stops, CODECTL_STOP_NR - 1);
	assert_string_equal(codectl_frame_name(CODECTL_FRAME_SFRAME), "sframe");
	assert_string_equal(codectl_stop_name(CODECTL_STOP_DEPTH), "depth");
	assert_string_equal(codectl_frame_name(0), "unknown");
	assert_string_equal(codectl_frame_name(1000), "unknown");
	assert_string_equal(codectl_stop_name(0), "unknown");
	assert_string_equal(codectl_stop_name(CODECTL_STOP_NR), "unknown");
}

#define T(f)	cmocka_unit_test_setup(f, fake_setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_register_elf),
		T(test_register_jit),
		T(test_unregister),
		T(test_query),
		T(test_query_pid),
		T(test_version),
		T(test_check_sframe),
		T(test_wrapper_errors),
		T(test_wrapper_enodev),
		T(test_wrapper_requests),
		T(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, fake_setup);
}
