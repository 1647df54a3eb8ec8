// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon --prime PATH...: fills the cache with every ELF object
 * under each PATH (no module needed, nothing imported) and prints what
 * it took: objects, sections and their bytes (what imports of them all
 * would hold in the kernel), time, and the daemon's and its children's
 * peak memory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "daemon.h"

struct prime {
	unsigned long files, objects, sections, no_cfi, own, failed;
	uint64_t bytes, text;
};

static int is_elf(int fd)
{
	unsigned char m[4];

	return pread(fd, m, 4, 0) == 4 && !memcmp(m, ELFMAG, SELFMAG);
}

static void prime_file(const char *path, struct prime *p)
{
	unsigned char md[DIGEST_LEN];
	struct entry_hdr hdr;
	struct stat st;
	struct ident id;
	char entry[4200];
	void *sec;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !is_elf(fd)) {
		close(fd);
		return;
	}
	ident_of_stat(&st, &id);
	if (seen_find(&id)) {	/* a hard link to a file seen */
		close(fd);
		return;
	}
	seen_add(&id);
	p->objects++;
	if (file_sha256(fd, st.st_size, -1, md)) {
		p->failed++;
		close(fd);
		return;
	}
	entry_path(md, entry, sizeof(entry));
	err = entry_read(entry, md, st.st_size, &hdr, &sec) ?
	      synth_entry(fd, md, entry, st.st_size, path) : 0;
	if (!err && !entry_read(entry, md, st.st_size, &hdr, &sec)) {
		if (hdr.kind == ENTRY_SECTION) {
			p->sections++;
			p->bytes += hdr.size;
		} else {
			p->no_cfi++;
		}
		free(sec);
	} else if (err == EEXIST) {
		p->own++;
	} else if (err != ENOEXEC) {
		p->failed++;
	} else {
		p->objects--;	/* not an object of this machine */
	}
	close(fd);
}

static void prime_dir(const char *dir, struct prime *p)
{
	struct dirent *e;
	char path[4096];
	DIR *d = opendir(dir);

	if (!d) {
		prime_file(dir, p);
		return;
	}
	while (!stop && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			prime_dir(path, p);
		else if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) {
			p->files++;
			prime_file(path, p);
		}
	}
	closedir(d);
}

int prime(int argc, char **argv)
{
	struct rusage self, kids;
	struct prime p = {};
	double t0 = now_ms();
	int i;

	/* The children's log lines are the cache's business, not this. */
	quiet = 1;
	for (i = 0; i < argc; i++)
		prime_dir(argv[i], &p);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("files %lu\nobjects %lu\nsections %lu\nsection_bytes %" PRIu64
	       "\nno_cfi %lu\nown_sframe %lu\nfailed %lu\nseconds %.1f\n"
	       "daemon_maxrss_kb %ld\nchild_maxrss_kb %ld\n",
	       p.files, p.objects, p.sections, p.bytes, p.no_cfi, p.own,
	       p.failed, (now_ms() - t0) / 1e3, self.ru_maxrss,
	       kids.ru_maxrss);
	return 0;
}
