// SPDX-License-Identifier: GPL-2.0
/*
 * The program of tests/vm/tracers.sh's "no frame that is not code" and
 * stop-reason tests: -O2 -fomit-frame-pointer with SFrame (v3), calling
 * libnocode.so (nocode.S: no frame pointers, no SFrame, no CFI), whose
 * rbp holds a heap pointer, a stack pointer and a small integer in turn.
 *
 *   frames-tracee lib SECONDS [MAPS]
 *       main -> ft_work -> nc_spin(0, 1, 2, ...) until SECONDS have
 *       passed; the walk of any sample in nc_spin must stop there (no
 *       rule for it), never give what rbp leads to
 *   frames-tracee outer SECONDS [MAPS]
 *       a thread spinning in ft_leaf <- ft_thread <- libc's start_thread
 *       <- clone3, whose CFI marks the outermost frame: with libc's rules
 *       imported, a complete stack ends OUTERMOST
 *   frames-tracee main SECONDS [MAPS]
 *       the same spinning in ft_leaf <- main, in the main thread: its
 *       stack goes through libc to _start, which has no SFrame (crt1.o)
 *   frames-tracee check MAPS
 *       reads addresses, one a line (hex, with or without 0x; 0 and
 *       other lines ignored; "code" for a frame known to be code, as
 *       one perf names the object of), and prints "TOTAL NONCODE": how
 *       many are not in an executable mapping of MAPS (a copy of
 *       /proc/PID/maps); the first few non-code ones go to stderr
 *
 * With MAPS, the running modes copy /proc/self/maps there before they
 * print "frames-tracee: ready PID" on stderr.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOIPA	__attribute__((noinline, noipa))

void nc_spin(int mode, void *heap, unsigned long n);

static volatile sig_atomic_t ft_done;
static volatile unsigned long ft_sink;

static void ft_alarm(int sig)
{
	ft_done = 1;
}

NOIPA void ft_work(void *heap)
{
	int mode;

	for (mode = 0; mode < 3; mode++)
		nc_spin(mode, heap, 200000);
}

NOIPA void ft_leaf(void)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		ft_sink += i;
}

NOIPA void *ft_thread(void *arg)
{
	while (!ft_done)
		ft_leaf();
	return arg;
}

static int ft_copy_maps(const char *to)
{
	char buf[4096];
	FILE *in, *out;
	size_t n;

	in = fopen("/proc/self/maps", "r");
	out = fopen(to, "w");
	if (!in || !out) {
		perror(to);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return fclose(out) ? -1 : 0;
}

struct ft_range {
	uint64_t lo, hi;
};

static int ft_check(const char *maps)
{
	static struct ft_range r[1024];
	unsigned long total = 0, noncode = 0;
	char line[4096], perms[8];
	unsigned long long lo, hi;
	unsigned int nr = 0, i;
	FILE *f;

	f = fopen(maps, "r");
	if (!f) {
		perror(maps);
		return 2;
	}
	while (fgets(line, sizeof(line), f) && nr < 1024)
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 &&
		    perms[2] == 'x')
			r[nr++] = (struct ft_range){ lo, hi };
	fclose(f);
	if (!nr) {
		fprintf(stderr, "frames-tracee: no executable mapping in %s\n",
			maps);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *p = line, *end;
		unsigned long long a;

		while (isspace((unsigned char)*p))
			p++;
		if (!strncmp(p, "code", 4)) {
			total++;
			continue;
		}
		if (!isxdigit((unsigned char)*p))
			continue;
		a = strtoull(p, &end, 16);
		if (end == p || (*end && !isspace((unsigned char)*end)) || !a)
			continue;
		total++;
		for (i = 0; i < nr && !(a >= r[i].lo && a < r[i].hi); i++)
			;
		if (i == nr && noncode++ < 5)
			fprintf(stderr, "frames-tracee: not code: %#llx\n", a);
	}
	printf("%lu %lu\n", total, noncode);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char *heap;

	if (argc == 3 && !strcmp(argv[1], "check"))
		return ft_check(argv[2]);
	if (argc < 3 || (strcmp(argv[1], "lib") && strcmp(argv[1], "outer") &&
			 strcmp(argv[1], "main"))) {
		fprintf(stderr, "usage: frames-tracee lib|outer|main SECONDS [MAPS] | check MAPS\n");
		return 2;
	}
	heap = malloc(64);
	if (!heap)
		return 1;
	memset(heap, 0x5a, 64);
	signal(SIGALRM, ft_alarm);
	if (argc > 3 && ft_copy_maps(argv[3]))
		return 1;
	fprintf(stderr, "frames-tracee: ready %d\n", (int)getpid());
	alarm(atoi(argv[2]));
	if (!strcmp(argv[1], "lib")) {
		while (!ft_done)
			ft_work(heap);
	} else if (!strcmp(argv[1], "main")) {
		ft_thread(NULL);
	} else {
		if (pthread_create(&t, NULL, ft_thread, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	free(heap);
	return 0;
}
