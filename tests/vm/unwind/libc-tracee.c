// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose hot paths run inside Debian's libc, which has neither
 * SFrame nor frame pointers: tests/vm/tracers.sh samples it with perf and
 * counts the stacks that go through libc to main.
 *
 *   libc-tracee [-a|-s|-n] MODE SECONDS
 *     -a      register every loaded object with codectl_register_all():
 *             its own SFrame, and libc's synthesised from .eh_frame
 *     -s      the same with CODECTL_ALL_NO_SYNTH: libc without SFrame
 *     -n      register nothing (the default): discovery finds what there
 *             is, libc's rules only if `codectl import` gave them
 *     MODE    qsort: qsort() of an array with a callback of ours (samples
 *             in the callback unwind through libc's qsort back to us);
 *             memcpy: large memcpy() calls; read: a thread writes a
 *             pipe, we read() it (context switches in libc's wrapper)
 *
 * The chain is main -> lt_f1 -> lt_f2 -> lt_work -> libc [-> lt_cmp].
 * Prints "libc-tracee: ready PID registered N" on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>

#define NOIPA	__attribute__((noinline, noipa))
#define N	4096

static volatile sig_atomic_t lt_done;
static volatile unsigned long lt_sink;
static int lt_pipe[2];

static void lt_alarm(int sig)
{
	lt_done = 1;
}

NOIPA int lt_cmp(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

/* A byte a millisecond: the reader blocks in read() for each. */
static void *lt_writer(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	char c = 0;

	while (!lt_done) {
		if (write(lt_pipe[1], &c, 1) != 1)
			break;
		nanosleep(&ms, NULL);
	}
	close(lt_pipe[1]);	/* the reader's read() ends */
	return NULL;
}

NOIPA void lt_work(const char *mode)
{
	static unsigned int a[N];
	static char src[1 << 20], dst[1 << 20];
	unsigned int i, seed = 1;
	char c;

	while (!lt_done) {
		if (!strcmp(mode, "qsort")) {
			for (i = 0; i < N; i++)
				a[i] = seed = seed * 1103515245 + 12345;
			qsort(a, N, sizeof(a[0]), lt_cmp);
		} else if (!strcmp(mode, "memcpy")) {
			memcpy(dst, src, sizeof(dst));
			src[seed++ % sizeof(src)] = dst[0];
		} else if (read(lt_pipe[0], &c, 1) != 1) {
			break;
		}
		lt_sink += a[0] + dst[1];
	}
}

NOIPA void lt_f2(const char *mode)
{
	lt_work(mode);
	lt_sink++;
}

NOIPA void lt_f1(const char *mode)
{
	lt_f2(mode);
	lt_sink++;
}

int main(int argc, char **argv)
{
	int opt, reg = 0, n = 0;
	pthread_t t;

	while ((opt = getopt(argc, argv, "asn")) != -1) {
		if (opt != 'a' && opt != 's' && opt != 'n')
			return 2;
		reg = opt;
	}
	if (optind != argc - 2)
		return 2;
	if (reg == 'a')
		n = codectl_register_all(0);
	else if (reg == 's')
		n = codectl_register_all(CODECTL_ALL_NO_SYNTH);
	if (n < 0) {
		fprintf(stderr, "libc-tracee: register: %s\n", strerror(errno));
		return 1;
	}
	codectl_close();
	if (pipe(lt_pipe) || pthread_create(&t, NULL, lt_writer, NULL))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, lt_alarm);
	alarm(atoi(argv[optind + 1]));
	fprintf(stderr, "libc-tracee: ready %d registered %d\n", (int)getpid(),
		n);
	lt_f1(argv[optind]);
	close(lt_pipe[0]);
	pthread_join(t, NULL);
	return 0;
}
