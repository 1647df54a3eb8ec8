// SPDX-License-Identifier: GPL-2.0
/* The fake /dev/codectl of the unit tests: see fakedev.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fakedev.h"

fake_kernel_fn fake_kernel = fake_kernel_ok;
int fake_open_errno;
int fake_open_passthrough;
unsigned int fake_open_delay_us;
pthread_barrier_t *fake_open_barrier;
unsigned int fake_opens, fake_open_attempts, fake_closes, fake_ioctls;
int fake_first_ioctl_fd = -1;
unsigned int fake_ioctls_other_fd;
int fake_last_open_flags;
int fake_fail_errno = EINVAL;
struct fake_call fake_log[FAKE_LOG_MAX];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int log_count;
#define MAX_FDS	64
static int device_fds[MAX_FDS];
static unsigned int nr_device_fds;

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __real___open_2(const char *path, int flags);
int __real___open64_2(const char *path, int flags);
int __real_ioctl(int fd, unsigned long request, ...);
int __real_close(int fd);

static void add_device_fd(int fd)
{
	pthread_mutex_lock(&lock);
	if (nr_device_fds < MAX_FDS)
		device_fds[nr_device_fds++] = fd;
	pthread_mutex_unlock(&lock);
}

static int remove_device_fd(int fd)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nr_device_fds; i++) {
		if (device_fds[i] == fd) {
			device_fds[i] = device_fds[--nr_device_fds];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

int fake_is_device_fd(int fd)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nr_device_fds; i++)
		found |= device_fds[i] == fd;
	pthread_mutex_unlock(&lock);
	return found;
}

int fake_device_fd(void)
{
	int fd = __real_open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		add_device_fd(fd);
	return fd;
}

unsigned int fake_log_count(void)
{
	return __atomic_load_n(&log_count, __ATOMIC_SEQ_CST);
}

void fake_reset(void)
{
	codectl_close();
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < nr_device_fds; i++)
		__real_close(device_fds[i]);
	nr_device_fds = 0;
	log_count = 0;
	memset(fake_log, 0, sizeof(fake_log));
	pthread_mutex_unlock(&lock);
	fake_kernel = fake_kernel_ok;
	fake_open_errno = 0;
	fake_open_passthrough = 0;
	fake_open_delay_us = 0;
	fake_open_barrier = NULL;
	fake_opens = fake_open_attempts = fake_closes = fake_ioctls = 0;
	fake_last_open_flags = 0;
	fake_first_ioctl_fd = -1;
	fake_ioctls_other_fd = 0;
	fake_fail_errno = EINVAL;
}

int fake_setup(void **state)
{
	(void)state;
	fake_reset();
	return 0;
}

int fake_kernel_ok(unsigned long request, struct codectl_args *args)
{
	(void)request;
	(void)args;
	return 0;
}

int fake_kernel_fail(unsigned long request, struct codectl_args *args)
{
	(void)request;
	(void)args;
	return -fake_fail_errno;
}

/* Open of the device: 1 and *ret set if @path is the device. */
static int fake_open(const char *path, int flags, int *ret)
{
	if (strcmp(path, CODECTL_DEVICE) || fake_open_passthrough)
		return 0;
	__atomic_add_fetch(&fake_open_attempts, 1, __ATOMIC_SEQ_CST);
	fake_last_open_flags = flags;
	if (fake_open_delay_us)
		usleep(fake_open_delay_us);
	if (fake_open_barrier)
		pthread_barrier_wait(fake_open_barrier);
	if (fake_open_errno) {
		errno = fake_open_errno;
		*ret = -1;
		return 1;
	}
	*ret = fake_device_fd();
	if (*ret >= 0)
		__atomic_add_fetch(&fake_opens, 1, __ATOMIC_SEQ_CST);
	return 1;
}

static mode_t open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return va_arg(ap, mode_t);
	return 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int ret;

	if (fake_open(path, flags, &ret))
		return ret;
	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return __real_open(path, flags, mode);
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int ret;

	if (fake_open(path, flags, &ret))
		return ret;
	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return __real_open64(path, flags, mode);
}

int __wrap___open_2(const char *path, int flags)
{
	int ret;

	if (fake_open(path, flags, &ret))
		return ret;
	return __real___open_2(path, flags);
}

int __wrap___open64_2(const char *path, int flags)
{
	int ret;

	if (fake_open(path, flags, &ret))
		return ret;
	return __real___open64_2(path, flags);
}

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
	struct codectl_args *args = arg;
	int ret, first = -1;
	unsigned int n;

	__atomic_add_fetch(&fake_ioctls, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_compare_exchange_n(&fake_first_ioctl_fd, &first, fd, 0,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    first != fd)
		__atomic_add_fetch(&fake_ioctls_other_fd, 1, __ATOMIC_SEQ_CST);
	n = __atomic_fetch_add(&log_count, 1, __ATOMIC_SEQ_CST);
	if (n < FAKE_LOG_MAX) {
		struct fake_call *c = &fake_log[n];

		c->fd = fd;
		c->request = request;
		memcpy(&c->args, args, sizeof(*args));
		if (args->info) {
			size_t len = args->info_size < FAKE_INFO_COPY ?
				     args->info_size : FAKE_INFO_COPY;

			memcpy(c->info, (void *)(uintptr_t)args->info, len);
		}
	}
	ret = fake_kernel(request, args);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

int __wrap_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fake_is_device_fd(fd))
		return fake_ioctl(fd, request, arg);
	return __real_ioctl(fd, request, arg);
}

#if defined(__USE_TIME_BITS64) && __TIMESIZE == 32
int __real___ioctl_time64(int fd, unsigned long request, ...);

int __wrap___ioctl_time64(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fake_is_device_fd(fd))
		return fake_ioctl(fd, request, arg);
	return __real___ioctl_time64(fd, request, arg);
}
#endif

int __wrap_close(int fd)
{
	if (remove_device_fd(fd))
		__atomic_add_fetch(&fake_closes, 1, __ATOMIC_SEQ_CST);
	return __real_close(fd);
}
