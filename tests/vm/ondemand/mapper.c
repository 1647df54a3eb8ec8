// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon fuzzer's process (tests/vm/daemon-fuzz.sh): maps each FILE
 * given as the dynamic loader would map its code, each executable
 * PT_LOAD (at most 16 of the first 64 program headers, whatever they
 * say) at its file offset, read and execute (never run); a file whose
 * headers give none is mapped whole from offset 0.  Prints how many
 * files it mapped, then spins in its own code until SIGTERM, so that a
 * profiler's unwinds discover the process and the module sweeps (and
 * queues for the daemon) every other executable mapping: the hostile
 * files.
 *
 *   mapper FILE...
 */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE		4096ULL
#define MAX_MAPS	16

static volatile sig_atomic_t stop;
volatile unsigned long mapper_sink;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The executable segments of the file at @fd (@size bytes): how many. */
static int map_code(int fd, unsigned long long size)
{
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	unsigned long long off, len;
	unsigned int i, n;
	int maps = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return 0;
	n = eh.e_phnum < 64 ? eh.e_phnum : 64;
	if (!n || pread(fd, ph, n * sizeof(ph[0]), eh.e_phoff) !=
	    (ssize_t)(n * sizeof(ph[0])))
		return 0;
	for (i = 0; i < n && maps < MAX_MAPS; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		off = ph[i].p_offset & ~(PAGE - 1);
		if (off >= size)
			continue;
		len = ph[i].p_filesz + (ph[i].p_offset - off);
		if (len > size - off)
			len = size - off;
		if (mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			 off) != MAP_FAILED)
			maps++;
	}
	return maps;
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
		    (map_code(fd, st.st_size) ||
		     mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			  fd, 0) != MAP_FAILED))
			mapped++;
		close(fd);
	}
	printf("mapped %d\n", mapped);
	fflush(stdout);
	while (!stop)
		mapper_sink = mapper_sink * 6364136223846793005UL + 1;
	return 0;
}
