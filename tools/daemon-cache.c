// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, the cache (DIR, default /var/cache/codectl): one file
 * per object content, named by the SHA-256 of the whole object file
 * (libcrypto's), which its header holds too, with the section's checksum;
 * entries that fail the checks are removed; objects without CFI have an
 * entry saying so.  The digest is of the file the daemon opened (the
 * process's own mapping), and a hit needs all of it to match: a
 * look-alike of another file (its build id, size and times) is another
 * entry, whatever it holds.  Entries are written under a temporary name
 * and renamed (readers and concurrent writers see whole entries or
 * none), and trimmed to the daemon's --cache-max, the least recently
 * used first.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "commands.h"
#include "daemon.h"

#define HASH_CHUNK	(1 << 20)

/*
 * The SHA-256 of the @size bytes of the file at @fd into @md, each chunk
 * also written to @out when it is not -1.  -1 with ESTALE when the file
 * is not @size bytes long any more, or another errno.
 */
int file_sha256(int fd, uint64_t size, int out, unsigned char *md)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *buf = malloc(HASH_CHUNK), extra;
	uint64_t pos = 0;
	int ret = -1, err = EIO;

	if (!ctx || !buf || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		goto out;
	while (pos < size) {
		size_t want = size - pos < HASH_CHUNK ? size - pos : HASH_CHUNK;
		ssize_t n = pread(fd, buf, want, pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? errno : ESTALE;
			goto out;
		}
		if (!EVP_DigestUpdate(ctx, buf, n) ||
		    (out >= 0 && write(out, buf, n) != n)) {
			err = errno ?: EIO;
			goto out;
		}
		pos += n;
	}
	if (pread(fd, &extra, 1, size) != 0) {
		err = ESTALE;		/* it grew */
		goto out;
	}
	if (EVP_DigestFinal_ex(ctx, md, NULL))
		ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	free(buf);
	if (ret)
		errno = err;
	return ret;
}

#define SUM_P1	0x9e3779b185ebca87ULL
#define SUM_P2	0xc2b2ae3d27d4eb4fULL

static uint64_t sum_round(uint64_t acc, uint64_t w)
{
	acc += w * SUM_P2;
	acc = (acc << 31) | (acc >> 33);
	return acc * SUM_P1;
}

/**
 * section_sum() - the checksum of a section in its cache entry
 * @p:		the section
 * @n:		its size
 * @sum:	out: DIGEST_LEN bytes
 *
 * What it guards against is damage (a bad entry is removed and
 * synthesised again): the entry is named by its object's SHA-256, in
 * root's directory, and the module checks the section at each import.
 * Not a SHA-256: it is computed on the way of every import from the
 * cache, where SHA-256 of python3.11's 457 KiB section took about 0.1 s
 * in a TCG guest, in its first profile.  Four lanes of
 * xxh64's round over little-endian 8-byte words, the tail zero-padded,
 * the size folded into each lane, each lane finalised by splitmix64's
 * mixer: 32 bytes.
 */
void section_sum(const void *p, size_t n, unsigned char *sum)
{
	uint64_t lane[4] = { SUM_P1, SUM_P2, ~SUM_P1, ~SUM_P2 }, w, x;
	const unsigned char *b = p;
	size_t i, words = n / 8;
	unsigned int j;

	for (i = 0; i < words; i++) {
		memcpy(&w, b + 8 * i, 8);
		lane[i & 3] = sum_round(lane[i & 3], w);
	}
	w = 0;
	memcpy(&w, b + 8 * words, n - 8 * words);
	lane[words & 3] = sum_round(lane[words & 3], w);
	for (j = 0; j < 4; j++) {
		x = lane[j] ^ ((uint64_t)n * (j + 1));
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
		memcpy(sum + 8 * j, &x, 8);
	}
}

/* The cache entry's path for the content whose SHA-256 is @md. */
void entry_path(const unsigned char *md, char *buf, size_t len)
{
	char hex[2 * DIGEST_LEN + 1];
	unsigned int i;

	for (i = 0; i < DIGEST_LEN; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	snprintf(buf, len, "%s/%s.sframe", d.cache, hex);
}

/*
 * Read the entry at @path for an object of @file_size bytes whose
 * SHA-256 is @md: 0 with @hdr (and @sec for a section: the section's
 * @hdr->size bytes, then its register table's @hdr->regs_size), -1 when
 * absent, -2 when it was bad (removed).
 */
int entry_read(const char *path, const unsigned char *md, uint64_t file_size,
	       struct entry_hdr *hdr, void **sec)
{
	unsigned char sum[DIGEST_LEN];
	struct stat st;
	void *buf = NULL;
	int fd, ret = -2;

	*sec = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || pread(fd, hdr, sizeof(*hdr), 0) != sizeof(*hdr))
		goto bad;
	if (!memcmp(hdr->magic, ENTRY_MAGIC_OLD, sizeof(hdr->magic)) ||
	    !memcmp(hdr->magic, ENTRY_MAGIC_OLD3, sizeof(hdr->magic)) ||
	    !memcmp(hdr->magic, ENTRY_MAGIC_OLD4, sizeof(hdr->magic))) {
		/* An earlier format or synthesiser: synthesised again. */
		close(fd);
		unlink(path);
		return -1;
	}
	if (memcmp(hdr->magic, ENTRY_MAGIC, sizeof(hdr->magic)) ||
	    hdr->file_size != file_size ||
	    memcmp(hdr->file_sha256, md, DIGEST_LEN) ||
	    (hdr->kind != ENTRY_SECTION && hdr->kind != ENTRY_NO_CFI) ||
	    hdr->size > ENTRY_MAX || hdr->regs_size > ENTRY_MAX ||
	    (uint64_t)st.st_size != sizeof(*hdr) + hdr->size + hdr->regs_size)
		goto bad;
	if (hdr->kind == ENTRY_NO_CFI && hdr->regs_size)
		goto bad;
	if (hdr->kind == ENTRY_SECTION) {
		size_t len = hdr->size + hdr->regs_size;

		if (!hdr->size)
			goto bad;
		buf = malloc(len);
		if (!buf || pread(fd, buf, len, sizeof(*hdr)) != (ssize_t)len)
			goto bad;
		section_sum(buf, len, sum);
		if (memcmp(sum, hdr->sum, DIGEST_LEN))
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
 * Write an entry (@sec: the section's and the register table's bytes,
 * as entry_read() gives them): a temporary file of its own, then rename(): a reader
 * sees the whole entry or none, and concurrent writers (two daemons, a
 * second host on a shared cache) each write theirs whole.
 */
int entry_write(const char *path, const struct entry_hdr *hdr,
		       const void *sec)
{
	char tmp[4200];
	size_t len;
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s/.tmp.%d.%ld", d.cache, (int)getpid(),
		 (long)random());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	len = hdr->size + hdr->regs_size;
	ok = write(fd, hdr, sizeof(*hdr)) == sizeof(*hdr) &&
	     (!len || write(fd, sec, len) == (ssize_t)len) && fsync(fd) == 0;
	if (close(fd) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Is @name an entry's: 64 hex digits and ".sframe"? */
static int entry_name(const char *name)
{
	return strlen(name) == 2 * DIGEST_LEN + 7 &&
	       strspn(name, "0123456789abcdef") == 2 * DIGEST_LEN &&
	       !strcmp(name + 2 * DIGEST_LEN, ".sframe");
}

/*
 * Remove temporaries a killed daemon or child left, and entries of the
 * earlier format (named by build id, size and mtime: never read again).
 */
void cache_clean(void)
{
	struct dirent *e;
	DIR *dir = opendir(d.cache);
	unsigned long old = 0;
	char p[4200];

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
		if (!strncmp(e->d_name, ".tmp.", 5)) {
			unlink(p);
			say("removed %s, left by a synthesis that did not finish",
			    p);
		} else if (e->d_name[0] != '.' && !entry_name(e->d_name) &&
			   strlen(e->d_name) > 7 &&
			   !strcmp(e->d_name + strlen(e->d_name) - 7, ".sframe")) {
			old += !unlink(p);
		}
	}
	closedir(dir);
	if (old)
		say("removed %lu entries of the cache's earlier format", old);
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

/*
 * The cache's entries, into *@v (@v NULL: not kept), and their bytes;
 * returns how many were listed.
 */
static size_t cache_list(struct cache_file **v, uint64_t *total)
{
	struct cache_file *t;
	size_t n = 0, cap = 0;
	struct dirent *e;
	struct stat st;
	char p[4200];
	DIR *dir = opendir(d.cache);

	*total = 0;
	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 256)
			continue;
		snprintf(p, sizeof(p), "%s/%s", d.cache, e->d_name);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		*total += st.st_size;
		if (!v)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			t = realloc(*v, cap * sizeof(**v));
			if (!t)
				break;
			*v = t;
		}
		strcpy((*v)[n].name, e->d_name);
		(*v)[n].atime = st.st_atime;
		(*v)[n].size = st.st_size;
		n++;
	}
	closedir(dir);
	return n;
}

/* The bytes of the cache's entries now. */
uint64_t cache_bytes(void)
{
	uint64_t total;

	cache_list(NULL, &total);
	return total;
}

/* Keep the cache under d.cache_max bytes: least recently used go first. */
void cache_trim(void)
{
	struct cache_file *v = NULL;
	uint64_t total;
	size_t n, i;
	char p[4200];

	n = cache_list(&v, &total);
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

/*
 * codectl daemon --hash FILE...: each file's SHA-256, which names its
 * cache entry, and the time the daemon takes to compute it (what every
 * object the daemon meets costs before a cache look-up).
 */
int hash_files(int argc, char **argv)
{
	unsigned char md[DIGEST_LEN];
	struct stat st;
	unsigned int j;
	double t0;
	int i, fd, ret = 0;

	for (i = 0; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			perror(argv[i]);
			ret = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		t0 = now_ms();
		if (file_sha256(fd, st.st_size, -1, md)) {
			perror(argv[i]);
			ret = 1;
			close(fd);
			continue;
		}
		t0 = now_ms() - t0;
		close(fd);
		for (j = 0; j < DIGEST_LEN; j++)
			printf("%02x", md[j]);
		printf(" %s bytes %lld ms %.2f\n", argv[i],
		       (long long)st.st_size, t0);
	}
	return ret;
}
