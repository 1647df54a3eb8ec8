// SPDX-License-Identifier: GPL-2.0
/*
 * The codectl tool, "codectl import": SFrame synthesised from .eh_frame
 * for object files, imported system-wide (codectl_import_file(), CODECTL_IOC_IMPORT).
 *
 *   codectl import FILE...        import each FILE
 *   codectl import --system       every library /etc/ld.so.cache lists,
 *                                 and the dynamic loader
 *   codectl import --remove FILE... drop their imports
 *   codectl import --clear        drop every import
 *   codectl import --list         what the module holds (debugfs)
 *
 * Objects with their own SFrame section, objects without CFI and sections
 * no address space could hold (EFBIG: larger than max_bytes or
 * import_max_bytes) are skipped, not failures: discovery handles the
 * first, nothing can help the others.  Any other failure of an object is
 * the exit status 1 (the imports made are kept): what an administrator
 * should look at (the import budget full, a file being written).  Exit
 * status: codectl(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <codectl.h>

#include "../shared/machine.h"
#include "commands.h"

#define LD_SO_CACHE	"/etc/ld.so.cache"
#define IMPORTS_PATH	"/sys/kernel/debug/codectl/imports"
/* Not in ld.so.cache: the loader itself. */
#define LD_SO		CODECTL_LD_SO

/* glibc's ld.so.cache, the format of glibc 2.32 and later. */
#define CACHE_MAGIC	"glibc-ld.so.cache1.1"
#define CACHE_HDR	48	/* magic, nlibs, len_strings, flags, ... */
#define CACHE_ENTRY	24	/* flags, key, value, osversion, hwcap */
#define CACHE_ARCH_MASK	0xff00	/* of an entry's flags: the architecture */
#define CACHE_ARCH	CODECTL_LD_CACHE_ARCH

struct import_count {
	unsigned int imported, own_sframe, no_cfi, too_large, failed;
	int last_err;
	double ms;
};

struct seen {
	dev_t dev;
	ino_t ino;
};

/* Import one file; @quiet_skip: say nothing of skipped objects. */
static int import_one(const char *path, struct import_count *c,
		       int quiet_skip)
{
	struct codectl_synth_stats st;
	double t0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "codectl: %s: %s\n", path, strerror(errno));
		c->failed++;
		return errno;
	}
	memset(&st, 0, sizeof(st));
	t0 = now_ms();
	if (!codectl_import_file(fd, 0, &st)) {
		double ms = now_ms() - t0;

		c->imported++;
		c->ms += ms;
		printf("imported %s: %u FDEs, %u FREs, %.1f%% of its code, "
		       "%.1f ms\n", path, st.sframe_fdes, st.sframe_fres,
		       st.text_bytes ? 100.0 * st.covered_bytes /
		       st.text_bytes : 0.0, ms);
		close(fd);
		return 0;
	}
	err = errno;
	close(fd);
	if (err == EEXIST) {
		c->own_sframe++;
		if (!quiet_skip)
			printf("skipped %s: it has its own SFrame section\n",
			       path);
		return 0;
	}
	if (err == EFBIG) {
		/* A limit of the module's, not a fault of the file's. */
		c->too_large++;
		printf("skipped %s: its section is larger than the module can hold (max_bytes, import_max_bytes)\n",
		       path);
		return 0;
	}
	if (err == ENOENT || err == ENODATA) {
		c->no_cfi++;
		if (!quiet_skip)
			printf("skipped %s: no CFI SFrame can express\n", path);
		return 0;
	}
	c->failed++;
	fprintf(stderr, "codectl: import %s: %s%s\n", path, strerror(err),
		err == ENODEV ? " (is the codectl module loaded?)" :
		err == EPERM ? " (needs CAP_SYS_ADMIN)" :
		err == ENOTTY ? " (the loaded module has no imports)" : "");
	return err;
}

/* Errors every further import would meet too. */
static int import_hopeless(int err)
{
	return err == ENODEV || err == EPERM || err == ENOTTY;
}

/* Append @path to @paths unless its file is there already. */
static int add_unique(char ***paths, struct seen **seen, size_t *n,
		      const char *path)
{
	struct stat sb;
	size_t i;
	void *p;

	if (stat(path, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	for (i = 0; i < *n; i++)
		if ((*seen)[i].dev == sb.st_dev && (*seen)[i].ino == sb.st_ino)
			return 0;
	p = realloc(*paths, (*n + 1) * sizeof(**paths));
	if (!p)
		return -1;
	*paths = p;
	p = realloc(*seen, (*n + 1) * sizeof(**seen));
	if (!p)
		return -1;
	*seen = p;
	(*paths)[*n] = strdup(path);
	if (!(*paths)[*n])
		return -1;
	(*seen)[*n].dev = sb.st_dev;
	(*seen)[*n].ino = sb.st_ino;
	(*n)++;
	return 0;
}

static unsigned char *read_file(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0;
	ssize_t r;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (*len == cap) {
			void *p = realloc(buf, cap ? cap * 2 : 65536);

			if (!p)
				break;
			buf = p;
			cap = cap ? cap * 2 : 65536;
		}
		r = read(fd, buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0) {
				close(fd);
				return buf;
			}
			break;
		}
		*len += (size_t)r;
	}
	close(fd);
	free(buf);
	return NULL;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The libraries of ld.so.cache (new format), each file once, then the
 * loader.  Returns the number of paths, or -1.
 */
static long system_paths(char ***paths)
{
	struct seen *seen = NULL;
	unsigned char *cache;
	uint32_t nlibs, i, value;
	size_t len, n = 0;

	*paths = NULL;
	cache = read_file(LD_SO_CACHE, &len);
	if (!cache) {
		fprintf(stderr, "codectl: %s: %s\n", LD_SO_CACHE,
			strerror(errno));
		return -1;
	}
	if (len < CACHE_HDR || memcmp(cache, CACHE_MAGIC, 20)) {
		fprintf(stderr, "codectl: %s: not in glibc's format %s\n",
			LD_SO_CACHE, CACHE_MAGIC);
		free(cache);
		return -1;
	}
	nlibs = get32(cache + 20);
	if (nlibs > (len - CACHE_HDR) / CACHE_ENTRY) {
		fprintf(stderr, "codectl: %s: truncated\n", LD_SO_CACHE);
		free(cache);
		return -1;
	}
	for (i = 0; i < nlibs; i++) {
		const unsigned char *e = cache + CACHE_HDR + i * CACHE_ENTRY;

		if ((get32(e) & CACHE_ARCH_MASK) != CACHE_ARCH)
			continue;	/* another ABI: i386, x32, ... */
		value = get32(e + 8);
		/* String offsets are from the header; NUL-terminated. */
		if (value >= len || !memchr(cache + value, 0, len - value))
			continue;
		if (add_unique(paths, &seen, &n, (const char *)cache + value))
			goto nomem;
	}
	if (add_unique(paths, &seen, &n, LD_SO))
		goto nomem;
	free(cache);
	free(seen);
	return (long)n;
nomem:
	fprintf(stderr, "codectl: out of memory\n");
	free(cache);
	free(seen);
	return -1;
}

static int import_system(void)
{
	struct import_count c = {};
	char **paths;
	long n, i;
	double t0 = now_ms();

	n = system_paths(&paths);
	if (n < 0)
		return 1;
	for (i = 0; i < n; i++) {
		if (!import_hopeless(c.failed ? c.last_err : 0))
			c.last_err = import_one(paths[i], &c, 1) ?: c.last_err;
		free(paths[i]);
	}
	free(paths);
	printf("codectl import --system: %u imported, %u with their own "
	       "SFrame, %u without CFI, %u too large, %u failed, of %ld "
	       "objects in %.0f ms\n",
	       c.imported, c.own_sframe, c.no_cfi, c.too_large, c.failed, n,
	       now_ms() - t0);
	return c.failed ? 1 : 0;
}

static int import_remove(int argc, char **argv)
{
	int i, fd, ret = 0;

	for (i = 0; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || codectl_import_remove(fd)) {
			fprintf(stderr, "codectl: remove %s: %s\n", argv[i],
				strerror(errno));
			ret = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

static int import_list(void)
{
	unsigned char *buf;
	size_t len;

	buf = read_file(IMPORTS_PATH, &len);
	if (!buf) {
		fprintf(stderr, "codectl: %s: %s (debugfs mounted, module "
			"loaded, root?)\n", IMPORTS_PATH, strerror(errno));
		return 1;
	}
	fwrite(buf, 1, len, stdout);
	free(buf);
	return 0;
}

/**
 * cmd_import() - codectl import
 * @argc:	arguments after "import"
 * @argv:	them
 *
 * Return: the exit status.
 */
int cmd_import(int argc, char **argv)
{
	struct import_count c = {};
	int i;

	if (argc == 1 && !strcmp(argv[0], "--system"))
		return import_system();
	if (argc == 1 && !strcmp(argv[0], "--clear")) {
		if (codectl_import_clear()) {
			fprintf(stderr, "codectl: clear: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	}
	if (argc == 1 && !strcmp(argv[0], "--list"))
		return import_list();
	if (argc > 1 && !strcmp(argv[0], "--remove"))
		return import_remove(argc - 1, argv + 1);
	if (argc < 1 || argv[0][0] == '-') {
		fputs("usage: codectl import FILE... | --system | --remove "
		      "FILE... | --clear | --list\n", stderr);
		return 2;
	}
	for (i = 0; i < argc && !import_hopeless(c.last_err); i++)
		c.last_err = import_one(argv[i], &c, 0) ?: c.last_err;
	return c.failed ? 1 : 0;
}
