// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-fork's workload: a shell loop that forks and execs a program
 * N times, timed.
 *
 *   bench-fork N PROGRAM
 *
 * Runs  sh -c 'i=0; while [ $i -lt N ]; do PROGRAM; i=$((i + 1)); done'
 * and prints "bench-fork: NS ns" (monotonic time of the whole loop).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	char loop[512];
	int status;
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-fork N PROGRAM\n");
		return 2;
	}
	snprintf(loop, sizeof(loop),
		 "i=0; while [ $i -lt %d ]; do %s; i=$((i + 1)); done",
		 atoi(argv[1]), argv[2]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", loop, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
		fprintf(stderr, "bench-fork: the loop failed\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("bench-fork: %lld ns\n",
	       (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return 0;
}
