// SPDX-License-Identifier: GPL-2.0
/*
 * codectl(): option -> ioctl mapping, arguments, errors, and the lazily
 * opened process-wide descriptor (threads, fork, set_fd/close).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakedev.h"

static void test_option_to_ioctl(void **state)
{
	static const unsigned int options[] = {
		CODECTL_UNREGISTER, CODECTL_REGISTER_ELF, CODECTL_REGISTER_JIT,
		CODECTL_QUERY, CODECTL_VERSION, CODECTL_NR_OPTIONS, 17, 128, 255,
	};
	unsigned int i;
	char info[8];

	(void)state;
	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		assert_int_equal(codectl(options[i], info, sizeof(info), 0), 0);
	assert_int_equal(fake_log_count(), i);
	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		unsigned long req = fake_log[i].request;

		assert_int_equal(req, CODECTL_IOC(options[i]));
		assert_int_equal(_IOC_NR(req), options[i]);
		assert_int_equal(_IOC_TYPE(req), CODECTL_IOC_MAGIC);
		assert_int_equal(_IOC_SIZE(req), sizeof(struct codectl_args));
		assert_int_equal(_IOC_DIR(req), _IOC_WRITE);
	}
	/* The named ioctl numbers are the same thing. */
	assert_int_equal(fake_log[0].request, CODECTL_IOC_UNREGISTER);
	assert_int_equal(fake_log[1].request, CODECTL_IOC_REGISTER_ELF);
	assert_int_equal(fake_log[2].request, CODECTL_IOC_REGISTER_JIT);
	assert_int_equal(fake_log[3].request, CODECTL_IOC_QUERY);
	assert_int_equal(fake_log[4].request, CODECTL_IOC_VERSION);
}

static void test_args_passed_through(void **state)
{
	static const struct {
		unsigned int flags;
		size_t size;
		int null;
	} cases[] = {
		{ 0, 80, 0 }, { 1, 0, 0 }, { 0xdeadbeef, 4096, 0 },
		{ UINT_MAX, 4097, 0 }, { 0, SIZE_MAX, 0 }, { 0, 16, 1 },
	};
	unsigned char info[FAKE_INFO_COPY];	/* the fake copies that much */
	unsigned int i, n = sizeof(cases) / sizeof(cases[0]);

	(void)state;
	for (i = 0; i < n; i++)
		assert_int_equal(codectl(CODECTL_QUERY,
					 cases[i].null ? NULL : info,
					 cases[i].size, cases[i].flags), 0);
	assert_int_equal(fake_log_count(), n);
	for (i = 0; i < n; i++) {
		const struct codectl_args *a = &fake_log[i].args;

		assert_int_equal(a->info, cases[i].null ? 0 : (uintptr_t)info);
		assert_int_equal(a->info_size, (uint64_t)cases[i].size);
		assert_int_equal(a->flags, cases[i].flags);
		assert_int_equal(a->__reserved, 0);
	}
}

static int kernel_returns_7(unsigned long request, struct codectl_args *args)
{
	(void)request;
	(void)args;
	return 7;
}

static void test_kernel_return_value(void **state)
{
	(void)state;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	fake_kernel = kernel_returns_7;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 7);
}

static void test_kernel_errno(void **state)
{
	static const int errs[] = {
		EFAULT, EINVAL, E2BIG, ENOTTY, EINTR, EEXIST, ENOSPC, ENOMEM,
		ENOEXEC, ENAMETOOLONG, EMSGSIZE, ENOENT,
	};

	(void)state;
	fake_kernel = fake_kernel_fail;
	for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		fake_fail_errno = errs[i];
		errno = 0;
		assert_int_equal(codectl(CODECTL_REGISTER_ELF, NULL, 80, 0), -1);
		assert_int_equal(errno, errs[i]);
	}
}

static int kernel_known_options(unsigned long request,
				struct codectl_args *args)
{
	(void)args;
	return _IOC_NR(request) < CODECTL_NR_OPTIONS ? 0 : -ENOTTY;
}

static void test_unknown_option_reaches_kernel(void **state)
{
	(void)state;
	fake_kernel = kernel_known_options;
	errno = 0;
	assert_int_equal(codectl(CODECTL_NR_OPTIONS, NULL, 0, 0), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(codectl(255, NULL, 0, 0), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(fake_ioctls, 2);
}

static void test_option_too_big(void **state)
{
	static const unsigned int options[] = { 256, 257, 0x1ff, 1000, INT_MAX,
						UINT_MAX };

	(void)state;
	for (unsigned int i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		errno = 0;
		assert_int_equal(codectl(options[i], NULL, 0, 0), -1);
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(fake_open_attempts, 0);
	assert_int_equal(fake_ioctls, 0);
}

static void test_no_device_enodev(void **state)
{
	(void)state;
	fake_open_errno = ENOENT;
	errno = 0;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), -1);
	assert_int_equal(errno, ENODEV);
	/* A failed open is not remembered: the module may be loaded later. */
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), -1);
	assert_int_equal(errno, ENODEV);
	assert_int_equal(fake_open_attempts, 2);
	assert_int_equal(fake_ioctls, 0);
	fake_open_errno = 0;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), 0);
	assert_int_equal(fake_opens, 1);
	assert_int_equal(fake_ioctls, 1);
}

static void test_open_errors_kept(void **state)
{
	static const int errs[] = { EACCES, EPERM, EMFILE, ENFILE, ENXIO,
				    ENODEV, ENOMEM };

	(void)state;
	for (unsigned int i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		fake_open_errno = errs[i];
		errno = 0;
		assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), -1);
		assert_int_equal(errno, errs[i]);
	}
	assert_int_equal(fake_ioctls, 0);
}

/* The real open on this machine: without the module there is no node. */
static void test_real_device(void **state)
{
	struct codectl_version v;
	int ret, err;

	(void)state;
	fake_open_passthrough = 1;
	errno = 0;
	ret = codectl_version(&v);
	err = errno;
	if (access(CODECTL_DEVICE, F_OK) == 0) {
		/* Module loaded: whatever happens, it is not ENODEV. */
		assert_true(ret == 0 || err != ENODEV);
	} else {
		assert_int_equal(ret, -1);
		assert_int_equal(err, ENODEV);
	}
	codectl_close();
}

static void test_open_flags(void **state)
{
	(void)state;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), 0);
	assert_int_equal(fake_last_open_flags, O_RDWR | O_CLOEXEC);
	assert_int_equal(fake_opens, 1);
}

static void test_errno_preserved_on_success(void **state)
{
	(void)state;
	errno = EDOM;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), 0); /* opens */
	assert_int_equal(errno, EDOM);
	errno = ERANGE;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 48, 0), 0);
	assert_int_equal(errno, ERANGE);
	errno = EILSEQ;
	codectl_close();
	assert_int_equal(errno, EILSEQ);
}

static void test_single_open(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++)
		assert_int_equal(codectl(i % CODECTL_NR_OPTIONS, NULL, 0, 0), 0);
	assert_int_equal(fake_open_attempts, 1);
	assert_int_equal(fake_opens, 1);
	assert_int_equal(fake_closes, 0);
	assert_int_equal(fake_ioctls, 200);
	for (unsigned int i = 1; i < FAKE_LOG_MAX; i++)
		assert_int_equal(fake_log[i].fd, fake_log[0].fd);
	assert_true(fake_is_device_fd(fake_log[0].fd));
	assert_true(fcntl(fake_log[0].fd, F_GETFD) & FD_CLOEXEC);
}

#define NR_THREADS	8
#define CALLS		1000

static pthread_barrier_t barrier;

struct thread_result {
	int failures;
};

static void *thread_fn(void *arg)
{
	struct thread_result *r = arg;

	pthread_barrier_wait(&barrier);
	for (int i = 0; i < CALLS; i++)
		if (codectl(CODECTL_VERSION, r, sizeof(*r), 0))
			r->failures++;
	return NULL;
}

static void run_threads(struct thread_result *res)
{
	pthread_t t[NR_THREADS];

	assert_int_equal(pthread_barrier_init(&barrier, NULL, NR_THREADS), 0);
	for (int i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_fn, &res[i]), 0);
	for (int i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&barrier);
}

/*
 * Threads racing on the first call: here all of them are made to open the
 * device at the same time; exactly one descriptor is kept and every other
 * one is closed again.
 */
static void test_threads_cold_start(void **state)
{
	struct thread_result res[NR_THREADS] = { { 0 } };
	pthread_barrier_t in_open;
	int fd;

	(void)state;
	assert_int_equal(pthread_barrier_init(&in_open, NULL, NR_THREADS), 0);
	fake_open_barrier = &in_open;
	run_threads(res);
	fake_open_barrier = NULL;
	pthread_barrier_destroy(&in_open);
	for (int i = 0; i < NR_THREADS; i++)
		assert_int_equal(res[i].failures, 0);
	assert_int_equal(fake_ioctls, NR_THREADS * CALLS);
	assert_int_equal(fake_opens, NR_THREADS);
	assert_int_equal(fake_closes, NR_THREADS - 1);	/* losers, no leak */
	/* All ioctls used the one descriptor that was kept. */
	fd = fake_first_ioctl_fd;
	assert_int_equal(fake_ioctls_other_fd, 0);
	assert_true(fake_is_device_fd(fd));
	/* After the race, no more opens. */
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	assert_int_equal(fake_ioctls_other_fd, 0);
	assert_int_equal(fake_open_attempts, fake_opens);
	codectl_close();
	assert_int_equal(fake_opens, fake_closes);
}

static void test_threads_warm(void **state)
{
	struct thread_result res[NR_THREADS] = { { 0 } };

	(void)state;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	run_threads(res);
	for (int i = 0; i < NR_THREADS; i++)
		assert_int_equal(res[i].failures, 0);
	assert_int_equal(fake_open_attempts, 1);
	assert_int_equal(fake_closes, 0);
	assert_int_equal(fake_ioctls, NR_THREADS * CALLS + 1);
	assert_int_equal(fake_ioctls_other_fd, 0);
}

/* After fork the child uses the inherited descriptor, without reopening. */
static void test_fork_inherits(void **state)
{
	int status, fd;
	pid_t pid;

	(void)state;
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	fd = fake_log[0].fd;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ok = codectl(CODECTL_VERSION, NULL, 0, 0) == 0 &&
			 fake_open_attempts == 1 && fake_log_count() == 2 &&
			 fake_log[1].fd == fd && fcntl(fd, F_GETFD) >= 0;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent still has its descriptor. */
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	assert_int_equal(fake_log[fake_log_count() - 1].fd, fd);
	assert_int_equal(fake_open_attempts, 1);
}

static void test_close_and_reopen(void **state)
{
	(void)state;
	codectl_close();		/* nothing open: no-op */
	assert_int_equal(fake_closes, 0);
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	codectl_close();
	assert_int_equal(fake_closes, 1);
	assert_int_equal(fake_opens, 1);
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	assert_int_equal(fake_opens, 2);
	codectl_close();
	codectl_close();
	assert_int_equal(fake_closes, 2);
}

static void test_set_fd(void **state)
{
	int fd, fd2, closed;

	(void)state;
	fd = fake_device_fd();
	assert_true(fd >= 0);
	assert_int_equal(codectl_set_fd(fd), 0);
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	assert_int_equal(fake_open_attempts, 0);
	assert_int_equal(fake_log[0].fd, fd);

	/* Only one descriptor at a time; the new one is left alone. */
	fd2 = fake_device_fd();
	errno = 0;
	assert_int_equal(codectl_set_fd(fd2), -1);
	assert_int_equal(errno, EBUSY);
	assert_true(fcntl(fd2, F_GETFD) >= 0);

	errno = 0;
	assert_int_equal(codectl_set_fd(-1), -1);
	assert_int_equal(errno, EBADF);
	closed = dup(fd2);
	close(closed);
	errno = 0;
	assert_int_equal(codectl_set_fd(closed), -1);
	assert_int_equal(errno, EBADF);

	codectl_close();
	assert_int_equal(fake_closes, 1);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(codectl_set_fd(fd2), 0);
	assert_int_equal(codectl(CODECTL_VERSION, NULL, 0, 0), 0);
	assert_int_equal(fake_log[1].fd, fd2);
	assert_int_equal(fake_open_attempts, 0);
}

#define T(f)	cmocka_unit_test_setup(f, fake_setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_option_to_ioctl),
		T(test_args_passed_through),
		T(test_kernel_return_value),
		T(test_kernel_errno),
		T(test_unknown_option_reaches_kernel),
		T(test_option_too_big),
		T(test_no_device_enodev),
		T(test_open_errors_kept),
		T(test_real_device),
		T(test_open_flags),
		T(test_errno_preserved_on_success),
		T(test_single_open),
		T(test_threads_cold_start),
		T(test_threads_warm),
		T(test_fork_inherits),
		T(test_close_and_reopen),
		T(test_set_fd),
	};

	return cmocka_run_group_tests(tests, NULL, fake_setup);
}
