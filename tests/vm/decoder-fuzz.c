// SPDX-License-Identifier: GPL-2.0
/*
 * decoder-fuzz: the kernel's SFrame decoder against the user-space build
 * of the same decoder (shared/sframe.c), on mutated sections.
 *
 *   decoder-fuzz [-n EXECS] [-j PROCS] [-s SEED] [-t SECONDS] CORPUS...
 *
 * CORPUS: files or directories of fuzz-sframe inputs (a 4-byte prefix,
 * then a section: tests/sframe/fuzz/corpus/, the seeds of make-seeds.sh).
 * Each execution takes a corpus entry, applies 1 to 8 random mutations
 * (one half of the time, two a quarter of the time, ...: bit flips,
 * interesting values of 1, 2, 4 and 8 bytes, mostly in the header,
 * truncation, extension, a splice from another entry), places the
 * result so that it ends at a PROT_NONE page, and asks the module
 * (CODECTL_CHECK_SFRAME: header, ABI, every FDE and FRE, read from user
 * memory through the module's bounded reader), with no text range or a
 * random one.  The user-space decoder must give the same verdict: the
 * same error code, and for a header that parses the same version and
 * counts.  A read past the section's end faults in the kernel (EFAULT),
 * so an over-read is a mismatch too.  No coverage feedback: a random
 * mutational fuzzer of the kernel's decoder, for the debug kernel's
 * checkers (KASAN, UBSAN) to watch.
 *
 * -n  executions in all (default 1000000), split between -j processes
 *     (default 2); -t stops earlier after SECONDS (default: no limit)
 * -s  seed (default: from the clock); a run is reproducible with -j 1
 *
 * Output: TAP, then "N passed, N failed"; the first
 * mismatches are printed with their seed and execution number, and the
 * mutated section in hex (at most 256 bytes).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/codectl.h>

#include "sframe.h"

#define PREFIX		4	/* fuzz-sframe's input prefix */
#define MAX_SECTION	(1 << 20)
#define MAX_PROCS	16
#define MAX_REPORTS	5
/*
 * The SFrame ABI of the machine, the module's: sections of another ABI it
 * refuses (E_ABI).  The corpus is x86-64's: on another machine its
 * entries are given this machine's ABI, so that the kernel's decoder is
 * fuzzed past the header there too.
 */
#if defined(__aarch64__)
#define NATIVE_ABI	SFRAME_ABI_AARCH64_LE
#else
#define NATIVE_ABI	SFRAME_ABI_AMD64_LE
#endif
#define ABI_OFFSET	4	/* the header's abi_arch, after the preamble */

/* The module's bound of FREs per function (codectl(4)). */
#define KERNEL_MAX_FRES	4096

struct entry {
	uint8_t *data;
	size_t size;
};

static struct entry *corpus;
static size_t n_corpus, corpus_cap;

/* Results of one process, in memory shared with the parent. */
struct result {
	unsigned long execs, fails, valid, efault, einval;
	unsigned long by_err[64];
};

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

static void add_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= PREFIX ||
	    st.st_size > MAX_SECTION + PREFIX) {
		if (fd >= 0)
			close(fd);
		return;
	}
	buf = malloc(st.st_size);
	if (!buf || read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		close(fd);
		return;
	}
	close(fd);
	if (n_corpus == corpus_cap) {
		corpus_cap = corpus_cap ? 2 * corpus_cap : 256;
		corpus = realloc(corpus, corpus_cap * sizeof(*corpus));
		if (!corpus) {
			perror("realloc");
			exit(1);
		}
	}
	if (st.st_size > PREFIX + ABI_OFFSET &&
	    buf[PREFIX + ABI_OFFSET] == SFRAME_ABI_AMD64_LE)
		buf[PREFIX + ABI_OFFSET] = NATIVE_ABI;
	corpus[n_corpus].data = buf + PREFIX;
	corpus[n_corpus].size = st.st_size - PREFIX;
	n_corpus++;
}

static void add_path(const char *path)
{
	struct dirent *de;
	char name[4096];
	DIR *d = opendir(path);

	if (!d) {
		add_file(path);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s/%s", path, de->d_name);
		add_file(name);
	}
	closedir(d);
}

static const uint64_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 0x10, 0x1f, 0x20, 0x40, 0x7f, 0x80, 0xff, 0x100,
	0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
	~0ull, ~0ull - 1,
};

/* One mutation of buf[0, *size), which has room for MAX_SECTION bytes. */
static void mutate_once(uint8_t *buf, size_t *size)
{
	size_t n = *size, pos, len;
	/* Mostly the header (28 to 32 bytes) and the first records. */
	size_t span = below(4) ? (n < 64 ? n : 64) : n;
	const struct entry *e;
	uint64_t v;
	int w;

	pos = below(span);
	switch (below(8)) {
	case 0:
		buf[pos] ^= 1u << below(8);
		break;
	case 1:
		buf[pos] = next();
		break;
	case 2:
	case 3:
		w = 1 << below(4);
		if (pos + w > n)
			break;
		v = interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
		if (below(2))
			v += below(5) - 2;
		memcpy(buf + pos, &v, w);	/* little endian: the low bytes */
		break;
	case 4:
		if (n > 1)
			*size = 1 + below(n - 1);
		break;
	case 5:
		len = 1 + below(64);
		if (n + len <= MAX_SECTION) {
			for (size_t i = 0; i < len; i++)
				buf[n + i] = below(4) ? 0 : next();
			*size = n + len;
		}
		break;
	case 6:
		e = &corpus[below(n_corpus)];
		len = 1 + below(e->size < 256 ? e->size : 256);
		if (pos + len <= n)
			memcpy(buf + pos, e->data + below(e->size - len + 1), len);
		break;
	case 7:
		/* A copy of one part of the section over another. */
		len = 1 + below(32);
		if (len < n) {
			size_t from = below(n - len + 1), to = below(n - len + 1);

			memmove(buf + to, buf + from, len);
		}
		break;
	}
}

/*
 * A buffer of MAX_SECTION bytes followed by a PROT_NONE page: a section of
 * @size bytes is placed to end at that page.
 */
static uint8_t *area;
static long page;

static uint8_t *place(const uint8_t *src, size_t size)
{
	uint8_t *p = area + MAX_SECTION - size;

	memcpy(p, src, size);
	return p;
}

/* What the module should say, from the user-space decoder. */
static void expect(const uint8_t *sec_mem, size_t size, uint64_t ts,
		   uint64_t te, struct codectl_sframe_check *want)
{
	struct sframe_sec sec;
	int err;

	memset(want, 0, sizeof(*want));
	err = sframe_init(&sec, (uintptr_t)sec_mem, size, sec_mem, NULL, NULL);
	if (!err) {
		want->version = sec.hdr.version;
		want->num_fdes = sec.hdr.num_fdes;
		want->num_fres = sec.hdr.num_fres;
		if (sec.hdr.abi != NATIVE_ABI) {
			err = SFRAME_E_ABI;
		} else {
			sec.text_start = ts;
			sec.text_end = te;
			sec.max_fres = KERNEL_MAX_FRES;
			err = sframe_validate(&sec);
		}
	}
	want->error = err;
}

/* One write, so that the processes' reports do not interleave. */
static void report(uint64_t seed, unsigned long exec, const uint8_t *p,
		   size_t size, const char *why)
{
	char buf[2048];
	size_t i;
	int n;

	n = snprintf(buf, sizeof(buf), "# MISMATCH seed %#llx exec %lu, %zu bytes: %s\n#  ",
		     (unsigned long long)seed, exec, size, why);
	for (i = 0; i < size && i < 256 && n < (int)sizeof(buf) - 8; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%02x%s", p[i],
			      (i + 1) % 32 ? "" : "\n#  ");
	n += snprintf(buf + n, sizeof(buf) - n, "\n");
	fflush(stdout);
	if (write(STDOUT_FILENO, buf, n) != n)
		perror("write");
}

static void run(int fd, uint64_t seed, unsigned long execs, time_t deadline,
		struct result *r)
{
	static uint8_t work[MAX_SECTION];
	unsigned long i;
	int reports = 0;

	rng = seed ? seed : 1;
	for (i = 0; i < execs; i++) {
		const struct entry *e = &corpus[below(n_corpus)];
		struct codectl_sframe_check c, want;
		struct codectl_args a = {
			.info = (uintptr_t)&c, .info_size = sizeof(c),
		};
		size_t size = e->size;
		uint64_t ts = 0, te = 0;
		char why[256];
		uint8_t *p;
		int k, m, rc;

		if (!(i & 1023) && deadline && time(NULL) >= deadline)
			break;
		memcpy(work, e->data, size);
		/* 1 mutation half of the time, 2 a quarter, ... at most 8. */
		m = 1 + __builtin_ctzll(next() | 0x80);
		for (k = 0; k < m; k++)
			mutate_once(work, &size);
		p = place(work, size);
		if (!below(4)) {
			ts = (uintptr_t)p - below(1 << 20);
			te = ts + 1 + below(1 << 22);
		}
		expect(p, size, ts, te, &want);
		memset(&c, 0, sizeof(c));
		c.sframe_start = (uintptr_t)p;
		c.sframe_end = (uintptr_t)p + size;
		c.text_start = ts;
		c.text_end = te;
		rc = ioctl(fd, CODECTL_IOC_CHECK_SFRAME, &a) ? errno : 0;
		r->execs++;
		why[0] = 0;
		if (rc == EFAULT) {
			r->efault++;
			snprintf(why, sizeof(why),
				 "EFAULT: the module read outside the section (user verdict %u)",
				 want.error);
		} else if (rc) {
			r->einval++;
			snprintf(why, sizeof(why), "CHECK_SFRAME failed: %s",
				 strerror(rc));
		} else if (c.error != want.error || c.version != want.version ||
			   c.num_fdes != want.num_fdes ||
			   c.num_fres != want.num_fres) {
			snprintf(why, sizeof(why),
				 "kernel: error %u v%u %u FDEs %u FREs, user space: error %u v%u %u FDEs %u FREs (text %#llx-%#llx)",
				 c.error, c.version, c.num_fdes, c.num_fres,
				 want.error, want.version, want.num_fdes,
				 want.num_fres, (unsigned long long)ts,
				 (unsigned long long)te);
		}
		if (why[0]) {
			r->fails++;
			if (reports++ < MAX_REPORTS)
				report(seed, i, p, size, why);
			continue;
		}
		if (!c.error)
			r->valid++;
		r->by_err[c.error < 64 ? c.error : 63]++;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: decoder-fuzz [-n EXECS] [-j PROCS] [-s SEED] [-t SECONDS] CORPUS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long execs = 1000000, total = 0, fails = 0, valid = 0;
	unsigned long by_err[64] = { 0 };
	int procs = 2, secs = 0, opt, fd, i, pass = 0, fail = 0, st;
	uint64_t seed = 0;
	struct result *res;
	struct timespec t0, t1;
	time_t deadline = 0;
	double dt;

	while ((opt = getopt(argc, argv, "n:j:s:t:")) != -1) {
		switch (opt) {
		case 'n': execs = strtoul(optarg, NULL, 0); break;
		case 'j': procs = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': secs = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || procs < 1 || procs > MAX_PROCS)
		usage();
	for (i = optind; i < argc; i++)
		add_path(argv[i]);
	if (!seed) {
		clock_gettime(CLOCK_REALTIME, &t0);
		seed = (uint64_t)t0.tv_sec << 20 ^ t0.tv_nsec;
	}
	printf("TAP version 13\n# decoder-fuzz: seed %#llx, %d processes, %lu executions, %zu corpus entries (redo with -s %#llx -j %d -n %lu)\n",
	       (unsigned long long)seed, procs, execs, n_corpus,
	       (unsigned long long)seed, procs, execs);
	fflush(stdout);
	if (!n_corpus) {
		printf("not ok 1 - a corpus to start from\n");
		printf("0 passed, 1 failed\n");
		return 1;
	}
	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("not ok 1 - open %s: %s\n", CODECTL_DEVICE, strerror(errno));
		printf("0 passed, 1 failed\n");
		return 1;
	}
	page = sysconf(_SC_PAGESIZE);
	area = mmap(NULL, MAX_SECTION + page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	res = mmap(NULL, MAX_PROCS * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || res == MAP_FAILED ||
	    mprotect(area + MAX_SECTION, page, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	if (secs)
		deadline = time(NULL) + secs;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			run(fd, seed + i * 0x9e3779b97f4a7c15ull,
			    execs / procs + (i < (int)(execs % procs)),
			    deadline, &res[i]);
			_exit(0);
		}
	}
	for (i = 0; i < procs; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("not ok - a fuzzing process exited abnormally (status %#x)\n",
			       st);
			fail++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (i = 0; i < procs; i++) {
		total += res[i].execs;
		fails += res[i].fails;
		valid += res[i].valid;
		for (int e = 0; e < 64; e++)
			by_err[e] += res[i].by_err[e];
	}
	printf("# %lu executions in %.1f s (%.0f/s), %lu sections valid\n",
	       total, dt, dt > 0 ? total / dt : 0.0, valid);
	printf("# verdicts:");
	for (i = 0; i < 64; i++)
		if (by_err[i])
			printf(" %s %lu;", i < 63 ? sframe_strerror(i) : "other",
			       by_err[i]);
	printf("\n");
	if (fails) {
		printf("not ok - kernel and user-space decoder disagree on %lu of %lu sections\n",
		       fails, total);
		fail++;
	} else {
		printf("ok - kernel and user-space decoder agree on %lu mutated sections\n",
		       total);
		pass++;
	}
	/* Enough of them reach deep into the section to be worth the name. */
	if (valid * 500 >= total || total < 1000) {
		printf("ok - %lu of %lu mutated sections valid (>= 0.2%%)\n",
		       valid, total);
		pass++;
	} else {
		printf("not ok - only %lu of %lu mutated sections valid: the mutations break every header\n",
		       valid, total);
		fail++;
	}
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
