// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon fuzzer's process (tests/vm/daemon-fuzz.sh): maps each FILE
 * given for execution (the whole file, private, read and execute: never
 * run), prints how many it mapped, then spins in its own code until
 * SIGTERM, so that a profiler's unwinds discover it and the module sweeps
 * (and queues for the daemon) every other executable mapping: the hostile
 * files.
 *
 *   mapper FILE...
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
volatile unsigned long mapper_sink;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, fd, mapped = 0;

	signal(SIGTERM, on_term);
	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_size > 0 &&
		    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			 fd, 0) != MAP_FAILED)
			mapped++;
		close(fd);
	}
	printf("mapped %d\n", mapped);
	fflush(stdout);
	while (!stop)
		mapper_sink = mapper_sink * 6364136223846793005UL + 1;
	return 0;
}
