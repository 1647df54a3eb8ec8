// SPDX-License-Identifier: GPL-2.0
/*
 * preload-test: what LD_PRELOAD=libcodectl-preload.so registers in a
 * program that does not link libcodectl, seen through raw QUERYs (run
 * with discover=N, so that nothing else registers).
 *
 *   LD_PRELOAD=.../libcodectl-preload.so preload-test
 *
 * Checks: at start, the program and libc are registered (libc with a
 * synthesised section); a dlopen()ed object without SFrame gets one
 * too, a second dlopen() and one dlclose() keep it; an object with its
 * own SFrame section is registered with it.  Without the preload module every check fails.  TAP-like output,
 * ending with "N passed, N failed".
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/codectl.h>

static int fd = -1, n, failed;
static char dir[PATH_MAX];

static void check(int ok, const char *what)
{
	n++;
	failed += !ok;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", n, what);
}

/* The origin of the registration covering @addr, or -errno. */
static long origin_at(const void *addr, int *with_sframe)
{
	struct codectl_query_info q;
	struct codectl_args a = {
		.info = (uintptr_t)&q, .info_size = CODECTL_QUERY_INFO_SIZE_VER1,
	};

	memset(&q, 0, sizeof(q));
	q.addr = (uintptr_t)addr;
	if (ioctl(fd, CODECTL_IOC_QUERY, &a))
		return -errno;
	if ((uintptr_t)addr < q.text_start)
		return -ENOENT;
	if (with_sframe)
		*with_sframe = q.sframe_start != 0;
	return q.origin;
}

static void *open_lib(const char *name, const char *sym, void **fn)
{
	char path[PATH_MAX + 64];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW);
	*fn = h ? dlsym(h, sym) : NULL;
	if (!h || !*fn)
		printf("# dlopen %s: %s\n", path, dlerror());
	return h;
}

int main(void)
{
	void *h1, *h2, *hp, *fn, *pfn;
	char *slash;
	int sf = 0;
	long o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!realpath("/proc/self/exe", dir))
		return 2;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("# %s: %m\n0 passed, 1 failed\n", CODECTL_DEVICE);
		return 1;
	}

	o = origin_at((void *)main, &sf);
	check(o == CODECTL_ORIGIN_REGISTERED && sf,
	      "the program is registered at start, with its SFrame");
	o = origin_at((void *)qsort, &sf);
	check(o == (CODECTL_ORIGIN_REGISTERED | CODECTL_ORIGIN_SYNTH) && sf,
	      "libc is registered at start, with a synthesised section");

	h1 = open_lib("libdiscnosf.so", "nosf_entry", &fn);
	o = fn ? origin_at(fn, &sf) : -ENOENT;
	check(o == (CODECTL_ORIGIN_REGISTERED | CODECTL_ORIGIN_SYNTH) && sf,
	      "dlopen: an object without SFrame, registered with a synthesised one");
	h2 = open_lib("libdiscnosf.so", "nosf_entry", &fn);
	if (h2)
		dlclose(h2);
	o = fn ? origin_at(fn, NULL) : -ENOENT;
	check(h2 == h1 && o > 0,
	      "opened twice and closed once: still registered");
	/*
	 * The last dlclose() unmaps it, which drops the registration
	 * anyway: guest-suite.sh checks the preload's own unregistration
	 * in its CODECTL_DEBUG output.
	 */
	if (h1)
		dlclose(h1);

	hp = open_lib("libdiscplug.so", "plug_entry", &pfn);
	o = pfn ? origin_at(pfn, &sf) : -ENOENT;
	check(o == CODECTL_ORIGIN_REGISTERED && sf,
	      "dlopen: an object with SFrame, registered with its own");
	if (hp)
		dlclose(hp);

	printf("%d passed, %d failed\n", n - failed, failed);
	return failed != 0;
}
