/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake /dev/codectl for the unit tests: the test binaries are linked
 * with -Wl,--wrap for open (and its glibc variants), ioctl and close, so
 * the library's calls land here.  Opening CODECTL_DEVICE gives a real
 * descriptor of /dev/null that is remembered as "the device"; ioctls on it
 * are logged and answered by fake_kernel (default: success).  Every other
 * path or descriptor goes to the real function.
 */
#ifndef CODECTL_TESTS_FAKEDEV_H
#define CODECTL_TESTS_FAKEDEV_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <codectl.h>

#define FAKE_LOG_MAX		64
#define FAKE_INFO_COPY		256

struct fake_call {
	int fd;
	unsigned long request;
	struct codectl_args args;		/* as passed */
	unsigned char info[FAKE_INFO_COPY];	/* *info at the time of the call */
};

/*
 * The fake kernel: returns >= 0 for success, or -errno.  Called for every
 * ioctl on the device (from any thread), after logging.
 */
typedef int (*fake_kernel_fn)(unsigned long request, struct codectl_args *args);

extern fake_kernel_fn fake_kernel;
extern int fake_open_errno;		/* !0: opening the device fails so */
extern int fake_open_passthrough;	/* open the real CODECTL_DEVICE */
extern unsigned int fake_open_delay_us;	/* sleep in open */
/* If set, opening the device waits on it (to make threads race). */
extern pthread_barrier_t *fake_open_barrier;

/* Counters (atomic). */
extern unsigned int fake_opens;		/* successful opens of the device */
extern unsigned int fake_open_attempts;
extern unsigned int fake_closes;	/* closes of a device descriptor */
extern unsigned int fake_ioctls;	/* ioctls on a device descriptor */
extern int fake_first_ioctl_fd;		/* descriptor of the first one */
extern unsigned int fake_ioctls_other_fd; /* ioctls on another one */

extern int fake_last_open_flags;

/* Log of the first FAKE_LOG_MAX ioctls since fake_reset(). */
extern struct fake_call fake_log[FAKE_LOG_MAX];
unsigned int fake_log_count(void);

/* Close the library's descriptor, forget everything, default behaviour. */
void fake_reset(void);

/* A descriptor that counts as the device (for codectl_set_fd()). */
int fake_device_fd(void);
int fake_is_device_fd(int fd);

/* Canned fake kernels. */
int fake_kernel_ok(unsigned long request, struct codectl_args *args);
extern int fake_fail_errno;		/* for fake_kernel_fail */
int fake_kernel_fail(unsigned long request, struct codectl_args *args);

/* cmocka group setup/teardown calling fake_reset(). */
int fake_setup(void **state);

#endif
