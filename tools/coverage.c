// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool: what covers an object file, and if nothing, why; for
 * "codectl status" (every object in use), "status PID" (a process's
 * file mappings without a registration) and "status FILE".
 *
 * In this order: its own SFrame (PT_GNU_SFRAME: discovery reads it);
 * an import the module holds for the file (debugfs "imports", by device
 * and inode), with the daemon's cache entry for its content when there
 * is one (the SHA-256 of the whole file names it, as the daemon names
 * it: daemon-cache.c); else why not: the cache entry says it has no
 * CFI, the daemon could not cover it (its state file says why: an
 * errno), the daemon has not handled it yet (queued, or not met by an
 * unwind yet), or no daemon runs.  Nothing here writes: entries are read
 * (their header), never removed or touched.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../shared/machine.h"
#include "coverage.h"
#include "daemon.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif
#define MAX_PHDRS	256
#define IMPORTS		"/sys/kernel/debug/codectl/imports"
#define DEMAND		"/sys/kernel/debug/codectl/demand"

/* "NAME value" of a small file, or -1. */
static long long value_of(const char *path, const char *name)
{
	char line[256], key[64];
	long long v, found = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2 &&
		    !strcmp(key, name)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

/* The module's imports: "MAJ:MIN INO BUILDID TEXT SFRAME SIZE PATH". */
static void load_imports(struct cov_ctx *c)
{
	char line[4352];
	unsigned int maj, min;
	unsigned long long ino, size;
	struct cov_import *t;
	FILE *f = fopen(IMPORTS, "re");

	if (!f)
		return;
	c->imports_known = 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u:%u %llu %*s %*s %*s %llu", &maj, &min,
			   &ino, &size) != 4)
			continue;
		t = realloc(c->imports, (c->nimports + 1) * sizeof(*t));
		if (!t)
			break;
		c->imports = t;
		c->imports[c->nimports++] = (struct cov_import) {
			makedev(maj, min), ino, size };
	}
	fclose(f);
}

/* The daemon's state file: its cache directory and "uncovered" lines. */
static void load_state(struct cov_ctx *c, const char *state)
{
	char line[COV_LINE_MAX + 16], (*t)[COV_LINE_MAX];
	FILE *f = fopen(state, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "cache ", 6)) {
			snprintf(c->cache, sizeof(c->cache), "%s", line + 6);
		} else if (!strncmp(line, "uncovered ", 10)) {
			t = realloc(c->uncovered,
				    (c->nuncovered + 1) * sizeof(*t));
			if (!t)
				break;
			c->uncovered = t;
			snprintf(c->uncovered[c->nuncovered++], COV_LINE_MAX,
				 "%.*s", COV_LINE_MAX - 1, line + 10);
		}
	}
	fclose(f);
}

/**
 * cov_load() - read what the module and the daemon say
 * @c:		filled
 * @state:	the daemon's state file
 */
void cov_load(struct cov_ctx *c, const char *state)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->cache, sizeof(c->cache), "%s", CACHE_DIR);
	load_imports(c);
	load_state(c, state);
	c->reader = value_of(DEMAND, "reader");
	c->pending = value_of(DEMAND, "pending");
	/* The daemon's cache code names the entries (entry_path()). */
	d.cache = c->cache;
}

void cov_free(struct cov_ctx *c)
{
	free(c->imports);
	free(c->uncovered);
	c->imports = NULL;
	c->uncovered = NULL;
}

/*
 * Has the ELF object at @fd its own SFrame (PT_GNU_SFRAME)?  1, 0, or -1
 * when it is not an ELF object of this machine (errno ENOEXEC) or cannot be read.
 */
static int own_sframe(int fd)
{
	Elf64_Phdr ph[MAX_PHDRS];
	Elf64_Ehdr eh;
	size_t len;
	unsigned int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != CODECTL_ELF_MACHINE ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh.e_phnum || eh.e_phnum > MAX_PHDRS) {
		errno = ENOEXEC;
		return -1;
	}
	len = eh.e_phnum * sizeof(ph[0]);
	if (pread(fd, ph, len, eh.e_phoff) != (ssize_t)len) {
		errno = ENOEXEC;
		return -1;
	}
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_GNU_SFRAME)
			return 1;
	return 0;
}

/*
 * The cache entry for the content @md, @size bytes: its kind
 * (ENTRY_SECTION, ENTRY_NO_CFI), or -1 when there is none or it does
 * not hold this content.  Its name (the digest in hex) into @hex.
 */
static int entry_kind(const unsigned char *md, uint64_t size, char *hex,
		      size_t hexlen)
{
	char path[4200], *base, *dot;
	struct entry_hdr hdr;
	struct stat st;
	int fd, kind = -1;

	entry_path(md, path, sizeof(path));
	base = strrchr(path, '/');
	snprintf(hex, hexlen, "%.*s", (int)hexlen - 1, base ? base + 1 : path);
	dot = strchr(hex, '.');
	if (dot)
		*dot = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    pread(fd, &hdr, sizeof(hdr), 0) == sizeof(hdr) &&
	    !memcmp(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic)) &&
	    hdr.file_size == size &&
	    !memcmp(hdr.file_sha256, md, DIGEST_LEN) &&
	    (uint64_t)st.st_size == sizeof(hdr) + hdr.size + hdr.regs_size &&
	    ((hdr.kind == ENTRY_NO_CFI && !hdr.size) ||
	     (hdr.kind == ENTRY_SECTION && hdr.size)))
		kind = hdr.kind;
	close(fd);
	return kind;
}

/* The daemon's word on @path ("PATH (why)"), or NULL. */
static const char *refused(const struct cov_ctx *c, const char *path)
{
	size_t n = strlen(path);
	unsigned int i;

	for (i = c->nuncovered; i-- > 0;)
		if (!strncmp(c->uncovered[i], path, n) &&
		    !strncmp(c->uncovered[i] + n, " (", 2))
			return c->uncovered[i] + n + 1;
	return NULL;
}

static int imported(const struct cov_ctx *c, const struct stat *st)
{
	unsigned int i;

	for (i = 0; i < c->nimports; i++)
		if (c->imports[i].dev == st->st_dev &&
		    c->imports[i].ino == st->st_ino)
			return 1;
	return 0;
}

/**
 * cov_file() - what covers the object file open at @fd, or why nothing
 * @c:		from cov_load()
 * @fd:		the file (the very one a process maps, where it can be)
 * @path:	its name, for the daemon's state file
 * @key:	name the cache entry of an imported object too (its
 *		SHA-256: a read of the whole file)
 * @v:		the verdict
 */
void cov_file(const struct cov_ctx *c, int fd, const char *path, int key,
	      struct coverage *v)
{
	unsigned char md[DIGEST_LEN];
	char hex[2 * DIGEST_LEN + 16];
	const char *why;
	struct stat st;
	int own, kind;

	v->state = COV_NO;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(v->how, sizeof(v->how), "not a regular file");
		return;
	}
	own = own_sframe(fd);
	if (own < 0) {
		snprintf(v->how, sizeof(v->how), "not an " CODECTL_MACHINE_NAME " ELF object: %s",
			 strerror(errno));
		return;
	}
	if (own) {
		v->state = COV_YES;
		snprintf(v->how, sizeof(v->how), "SFrame in the file");
		return;
	}
	if (!key && c->imports_known && imported(c, &st)) {
		v->state = COV_YES;
		snprintf(v->how, sizeof(v->how), "imported");
		return;
	}
	if (file_sha256(fd, st.st_size, -1, md)) {
		v->state = COV_UNKNOWN;
		snprintf(v->how, sizeof(v->how), "cannot read it: %s",
			 strerror(errno));
		return;
	}
	kind = entry_kind(md, st.st_size, hex, sizeof(hex));
	if (c->imports_known && imported(c, &st)) {
		v->state = COV_YES;
		if (kind == ENTRY_SECTION)
			snprintf(v->how, sizeof(v->how),
				 "imported, cache entry %s", hex);
		else
			snprintf(v->how, sizeof(v->how), "imported (codectl "
				 "import; no cache entry for its content)");
		return;
	}
	if (kind == ENTRY_NO_CFI) {
		snprintf(v->how, sizeof(v->how), "no CFI, per cache entry %s",
			 hex);
		return;
	}
	why = refused(c, path);
	if (why) {
		snprintf(v->how, sizeof(v->how), "refused %s", why);
		return;
	}
	if (!c->imports_known) {
		v->state = COV_UNKNOWN;
		snprintf(v->how, sizeof(v->how), "%s; imports not known "
			 "(needs root and debugfs)", kind == ENTRY_SECTION ?
			 "has a cache entry" : "no cache entry");
		return;
	}
	if (kind == ENTRY_SECTION)
		snprintf(v->how, sizeof(v->how), "not imported, though cache "
			 "entry %s has its rules", hex);
	else if (c->reader <= 0)
		snprintf(v->how, sizeof(v->how), "not imported, and no daemon "
			 "runs (systemctl start codectl-daemon)");
	else if (c->pending > 0)
		snprintf(v->how, sizeof(v->how), "not handled by the daemon "
			 "yet: queued, or not met by an unwind yet (%lld "
			 "records pending)", c->pending);
	else
		snprintf(v->how, sizeof(v->how), "not seen by the daemon yet: "
			 "queued at the first unwind that meets it");
}

/**
 * cov_open() - open the file process @pid maps at [@start, @end)
 * @pid:	the process
 * @start:	the mapping
 * @end:	its end
 * @ino:	the inode /proc/PID/maps names
 * @path:	its path there
 *
 * /proc/PID/map_files/ (root: the very file, in any mount namespace),
 * else @path if it is the same inode.
 *
 * Return: a descriptor, or -1 with errno set.
 */
int cov_open(pid_t pid, unsigned long long start, unsigned long long end,
	     unsigned long long ino, const char *path)
{
	char p[128];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid, start,
		 end);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && path[0] == '/')
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_ino != ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}
