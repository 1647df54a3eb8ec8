// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, the cache (DIR, default /var/cache/codectl): one file
 * per object, named by its build id (else its device and inode), size
 * and mtime, with a header and a checksum; entries that fail the check
 * are removed; objects without CFI have an entry saying so.  Entries are
 * written under a temporary name and renamed (readers and concurrent
 * writers see whole entries or none), and trimmed to the daemon's
 * --cache-max, the least recently used first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

uint64_t fnv64(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return h;
}

/* The GNU build id of the ELF file at @fd, as hex, or "" */
static void build_id_hex(int fd, char *hex, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char note[512];
	unsigned int i, j;

	hex[0] = 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 128)
		return;
	for (i = 0; i < eh.e_phnum; i++) {
		size_t off = 0, n;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			return;
		if (ph.p_type != PT_NOTE)
			continue;
		n = ph.p_filesz < sizeof(note) ? ph.p_filesz : sizeof(note);
		if (pread(fd, note, n, ph.p_offset) != (ssize_t)n)
			continue;
		while (off + 12 <= n) {
			uint32_t nsz, dsz, type;
			size_t desc;

			memcpy(&nsz, note + off, 4);
			memcpy(&dsz, note + off + 4, 4);
			memcpy(&type, note + off + 8, 4);
			desc = off + 12 + ((nsz + 3) & ~3u);
			if (nsz > n || dsz > n || desc + dsz > n)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 &&
			    !memcmp(note + off + 12, "GNU", 4) && dsz &&
			    dsz * 2 < len) {
				for (j = 0; j < dsz; j++)
					sprintf(hex + 2 * j, "%02x",
						note[desc + j]);
				return;
			}
			off = desc + ((dsz + 3) & ~3u);
		}
	}
}

/* The cache entry's path for the file at @fd. */
void entry_path(int fd, const struct ident *id, char *buf, size_t len)
{
	char bid[130];

	build_id_hex(fd, bid, sizeof(bid));
	/*
	 * The build id and the mtime: a file changed in place (a new mtime)
	 * whose build id stayed (patched, or damaged) is another entry.
	 */
	if (bid[0])
		snprintf(buf, len, "%s/%s-%" PRId64 "-%" PRId64 ".%09u.sframe",
			 d.cache, bid, id->size, id->mtime_sec, id->mtime_nsec);
	else
		snprintf(buf, len, "%s/id-%" PRIx64 "-%" PRIu64 "-%" PRId64
			 "-%" PRId64 ".%09u.sframe", d.cache, id->dev, id->ino,
			 id->size, id->mtime_sec, id->mtime_nsec);
}

/*
 * Read the entry at @path for an object of @file_size bytes: 0 with
 * @hdr (and @sec for a section), -1 when absent, -2 when it was bad
 * (removed).
 */
int entry_read(const char *path, uint64_t file_size,
		      struct entry_hdr *hdr, void **sec)
{
	struct stat st;
	void *buf = NULL;
	int fd, ret = -2;

	*sec = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || pread(fd, hdr, sizeof(*hdr), 0) != sizeof(*hdr))
		goto bad;
	if (memcmp(hdr->magic, ENTRY_MAGIC, sizeof(hdr->magic)) ||
	    hdr->file_size != file_size ||
	    (hdr->kind != ENTRY_SECTION && hdr->kind != ENTRY_NO_CFI) ||
	    (uint64_t)st.st_size != sizeof(*hdr) + hdr->size)
		goto bad;
	if (hdr->kind == ENTRY_SECTION) {
		if (!hdr->size || hdr->size > ENTRY_MAX)
			goto bad;
		buf = malloc(hdr->size);
		if (!buf || pread(fd, buf, hdr->size, sizeof(*hdr)) !=
		    (ssize_t)hdr->size || fnv64(buf, hdr->size) != hdr->sum)
			goto bad;
	}
	/* Recently used: the cache trims by access time. */
	futimens(fd, (struct timespec[2]){ { 0, UTIME_NOW },
					    { 0, UTIME_OMIT } });
	close(fd);
	*sec = buf;
	return 0;
bad:
	free(buf);
	close(fd);
	say("cache entry %s is damaged: removed", path);
	unlink(path);
	return ret;
}

/*
 * Write an entry: a temporary file of its own, then rename(): a reader
 * sees the whole entry or none, and concurrent writers (two daemons, a
 * second host on a shared cache) each write theirs whole.
 */
int entry_write(const char *path, const struct entry_hdr *hdr,
		       const void *sec)
{
	char tmp[4200];
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s/.tmp.%d.%ld", d.cache, (int)getpid(),
		 (long)random());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ok = write(fd, hdr, sizeof(*hdr)) == sizeof(*hdr) &&
	     (!hdr->size || write(fd, sec, hdr->size) == (ssize_t)hdr->size) &&
	     fsync(fd) == 0;
	if (close(fd) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Remove temporaries a killed daemon or child left. */
void cache_clean_tmp(void)
{
	struct dirent *e;
	DIR *dir = opendir(d.cache);
	char p[4200];

	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, ".tmp.", 5)) {
			snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
			unlink(p);
			say("removed %s, left by a synthesis that did not finish",
			    p);
		}
	closedir(dir);
}

struct cache_file {
	char name[256];
	time_t atime;
	off_t size;
};

static int by_atime(const void *a, const void *b)
{
	const struct cache_file *x = a, *y = b;

	return x->atime < y->atime ? -1 : x->atime > y->atime;
}

/* Keep the cache under d.cache_max bytes: least recently used go first. */
void cache_trim(void)
{
	struct cache_file *v = NULL, *t;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *e;
	struct stat st;
	char p[4200];
	DIR *dir = opendir(d.cache);

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 256)
			continue;
		snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			t = realloc(v, cap * sizeof(*v));
			if (!t)
				break;
			v = t;
		}
		strcpy(v[n].name, e->d_name);
		v[n].atime = st.st_atime;
		v[n].size = st.st_size;
		total += st.st_size;
		n++;
	}
	closedir(dir);
	qsort(v, n, sizeof(*v), by_atime);
	for (i = 0; i < n && total > d.cache_max; i++) {
		snprintf(p, sizeof(p), "%s/%s", d.cache, v[i].name);
		if (!unlink(p)) {
			total -= v[i].size;
			say("cache over %" PRIu64 " bytes: removed %s",
			    d.cache_max, p);
		}
	}
	free(v);
}
