// SPDX-License-Identifier: GPL-2.0
/*
 * Discovery in the guest: a --gsframe program built without frame
 * pointers that does NOT link libcodectl and registers nothing, with a
 * dlopen'd --gsframe plugin (libdiscplug.so) and an object without SFrame
 * (libdiscnosf.so).  The module must find their SFrame sections itself
 * (module parameter discover): the first unwind falls back (and asks for
 * a discovery), the next one is complete, through the plugin.
 *
 *   disc-test [-v] [TEST...]    the tests (all by default, but
 *                               "imported", which needs `codectl import
 *                               libdiscnosf.so` first); exit status 1
 *                               on failure, so with discover=0 it fails
 *   disc-test --hold N          N processes of this binary, each after its
 *                               first two unwinds, print "# held", wait
 *                               for stdin to close (the sharing test)
 *   disc-test --fuzz N SEED     N corrupted copies of the plugin mapped
 *                               executable and unwound (hostile input)
 *   disc-test --corrupt N SEED DIR  N corrupted copies of libdiscnosf.so
 *                               (no SFrame, CFI in .eh_frame) written to
 *                               DIR/0 .. DIR/N-1, for codectl import:
 *                               headers, segments, .eh_frame's CIEs and
 *                               FDEs, counts, truncation (hostile input)
 *   disc-test --late            a process that runs before the module is
 *                               loaded: unwinds once stdin has a line
 *   disc-test --late-import     libdiscnosf.so discovered without SFrame;
 *                               once stdin has a line (imported meanwhile)
 *                               its unwinds must use the import
 *   disc-test --exec-check      (internal: the exec test's new image)
 *
 * Output is TAP-like, ending with "N passed, N failed".
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/codectl.h>

#define NOIPA		__attribute__((noipa))
#define ULL(x)		((unsigned long long)(x))
#define MAXF		64

static int fd = -1;
static int verbose;
static int failed;
static char dir[PATH_MAX];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed++;
}

/* ---- unwinding -------------------------------------------------------- */

struct trace {
	uint64_t ips[MAXF];
	uint8_t methods[MAXF];
	uint32_t nr, stop;
};

/* The ioctl with our own syscall instruction: libc's wrapper has no SFrame. */
NOIPA long d_unwind(struct codectl_unwind_args *a)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ioctl), "D"((long)fd),
			   "S"((long)CODECTL_IOC_UNWIND), "d"(a)
			 : "rcx", "r11", "memory");
	return ret;
}

static struct trace *cur;

NOIPA int d_cb(int x)
{
	struct codectl_unwind_args a;
	long r;

	memset(&a, 0, sizeof(a));
	a.ips = (uintptr_t)cur->ips;
	a.methods = (uintptr_t)cur->methods;
	a.max_frames = MAXF;
	r = d_unwind(&a);
	if (r)
		fail("CODECTL_IOC_UNWIND: %s", strerror((int)-r));
	cur->nr = a.nr;
	cur->stop = a.stop;
	return x + (int)r;
}

typedef int (*plug_fn)(int (*)(int), int);

NOIPA int d_mid(plug_fn fn, int x)
{
	int r = fn(d_cb, x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}

NOIPA int d_outer(plug_fn fn, int x)
{
	int r = d_mid(fn, x + 1);

	__asm__ volatile("" : "+r"(r) : : "memory");
	return r;
}

/* [lo, hi) of the function at @fn (dynamic symbol sizes). */
static int func_range(const void *fn, uint64_t *lo, uint64_t *hi)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !info.dli_saddr || !sym->st_size)
		return -1;
	*lo = (uintptr_t)info.dli_saddr;
	*hi = *lo + sym->st_size;
	return 0;
}

static void dump(const char *what, const struct trace *t)
{
	uint32_t i;

	printf("# %s: %u frames, stop %u\n", what, t->nr, t->stop);
	for (i = 0; i < t->nr && i < 12; i++) {
		Dl_info info;
		const char *s = "?";

		if (dladdr((void *)(uintptr_t)(t->ips[i] - (i ? 1 : 0)), &info) &&
		    info.dli_sname)
			s = info.dli_sname;
		printf("#   %2u %#llx %s method %u\n", i, ULL(t->ips[i]), s,
		       t->methods[i]);
	}
}

/*
 * Is @t complete through the plugin: frames 1-5 are d_cb, @mid, @entry,
 * d_mid, d_outer, each found with SFrame?
 */
static int complete(const struct trace *t, void *entry, void *mid)
{
	const void *want[5] = { (void *)d_cb, mid, entry, (void *)d_mid,
				(void *)d_outer };
	uint64_t lo, hi;
	int i;

	if (t->nr < 6)
		return 0;
	for (i = 0; i < 5; i++) {
		if (func_range(want[i], &lo, &hi))
			return 0;
		if (t->ips[i + 1] - 1 < lo || t->ips[i + 1] - 1 >= hi ||
		    t->methods[i + 1] != CODECTL_FRAME_SFRAME)
			return 0;
	}
	return 1;
}

static void *plug_open(const char *name, void **entry, void **mid)
{
	char path[PATH_MAX + 32];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fail("dlopen %s: %s", path, dlerror());
		return NULL;
	}
	*entry = dlsym(h, "plug_entry");
	*mid = dlsym(h, "plug_mid");
	if (!*entry || !*mid) {
		fail("%s: no plug_entry/plug_mid", path);
		dlclose(h);
		return NULL;
	}
	return h;
}

/* Unwind through the plugin until complete: the unwinds it took, or 0. */
static int unwinds_to_complete(void *entry, void *mid, int max)
{
	struct trace t;
	int i;

	for (i = 1; i <= max; i++) {
		memset(&t, 0, sizeof(t));
		cur = &t;
		d_outer((plug_fn)entry, i);
		if (verbose)
			dump("unwind", &t);
		if (complete(&t, entry, mid))
			return i;
	}
	dump("last unwind", &t);
	return 0;
}

/* ---- QUERY -------------------------------------------------------------- */

static int query(uint64_t addr, struct codectl_query_info *q, char *path,
		 size_t len)
{
	struct codectl_args a = {
		.info = (uintptr_t)q, .info_size = sizeof(*q),
	};

	memset(q, 0, sizeof(*q));
	q->addr = addr;
	q->pathname = (uintptr_t)path;
	q->pathname_len = len;
	if (ioctl(fd, CODECTL_IOC_QUERY, &a))
		return -errno;
	return addr >= q->text_start ? 0 : -ENOENT;
}

/* The registration covering @fn must be DISCOVERED, with SFrame iff @sf. */
static void expect_discovered(const char *what, const void *fn, int sf,
			      const char *name)
{
	struct codectl_query_info q;
	char path[PATH_MAX];
	int rc;

	path[0] = '\0';
	rc = query((uintptr_t)fn, &q, path, sizeof(path));
	if (rc) {
		fail("%s: QUERY at %p: %s", what, fn, strerror(-rc));
		return;
	}
	if (q.origin != CODECTL_ORIGIN_DISCOVERED)
		fail("%s: origin %#x, expected DISCOVERED", what, q.origin);
	if (!!q.sframe_start != !!sf)
		fail("%s: sframe [%#llx,%#llx), expected %s", what,
		     ULL(q.sframe_start), ULL(q.sframe_end),
		     sf ? "a section" : "none");
	if (name && !strstr(path, name))
		fail("%s: pathname '%s', expected ...%s", what, path, name);
	if (sf && !q.build_id_len)
		fail("%s: no build id", what);
}

/* ---- tests -------------------------------------------------------------- */

static int t_first_then_complete(void)
{
	void *h, *entry, *mid;
	int n;

	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 1;
	n = unwinds_to_complete(entry, mid, 3);
	if (n != 2)
		fail("stacks through the plugin complete after %d unwinds, expected 2 (the first falls back)",
		     n);
	expect_discovered("the program", (void *)d_cb, 1, "disc-test");
	expect_discovered("the plugin", entry, 1, "libdiscplug.so");
	dlclose(h);
	return 0;
}

static int t_no_sframe(void)
{
	void *h, *fn;
	struct trace t;

	h = dlopen(NULL, RTLD_NOW);
	(void)h;
	{
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/libdiscnosf.so", dir);
		h = dlopen(path, RTLD_NOW);
	}
	if (!h) {
		fail("dlopen libdiscnosf.so: %s", dlerror());
		return 1;
	}
	fn = dlsym(h, "nosf_entry");
	if (!fn) {
		fail("no nosf_entry");
		return 1;
	}
	memset(&t, 0, sizeof(t));
	cur = &t;
	((plug_fn)fn)(d_cb, 1);
	memset(&t, 0, sizeof(t));
	((plug_fn)fn)(d_cb, 2);
	expect_discovered("the object without SFrame", fn, 0, "libdiscnosf.so");
	/* Its caller is found with frame pointers: frame 2 is nosf_entry. */
	if (t.nr < 3 || t.methods[2] != CODECTL_FRAME_SFRAME)
		dump("through the object without SFrame", &t);
	dlclose(h);
	return 0;
}

/*
 * libdiscnosf.so after `codectl import` of it (guest-suite.sh): its
 * registration is DISCOVERED | SYNTH, and its caller is found with the
 * imported rules, not with frame pointers.  Run only when named.
 */
static void *nosf_open(void **h)
{
	char path[PATH_MAX + 32];
	void *fn;

	snprintf(path, sizeof(path), "%s/libdiscnosf.so", dir);
	*h = dlopen(path, RTLD_NOW);
	if (!*h) {
		fail("dlopen libdiscnosf.so: %s", dlerror());
		return NULL;
	}
	fn = dlsym(*h, "nosf_entry");
	if (!fn)
		fail("no nosf_entry");
	return fn;
}

/* @n unwinds through nosf_entry at @fn; @t gets the last one. */
static void nosf_unwinds(void *fn, int n, struct trace *t)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(t, 0, sizeof(*t));
		cur = t;
		((plug_fn)fn)(d_cb, i + 1);
	}
}

/*
 * The registration of libdiscnosf.so is DISCOVERED | SYNTH with a
 * section, and frame 2, nosf_entry's caller, was found with
 * nosf_entry's imported rule.
 */
static void expect_imported(const char *what, void *fn, const struct trace *t)
{
	struct codectl_query_info q;
	char path[PATH_MAX];
	int rc;

	rc = query((uintptr_t)fn, &q, path, sizeof(path));
	if (rc)
		fail("%s: QUERY at %p: %s", what, fn, strerror(-rc));
	else if (q.origin != (CODECTL_ORIGIN_DISCOVERED | CODECTL_ORIGIN_SYNTH) ||
		 !q.sframe_start)
		fail("%s: origin %#x, sframe [%#llx,%#llx): expected DISCOVERED|SYNTH with a section",
		     what, q.origin, ULL(q.sframe_start), ULL(q.sframe_end));
	if (t->nr < 3 || t->methods[2] != CODECTL_FRAME_SFRAME) {
		fail("%s: the caller of the imported object not found with SFrame",
		     what);
		dump(what, t);
	}
}

static int t_imported(void)
{
	struct trace t;
	void *h, *fn;

	fn = nosf_open(&h);
	if (!fn)
		return 1;
	nosf_unwinds(fn, 2, &t);
	expect_imported("libdiscnosf.so", fn, &t);
	dlclose(h);
	return 0;
}

/*
 * --late-import: libdiscnosf.so discovered without SFrame, then (once
 * stdin has a line: guest-suite.sh imports it meanwhile) the unwinds
 * after the import must use it: the first one asks discovery to look
 * again, the next is complete.
 */
static int late_import_main(void)
{
	struct trace t;
	char line[16];
	void *h, *fn;

	fn = nosf_open(&h);
	if (!fn)
		goto out;
	nosf_unwinds(fn, 2, &t);
	expect_discovered("before the import", fn, 0, "libdiscnosf.so");
	printf("# ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		fail("stdin closed before the go");
	nosf_unwinds(fn, 2, &t);
	expect_imported("after the import", fn, &t);
	dlclose(h);
out:
	printf("%s 1 - an import after discovery replaces its registration\n",
	       failed ? "not ok" : "ok");
	printf("%d passed, %d failed\n", !failed, !!failed);
	return !!failed;
}

static int t_dlclose_dlopen(void)
{
	void *h, *entry, *mid;
	struct codectl_query_info q;
	uint64_t at;
	int i, n;

	for (i = 0; i < 3; i++) {
		h = plug_open("libdiscplug.so", &entry, &mid);
		if (!h)
			return 1;
		n = unwinds_to_complete(entry, mid, 3);
		if (!n || n > 2)
			fail("cycle %d: complete after %d unwinds", i, n);
		at = (uintptr_t)entry;
		dlclose(h);
		/* Unmapped with dlclose: the registration went with it. */
		if (!query(at, &q, NULL, 0) && q.text_start <= at)
			fail("cycle %d: still registered at %#llx after dlclose",
			     i, ULL(at));
		/* Something else in between, so the next load moves. */
		if (i == 1)
			mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	}
	return 0;
}

static int t_fork(void)
{
	void *h, *entry, *mid;
	pid_t pid;
	int st, n;

	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 1;
	if (unwinds_to_complete(entry, mid, 3) > 2)
		fail("parent: not complete after 2 unwinds");
	fflush(stdout);
	pid = fork();
	if (!pid) {
		/* The child has its parent's registrations: complete at once. */
		n = unwinds_to_complete(entry, mid, 1);
		_exit(n == 1 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		fail("forked child: first unwind not complete (status %#x)", st);
	dlclose(h);
	return 0;
}

static int exec_check(void)
{
	void *h, *entry, *mid;
	int n;

	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 3;
	n = unwinds_to_complete(entry, mid, 3);
	return n == 2 ? 0 : 10 + n;
}

static int t_exec(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		execl("/proc/self/exe", "disc-test", "--exec-check", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		fail("exec'd image: not complete after 2 unwinds (status %#x)", st);
	return 0;
}

/* The text range and SFrame section of this program, from its phdrs. */
struct self_range {
	uint64_t text_start, text_end, sframe_start, sframe_end;
};

static int self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_range *r = data;
	int i;

	(void)size;
	if (info->dlpi_name[0])
		return 0;	/* the main program has the empty name */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			r->text_start = info->dlpi_addr + p->p_vaddr;
			r->text_end = r->text_start + p->p_memsz;
		}
		if (p->p_type == 0x6474e554) {
			r->sframe_start = info->dlpi_addr + p->p_vaddr;
			r->sframe_end = r->sframe_start + p->p_memsz;
		}
	}
	return 1;
}

static int reg_self(const struct self_range *r)
{
	struct codectl_elf_info ei = {
		.text_start = r->text_start, .text_end = r->text_end,
		.sframe_start = r->sframe_start, .sframe_end = r->sframe_end,
		.pathname = (uintptr_t)"explicit",
	};
	struct codectl_args a = {
		.info = (uintptr_t)&ei, .info_size = sizeof(ei),
	};

	return ioctl(fd, CODECTL_IOC_REGISTER_ELF, &a) ? -errno : 0;
}

static int t_explicit_replaces(void)
{
	struct codectl_query_info q;
	struct self_range r = { 0 };
	void *h, *entry, *mid;
	char path[64];
	int rc;

	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 1;
	unwinds_to_complete(entry, mid, 3);
	dl_iterate_phdr(self_cb, &r);
	if (!r.text_start || !r.sframe_start) {
		fail("no text or PT_GNU_SFRAME in the program's phdrs");
		return 1;
	}
	expect_discovered("the program before REGISTER_ELF", (void *)d_cb, 1,
			  NULL);
	rc = reg_self(&r);
	if (rc)
		fail("REGISTER_ELF over a discovered registration: %s, expected success",
		     strerror(-rc));
	path[0] = '\0';
	rc = query((uintptr_t)d_cb, &q, path, sizeof(path));
	if (rc || q.origin != CODECTL_ORIGIN_REGISTERED || strcmp(path, "explicit"))
		fail("after REGISTER_ELF: origin %#x path '%s' (%s)", q.origin,
		     path, strerror(-rc));
	rc = reg_self(&r);
	if (rc != -EEXIST)
		fail("REGISTER_ELF over an explicit registration: %s, expected EEXIST",
		     strerror(-rc));
	if (unwinds_to_complete(entry, mid, 1) != 1)
		fail("not complete with the explicit registration");
	dlclose(h);
	return 0;
}

/*
 * --late: started while the module is not loaded, the plugin mapped
 * already; once a line arrives on stdin (the module is loaded), the
 * first unwind falls back and the second is complete.
 */
static int late_main(void)
{
	void *h, *entry, *mid;
	char c;
	int n;

	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 3;
	printf("# waiting\n");
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return 4;
	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	n = unwinds_to_complete(entry, mid, 3);
	printf("# complete after %d unwinds\n", n);
	return n == 2 ? 0 : 10 + n;
}

/* ---- --hold: N processes sharing one table ---------------------------- */

static int hold_main(int n)
{
	void *h, *entry, *mid;
	char c;
	int i;

	for (i = 1; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			break;
	}
	/* Each child a fresh mm: exec, so nothing is inherited. */
	if (i < n || n == 1) {
		if (!getenv("DISC_HOLD_CHILD")) {
			setenv("DISC_HOLD_CHILD", "1", 1);
			execl("/proc/self/exe", "disc-test", "--hold", "1",
			      (char *)NULL);
			return 127;
		}
	}
	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 2;
	h = plug_open("libdiscplug.so", &entry, &mid);
	if (!h)
		return 3;
	if (unwinds_to_complete(entry, mid, 3) != 2)
		printf("# hold %d: not complete after 2 unwinds\n", getpid());
	printf("# held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

/* ---- --fuzz: corrupted ELF files mapped executable -------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* mov $SYS_ioctl, %eax; syscall; ret */
static const uint8_t stub[] = { 0xb8, 0x10, 0, 0, 0, 0x0f, 0x05, 0xc3 };

typedef long (*stub_fn)(long, long, void *);

static int fuzz_main(int n, uint64_t seed)
{
	char src[PATH_MAX + 32], path[64];
	struct codectl_unwind_args a;
	uint64_t ips[8];
	uint8_t *orig, *buf;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	struct stat st;
	long calls = 0, faults = 0;
	int i, k, sfd, xo = -1;

	rng = seed | 1;
	snprintf(src, sizeof(src), "%s/libdiscplug.so", dir);
	sfd = open(src, O_RDONLY);
	if (sfd < 0 || fstat(sfd, &st)) {
		fail("%s: %m", src);
		return 1;
	}
	orig = malloc(st.st_size);
	buf = malloc(st.st_size);
	if (!orig || !buf || read(sfd, orig, st.st_size) != st.st_size) {
		fail("reading %s", src);
		return 1;
	}
	close(sfd);
	eh = (Elf64_Ehdr *)orig;
	ph = (Elf64_Phdr *)(orig + eh->e_phoff);
	for (k = 0; k < eh->e_phnum; k++)
		if (ph[k].p_type == PT_LOAD && (ph[k].p_flags & PF_X))
			xo = k;
	if (xo < 0) {
		fail("no executable PT_LOAD in %s", src);
		return 1;
	}
	/* The stub at the start of the executable segment's file part. */
	memcpy(orig + ph[xo].p_offset, stub, sizeof(stub));
	snprintf(path, sizeof(path), "/tmp/disc-fuzz.%d", getpid());
	for (i = 0; i < n; i++) {
		unsigned int mode = rnd() % 6, nb, j;
		uint64_t lo = UINT64_MAX, hi = 0, bias;
		size_t len = st.st_size;
		uint8_t *base;
		int ffd;

		memcpy(buf, orig, len);
		nb = 1 + rnd() % 8;
		for (j = 0; j < nb; j++) {
			size_t at;

			switch (mode) {
			case 0:		/* ELF header */
				at = rnd() % sizeof(Elf64_Ehdr);
				break;
			case 1:		/* program headers */
				at = eh->e_phoff + rnd() % (eh->e_phnum * sizeof(*ph));
				break;
			case 2:		/* anywhere */
				at = rnd() % len;
				break;
			default:	/* words of the phdrs: offsets, sizes */
				at = (eh->e_phoff + rnd() % (eh->e_phnum * sizeof(*ph))) & ~7UL;
				if (at + 8 <= len) {
					uint64_t v = rnd();

					if (rnd() & 1)
						v &= 0xffff;
					memcpy(buf + at, &v, 8);
				}
				continue;
			}
			/* Never the stub itself: it must run. */
			if (at >= ph[xo].p_offset &&
			    at < ph[xo].p_offset + sizeof(stub))
				continue;
			buf[at] = rnd();
		}
		ffd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (ffd < 0 || write(ffd, buf, len) != (ssize_t)len) {
			fail("writing %s: %m", path);
			return 1;
		}
		close(ffd);
		/* Read-only now: a file open for writing is refused at once. */
		ffd = open(path, O_RDONLY);
		/* The loader's layout, from the uncorrupted headers. */
		for (k = 0; k < eh->e_phnum; k++)
			if (ph[k].p_type == PT_LOAD) {
				if (ph[k].p_vaddr < lo)
					lo = ph[k].p_vaddr;
				if (ph[k].p_vaddr + ph[k].p_memsz > hi)
					hi = ph[k].p_vaddr + ph[k].p_memsz;
			}
		lo &= ~4095UL;
		base = mmap(NULL, hi - lo + 4096, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		bias = (uintptr_t)base - lo;
		for (k = 0; k < eh->e_phnum; k++) {
			uint64_t va = ph[k].p_vaddr & ~4095UL;
			uint64_t off = ph[k].p_offset & ~4095UL;
			uint64_t end = ph[k].p_offset + ph[k].p_filesz;

			if (ph[k].p_type != PT_LOAD)
				continue;
			mmap((void *)(uintptr_t)(bias + va), end - off,
			     PROT_READ | (ph[k].p_flags & PF_X ? PROT_EXEC : 0),
			     MAP_PRIVATE | MAP_FIXED, ffd, off);
		}
		/* Sometimes truncate it under the mapping (past the stub). */
		if (mode == 5) {
			int tfd = open(path, O_RDWR);

			if (tfd >= 0) {
				if (ftruncate(tfd, ph[xo].p_offset + 4096 +
					      rnd() % (len - ph[xo].p_offset)))
					faults++;
				close(tfd);
			}
		}
		memset(&a, 0, sizeof(a));
		a.ips = (uintptr_t)ips;
		a.max_frames = 8;
		/* Frame 0 in the file: discovery examines it on the way out. */
		for (k = 0; k < 2; k++) {
			if (((stub_fn)(uintptr_t)(bias + ph[xo].p_vaddr))(fd,
					CODECTL_IOC_UNWIND, &a))
				faults++;
			calls++;
		}
		munmap(base, hi - lo + 4096);
		close(ffd);
	}
	unlink(path);
	printf("# fuzz: %d files, %ld unwinds, %ld errors, seed %#llx\n", n,
	       calls, faults, ULL(seed));
	return 0;
}

/* ---- --corrupt: hostile object files for codectl import ---------------- */

/* The file range of section @name, or 0 with *@len 0. */
static size_t section_of(const uint8_t *f, size_t len, const char *name,
			 size_t *slen)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh, *str;
	int i;

	*slen = 0;
	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len ||
	    eh->e_shstrndx >= eh->e_shnum)
		return 0;
	sh = (const void *)(f + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		if (str->sh_offset + sh[i].sh_name >= len ||
		    strcmp((const char *)f + str->sh_offset + sh[i].sh_name, name) ||
		    sh[i].sh_offset + sh[i].sh_size > len)
			continue;
		*slen = sh[i].sh_size;
		return sh[i].sh_offset;
	}
	return 0;
}

static int corrupt_main(int n, uint64_t seed, const char *out)
{
	char src[PATH_MAX + 32], path[PATH_MAX + 32];
	size_t len, eh_at, eh_len, hdr_at, hdr_len;
	uint8_t *orig, *buf;
	Elf64_Ehdr *eh;
	struct stat st;
	int i, sfd;

	rng = seed | 1;
	snprintf(src, sizeof(src), "%s/libdiscnosf.so", dir);
	sfd = open(src, O_RDONLY);
	if (sfd < 0 || fstat(sfd, &st)) {
		fail("%s: %m", src);
		return 1;
	}
	len = st.st_size;
	orig = malloc(len);
	buf = malloc(len);
	if (!orig || !buf || read(sfd, orig, len) != (ssize_t)len) {
		fail("reading %s", src);
		return 1;
	}
	close(sfd);
	eh = (Elf64_Ehdr *)orig;
	eh_at = section_of(orig, len, ".eh_frame", &eh_len);
	hdr_at = section_of(orig, len, ".eh_frame_hdr", &hdr_len);
	if (!eh_len) {
		fail("%s has no .eh_frame", src);
		return 1;
	}
	for (i = 0; i < n; i++) {
		unsigned int mode = rnd() % 8, nb = 1 + rnd() % 8, j;
		size_t flen = len, at;
		int ffd;

		memcpy(buf, orig, len);
		for (j = 0; j < nb; j++) {
			switch (mode) {
			case 0:		/* the ELF header */
				at = rnd() % sizeof(Elf64_Ehdr);
				break;
			case 1:		/* program headers: overlapping, huge */
				at = eh->e_phoff + rnd() % (eh->e_phnum * sizeof(Elf64_Phdr));
				break;
			case 2:		/* section headers */
				at = eh->e_shoff + rnd() % (eh->e_shnum * sizeof(Elf64_Shdr));
				break;
			case 3:		/* .eh_frame_hdr's table */
				at = hdr_len ? hdr_at + rnd() % hdr_len : rnd() % len;
				break;
			case 4:		/* a length or CIE pointer: words */
				at = eh_at + (rnd() % eh_len & ~3UL);
				if (at + 4 <= len) {
					uint32_t v = rnd();

					if (rnd() & 1)
						v &= 0xff;
					memcpy(buf + at, &v, 4);
				}
				continue;
			default:	/* CIE and FDE bytes, instructions */
				at = eh_at + rnd() % eh_len;
				break;
			}
			if (at < len)
				buf[at] = rnd();
		}
		if (!(rnd() % 8))	/* truncated */
			flen = rnd() % len;
		snprintf(path, sizeof(path), "%s/%d", out, i);
		ffd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (ffd < 0 || write(ffd, buf, flen) != (ssize_t)flen) {
			fail("writing %s: %m", path);
			return 1;
		}
		close(ffd);
	}
	printf("# corrupt: %d copies of %s in %s, seed %#llx\n", n, src, out,
	       ULL(seed));
	return 0;
}

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(void);
	const char *what;
	int named;	/* run only when named */
} tests[] = {
	{ "first_then_complete", t_first_then_complete,
	  "the first unwind falls back, the next is complete through the plugin", 0 },
	{ "no_sframe", t_no_sframe, "an object without SFrame: registered without it", 0 },
	{ "dlclose_dlopen", t_dlclose_dlopen, "dlclose drops it, dlopen finds it again (3 cycles)", 0 },
	{ "fork", t_fork, "a forked child is complete at its first unwind", 0 },
	{ "exec", t_exec, "an exec'd image: first unwind falls back, the next is complete", 0 },
	{ "explicit_replaces", t_explicit_replaces,
	  "REGISTER_ELF replaces a discovered registration; a second one is EEXIST", 0 },
	{ "imported", t_imported,
	  "an object imported by codectl import: its caller found with the imported rules", 1 },
};

int main(int argc, char **argv)
{
	int i, j, pass = 0, fail_n = 0, ran;
	char *slash;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!realpath("/proc/self/exe", dir))
		return 2;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (argc > 1 && !strcmp(argv[1], "--exec-check"))
		return exec_check();
	if (argc > 1 && !strcmp(argv[1], "--late"))
		return late_main();
	if (argc > 2 && !strcmp(argv[1], "--hold"))
		return hold_main(atoi(argv[2]));
	if (argc > 4 && !strcmp(argv[1], "--corrupt"))
		return corrupt_main(atoi(argv[2]), strtoull(argv[3], NULL, 0),
				    argv[4]) || failed;
	fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("# %s: %m\n0 passed, 1 failed\n", CODECTL_DEVICE);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--late-import"))
		return late_import_main();
	if (argc > 3 && !strcmp(argv[1], "--fuzz")) {
		i = fuzz_main(atoi(argv[2]), strtoull(argv[3], NULL, 0));
		printf("%d passed, %d failed\n", !i && !failed, i || failed);
		return i || failed;
	}
	if (argc > 2 && !strncmp(argv[1], "--one", 5)) {
		verbose = !strcmp(argv[1], "--one-v");
		for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++)
			if (!strcmp(argv[2], tests[i].name))
				return tests[i].fn() || failed;
		return 2;
	}
	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argv++;
		argc--;
	}
	for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++) {
		ran = argc <= 1 && !tests[i].named;
		for (j = 1; j < argc; j++)
			ran |= !strcmp(argv[j], tests[i].name);
		if (!ran)
			continue;
		printf("# %s: %s\n", tests[i].name, tests[i].what);
		fflush(stdout);
		/* Each test in a fresh process: exec, so nothing is inherited. */
		failed = 0;
		{
			pid_t pid = fork();
			int st = 0;

			if (!pid) {
				char *args[] = { "disc-test", "--one",
						 (char *)tests[i].name, NULL };

				if (verbose)
					args[1] = "--one-v";
				execv("/proc/self/exe", args);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid ||
			    !WIFEXITED(st) || WEXITSTATUS(st))
				failed = 1;
		}
		if (failed) {
			printf("not ok %d - %s\n", pass + fail_n + 1, tests[i].name);
			fail_n++;
		} else {
			printf("ok %d - %s\n", pass + fail_n + 1, tests[i].name);
			pass++;
		}
	}
	printf("%d passed, %d failed\n", pass, fail_n);
	return fail_n != 0;
}
