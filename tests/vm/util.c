// SPDX-License-Identifier: GPL-2.0
/*
 * codectl VM integration suite: device, memory, ELF self-inspection,
 * synthetic SFrame, module parameter and debugfs helpers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codectl-test.h"

int g_fd = -1;
int g_tfd = -ENOENT;
const char *g_self_exe = "/proc/self/exe";
size_t g_page;

const char *ename(int err)
{
	static __thread char buf[32];
	const char *n;

	if (err < 0)
		err = -err;
	if (!err)
		return "success";
	n = strerrorname_np(err);
	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

/* ---- raw device access ------------------------------------------------ */

int cc_open(void)
{
	int fd = open(CODECTL_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cc_topen(void)
{
	int fd = open(CODECTL_TEST_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cc_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int cc_call(int fd, unsigned int opt, uint64_t info, uint64_t info_size,
	    uint32_t flags, uint32_t reserved)
{
	struct codectl_args a = {
		.info = info,
		.info_size = info_size,
		.flags = flags,
		.__reserved = reserved,
	};

	return cc_ioctl(fd, CODECTL_IOC(opt), &a);
}

static int cc_simple(int fd, unsigned int opt, const void *info, size_t size)
{
	return cc_call(fd, opt, (uintptr_t)info, size, 0, 0);
}

int cc_version(int fd, struct codectl_version *v)
{
	memset(v, 0, sizeof(*v));
	return cc_simple(fd, CODECTL_VERSION, v, sizeof(*v));
}

int cc_register_elf(int fd, const struct codectl_elf_info *ei)
{
	return cc_simple(fd, CODECTL_REGISTER_ELF, ei, sizeof(*ei));
}

int cc_register_jit(int fd, const struct codectl_jit_info *ji)
{
	return cc_simple(fd, CODECTL_REGISTER_JIT, ji, sizeof(*ji));
}

int cc_unregister(int fd, uint64_t start, uint64_t end)
{
	struct codectl_unregister_info u = { .text_start = start, .text_end = end };

	return cc_simple(fd, CODECTL_UNREGISTER, &u, sizeof(u));
}

int cc_register_range(bool jit, uint64_t start, uint64_t end, uint64_t tbl,
		      const char *path)
{
	if (jit) {
		struct codectl_jit_info ji = {
			.text_start = start, .text_end = end, .unwind_head = tbl,
		};
		return cc_register_jit(g_fd, &ji);
	} else {
		struct codectl_elf_info ei = {
			.text_start = start, .text_end = end,
			.pathname = (uintptr_t)path,
		};
		return cc_register_elf(g_fd, &ei);
	}
}

int cc_query(int fd, struct codectl_query_info *q)
{
	return cc_simple(fd, CODECTL_QUERY, q, sizeof(*q));
}

int cc_query_at(int fd, uint64_t addr, struct codectl_query_info *q)
{
	memset(q, 0, sizeof(*q));
	q->addr = addr;
	return cc_query(fd, q);
}

long cc_nr(int fd)
{
	struct codectl_version v;
	int rc = cc_version(fd, &v);

	return rc ? rc : (long)v.nr_registrations;
}

long cc_walk_count(int fd)
{
	struct codectl_query_info q;
	uint64_t addr = 0;
	long n = 0;
	int rc;

	while (!(rc = cc_query_at(fd, addr, &q))) {
		if (q.text_end <= addr || ++n > 1000000)
			return -ELOOP;		/* cursor does not advance */
		addr = q.text_end;
	}
	return rc == -ENOENT ? n : rc;
}

long cc_explicit_count(int fd)
{
	struct codectl_query_info q;
	uint64_t addr = 0;
	long n = 0, walked = 0;
	int rc;

	while (!(rc = cc_query_at(fd, addr, &q))) {
		if (q.text_end <= addr || ++walked > 1000000)
			return -ELOOP;
		if (!(q.origin & CODECTL_ORIGIN_DISCOVERED))
			n++;
		addr = q.text_end;
	}
	return rc == -ENOENT ? n : rc;
}

void discovery_settle(int fd)
{
	struct codectl_unwind_args a;
	uint64_t ips[4];
	int i;

	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.ips = (uintptr_t)ips;
		a.max_frames = 4;
		cc_ioctl(fd, CODECTL_IOC_UNWIND, &a);
	}
}

long cc_unregister_all(int fd)
{
	struct codectl_query_info q;
	long n = 0;
	int rc;

	while (!(rc = cc_query_at(fd, 0, &q))) {
		rc = cc_unregister(fd, q.text_start, q.text_end);
		if (rc)
			return rc;
		if (++n > 1000000)
			return -ELOOP;
	}
	return rc == -ENOENT ? n : rc;
}

bool expect_elf_fail_at(const char *file, int line, int fd,
			const struct codectl_elf_info *ei, int want,
			const char *what)
{
	int rc = cc_register_elf(fd, ei);

	if (!rc)
		cc_unregister(fd, ei->text_start, ei->text_end);
	return t_expect_rc_at(file, line, rc, want, "REGISTER_ELF %s", what);
}

bool expect_jit_fail_at(const char *file, int line, int fd,
			const struct codectl_jit_info *ji, int want,
			const char *what)
{
	int rc = cc_register_jit(fd, ji);

	if (!rc)
		cc_unregister(fd, ji->text_start, ji->text_end);
	return t_expect_rc_at(file, line, rc, want, "REGISTER_JIT %s", what);
}

/* ---- memory ----------------------------------------------------------- */

void *map_pages(size_t pages, int prot)
{
	void *p = mmap(NULL, pages * g_page, prot, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		FAIL("mmap %zu pages prot %#x: %m", pages, prot);
		return NULL;
	}
	return p;
}

void *map_with_hole(size_t pages, int prot)
{
	uint8_t *p = map_pages(pages + 1, prot);

	if (p && munmap(p + pages * g_page, g_page)) {
		FAIL("munmap: %m");
		munmap(p, (pages + 1) * g_page);
		return NULL;
	}
	return p;
}

void unmap_pages(void *base, size_t pages)
{
	if (base)
		munmap(base, pages * g_page);
}

bool set_prot(void *addr, size_t len, int prot)
{
	if (mprotect(addr, len, prot)) {
		FAIL("mprotect(%p, %zu, %#x): %m", addr, len, prot);
		return false;
	}
	return true;
}

bool is_unmapped(uint64_t addr, size_t len)
{
	uint64_t a = addr & ~(uint64_t)(g_page - 1);
	unsigned char vec;

	for (; a < addr + len; a += g_page)
		if (!mincore((void *)(uintptr_t)a, g_page, &vec) || errno != ENOMEM)
			return false;
	return true;
}

uint64_t unmapped_page(void)
{
	void *p = mmap(NULL, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return LOW_BAD_ADDR;
	munmap(p, g_page);
	return (uintptr_t)p;
}

void *map_code(size_t pages)
{
	uint8_t *p = map_pages(pages, PROT_READ | PROT_WRITE);

	if (!p)
		return NULL;
	memset(p, 0xc3, pages * g_page);	/* ret */
	if (!set_prot(p, pages * g_page, PROT_READ | PROT_EXEC)) {
		unmap_pages(p, pages);
		return NULL;
	}
	return p;
}

/* ---- this process's own ELF image ------------------------------------- */

static void parse_notes(struct self_image *si, const uint8_t *p, size_t len,
			size_t align)
{
	const uint8_t *end = p + len;

	if (align < 4)
		align = 4;
	while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *n = (const void *)p;
		size_t name = (n->n_namesz + align - 1) & ~(align - 1);
		size_t desc = (n->n_descsz + align - 1) & ~(align - 1);
		const uint8_t *d = p + sizeof(*n) + name;

		if (name > (size_t)(end - p) || desc > (size_t)(end - p) ||
		    d + n->n_descsz > end)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p + sizeof(*n), "GNU", 4) &&
		    n->n_descsz <= CODECTL_BUILD_ID_MAX) {
			memcpy(si->build_id, d, n->n_descsz);
			si->build_id_len = n->n_descsz;
			return;
		}
		p = d + desc;
	}
}

static int self_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_image *si = data;
	uint64_t lo = UINT64_MAX, hi = 0;
	int i;

	(void)size;
	/* The first object is the main program. */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		uint64_t end = start + ph->p_memsz;

		switch (ph->p_type) {
		case PT_LOAD:
			if (start < lo)
				lo = start;
			if (end > hi)
				hi = end;
			if ((ph->p_flags & PF_X) && !si->text_start) {
				si->text_start = start;
				si->text_end = end;
			}
			break;
		case PT_GNU_SFRAME:
			si->sframe_start = start;
			si->sframe_seg_end = end;
			break;
		case PT_NOTE:
			if (!si->build_id_len)
				parse_notes(si, (const void *)(uintptr_t)start,
					    ph->p_memsz, ph->p_align);
			break;
		}
	}
	si->elf_start = lo;
	si->elf_end = hi;
	return 1;
}

int self_image_get(struct self_image *si)
{
	const struct sframe_hdr *h;
	ssize_t n;

	memset(si, 0, sizeof(*si));
	dl_iterate_phdr(self_phdr_cb, si);
	if (!si->text_start || !si->elf_end) {
		FAIL("dl_iterate_phdr: no executable PT_LOAD in the main program");
		return -1;
	}
	if (!si->sframe_start) {
		FAIL("no PT_GNU_SFRAME in this binary (built without -Wa,--gsframe?)");
		return -1;
	}
	if (!si->build_id_len) {
		FAIL("no NT_GNU_BUILD_ID note in this binary");
		return -1;
	}
	h = (const void *)(uintptr_t)si->sframe_start;
	if (si->sframe_seg_end - si->sframe_start < SFRAME_HDR_SIZE ||
	    h->magic != SFRAME_MAGIC) {
		FAIL("PT_GNU_SFRAME does not start with an SFrame header");
		return -1;
	}
	si->sframe_end = si->sframe_start + SFRAME_HDR_SIZE + h->auxhdr_len +
			 (uint64_t)h->fres_off + h->fre_len;
	if (si->sframe_end > si->sframe_seg_end) {
		FAIL("own .sframe header describes %llu bytes, segment has %llu",
		     (unsigned long long)(si->sframe_end - si->sframe_start),
		     (unsigned long long)(si->sframe_seg_end - si->sframe_start));
		return -1;
	}
	n = readlink(g_self_exe, si->path, sizeof(si->path) - 1);
	if (n <= 0)
		snprintf(si->path, sizeof(si->path), "/codectl-abi-test");
	return 0;
}

/* ---- synthetic SFrame ------------------------------------------------- */

uint8_t sframe_host_abi(void)
{
#if defined(__x86_64__)
	return 3;
#elif defined(__aarch64__) && defined(__AARCH64EB__)
	return 1;
#elif defined(__aarch64__)
	return 2;
#elif defined(__s390x__)
	return 4;
#else
	return 0;
#endif
}

static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

int sfr_obj_create(struct sfr_obj *o, int version)
{
	uint8_t *base, *sf, *p;
	struct sframe_hdr h = {
		.magic = SFRAME_MAGIC,
		.version = version,
		.flags = version == 3 ? 0x05 : 0x01,	/* SORTED (+PCREL) */
		.abi = sframe_host_abi(),
#if defined(__x86_64__)
		.cfa_fixed_ra_offset = -8,
#endif
		.num_fdes = 1,
		.num_fres = 1,
		.fdes_off = 0,
	};
	/* One FRE: start 0 (1 byte), info: CFA base SP, 1 value of 1 byte. */
	const uint8_t fre[3] = { 0, 0x03, 8 };
	const uint32_t fsize = 16, fre_off = 0, nfres = 1;
	const uint8_t info = 0, zero = 0;	/* FRE type 0 (u8 starts), PCINC */
	int32_t start32;
	int64_t start64;
	uint16_t pad = 0, nfres16 = 1;
	uint8_t rep = 0;

	memset(o, 0, sizeof(*o));
	base = map_with_hole(2, PROT_READ | PROT_WRITE);
	if (!base)
		return -1;
	memset(base, 0xc3, g_page);
	sf = base + g_page;
	o->base = base;
	o->text = (uintptr_t)base;
	o->text_end = o->text + fsize;
	o->sframe = (uintptr_t)sf;
	o->hole = (uintptr_t)(base + 2 * g_page);

	p = sf + SFRAME_HDR_SIZE;
	switch (version) {
	case 1:
	case 2:
		/* no PCREL: function start relative to the section start */
		start32 = (int32_t)(o->text - o->sframe);
		put(&p, &start32, 4);
		put(&p, &fsize, 4);
		put(&p, &fre_off, 4);
		put(&p, &nfres, 4);
		put(&p, &info, 1);
		if (version == 2) {
			put(&p, &rep, 1);
			put(&p, &pad, 2);
		}
		h.fres_off = p - (sf + SFRAME_HDR_SIZE);
		h.fre_len = sizeof(fre);
		put(&p, fre, sizeof(fre));
		break;
	case 3:
		/* PCREL: relative to the address of the start field itself */
		start64 = (int64_t)(o->text - (uintptr_t)p);
		put(&p, &start64, 8);
		put(&p, &fsize, 4);
		put(&p, &fre_off, 4);
		h.fres_off = p - (sf + SFRAME_HDR_SIZE);
		put(&p, &nfres16, 2);
		put(&p, &info, 1);
		put(&p, &zero, 1);	/* info2: FDE type DEFAULT */
		put(&p, &rep, 1);
		put(&p, fre, sizeof(fre));
		h.fre_len = 5 + sizeof(fre);
		break;
	default:
		FAIL("no SFrame version %d", version);
		sfr_obj_destroy(o);
		return -1;
	}
	memcpy(sf, &h, sizeof(h));
	o->sframe_end = (uintptr_t)p;
	if (!set_prot(base, g_page, PROT_READ | PROT_EXEC) ||
	    !set_prot(sf, g_page, PROT_READ)) {
		sfr_obj_destroy(o);
		return -1;
	}
	return 0;
}

void sfr_obj_destroy(struct sfr_obj *o)
{
	unmap_pages(o->base, 2);
	o->base = NULL;
}

struct sframe_hdr *sfr_obj_edit(struct sfr_obj *o)
{
	set_prot(o->base + g_page, g_page, PROT_READ | PROT_WRITE);
	return (struct sframe_hdr *)(o->base + g_page);
}

void sfr_obj_seal(struct sfr_obj *o)
{
	set_prot(o->base + g_page, g_page, PROT_READ);
}

/* ---- JIT tables ------------------------------------------------------- */

void jit_table_init(struct codectl_jit_unwind_table *t, uint32_t size,
		    uint32_t stride, uint32_t nr, uint32_t used)
{
	uint8_t *fre = (uint8_t *)(t + 1);
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->reserved_len = (uint64_t)nr * stride;
	t->fre_stride = stride;
	t->fre_size = size;
	memset(fre, 0, t->reserved_len);
	for (i = 0; i < used; i++) {
		struct codectl_jit_unwind_fre e = {
			.size = 16,
			.ip_off = 16 * i,
			.cfa_off = 8,
			.ra_off = -8,
		};
		memcpy(fre + (size_t)i * stride, &e,
		       size < sizeof(e) ? size : sizeof(e));
	}
	__atomic_store_n(&t->used_len, (uint64_t)used * stride,
			 __ATOMIC_RELEASE);
}

int copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in, out, ret = -1;
	ssize_t n;

	in = open(from, O_RDONLY);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (in >= 0 && out >= 0) {
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, n) != n)
				break;
		ret = n ? -1 : 0;
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/* ---- module parameters and debugfs stats ------------------------------ */

int param_read_str(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int param_write_str(const char *name, const char *val)
{
	char path[256];
	int fd, rc = 0;
	size_t len = strlen(val);

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != (ssize_t)len)
		rc = -errno;
	close(fd);
	return rc;
}

int param_read(const char *name, unsigned long long *val)
{
	char buf[64], *end;
	int rc = param_read_str(name, buf, sizeof(buf));

	if (rc)
		return rc;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (end == buf || *end)
		return -EINVAL;
	return errno ? -errno : 0;
}

int param_write(const char *name, unsigned long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", val);
	return param_write_str(name, buf);
}

int param_writable(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	if (access(path, F_OK)) {
		FAIL("module parameter %s missing: %m", path);
		return T_FAIL;
	}
	if (access(path, W_OK)) {
		t_set_skip("%s not writable by uid %d", path, (int)geteuid());
		return T_SKIP;
	}
	return T_PASS;
}

#define DEBUGFS_MAGIC_NR 0x64626720

int stats_read(struct cstats *s)
{
	char name[64];
	long long v;
	int seen = 0;
	FILE *f = fopen(STATS_PATH, "re");

	if (!f)
		return -errno;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "mms"))
			s->mms = v, seen |= 1;
		else if (!strcmp(name, "registrations"))
			s->registrations = v, seen |= 2;
		else if (!strcmp(name, "bytes"))
			s->bytes = v, seen |= 4;
	}
	fclose(f);
	return seen == 7 ? 0 : -EBADMSG;
}

int stats_available(void)
{
	struct statfs sfs;
	struct cstats s;
	int rc;

	if (geteuid() != 0) {
		t_set_skip("debugfs stats need root");
		return T_SKIP;
	}
	if (statfs("/sys/kernel/debug", &sfs) ||
	    sfs.f_type != DEBUGFS_MAGIC_NR) {
		if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL)) {
			t_set_skip("debugfs not mounted and cannot mount: %m");
			return T_SKIP;
		}
	}
	rc = stats_read(&s);
	if (rc == -EBADMSG) {
		FAIL(STATS_PATH " lacks one of mms, registrations, bytes");
		return T_FAIL;
	}
	if (rc) {
		FAIL("cannot read " STATS_PATH ": %s", ename(rc));
		return T_FAIL;
	}
	return T_PASS;
}

/*
 * On the debug kernels (KASAN checks every access, lockdep every lock)
 * the same work takes longer: scripts/check.sh --debug sets
 * CODECTL_TIME_SCALE to the factor of its guests' time limits.  The
 * module's own bounds count work, not time, and are the same there.
 */
unsigned int time_scale(void)
{
	static unsigned int scale;
	const char *e;

	if (!scale) {
		e = getenv("CODECTL_TIME_SCALE");
		scale = e && atoi(e) > 0 ? (unsigned int)atoi(e) : 1;
		if (scale > 1)
			printf("# wall-clock bounds multiplied by %u (CODECTL_TIME_SCALE)\n",
			       scale);
	}
	return scale;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int stats_settle(struct cstats *s)
{
	struct cstats prev;
	int i, rc;

	rc = stats_read(&prev);
	for (i = 0; !rc && i < 25; i++) {
		sleep_ms(200);
		rc = stats_read(s);
		if (!rc && !memcmp(s, &prev, sizeof(prev)))
			return 0;
		prev = *s;
	}
	*s = prev;
	return rc;
}

bool stats_wait_le(const struct cstats *base, int ms, struct cstats *last)
{
	int waited = 0;

	for (;;) {
		if (!stats_read(last) && last->mms <= base->mms &&
		    last->registrations <= base->registrations &&
		    last->bytes <= base->bytes)
			return true;
		if (waited >= ms)
			return false;
		sleep_ms(50);
		waited += 50;
	}
}

/* ---- every debugfs counter ------------------------------------------- */

int stats_read_all(struct cstats_all *s)
{
	char name[64];
	long long v;
	FILE *f = fopen(STATS_PATH, "re");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	while (s->n < STATS_MAX && fscanf(f, "%63s %lld", name, &v) == 2) {
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
		s->val[s->n++] = v;
	}
	fclose(f);
	return s->n ? 0 : -EBADMSG;
}

long long stats_get(const struct cstats_all *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->val[i];
	return -1;
}

bool stats_check_required(const struct cstats_all *s)
{
	static const char *const req[] = STATS_REQUIRED;
	bool ok = true;
	size_t i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (stats_get(s, req[i]) < 0) {
			FAIL(STATS_PATH " has no '%s' line", req[i]);
			ok = false;
		}
	return ok;
}

static bool stats_same(const struct cstats_all *a, const struct cstats_all *b)
{
	int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->name[i], b->name[i]) || a->val[i] != b->val[i])
			return false;
	return true;
}

int stats_settle_all(struct cstats_all *s)
{
	struct cstats_all prev;
	int i, rc;

	rc = stats_read_all(&prev);
	for (i = 0; !rc && i < 25; i++) {
		sleep_ms(200);
		rc = stats_read_all(s);
		if (!rc && stats_same(s, &prev))
			return 0;
		prev = *s;
	}
	*s = prev;
	return rc;
}

static bool ignored(const char *name, const char *const *ignore)
{
	static const char *const events[] = STATS_EVENTS;
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(name, events[i]))
			return true;
	for (; ignore && *ignore; ignore++)
		if (!strcmp(name, *ignore))
			return true;
	return false;
}

static bool stats_eq(const struct cstats_all *base, const struct cstats_all *now,
		     const char *const *ignore)
{
	int i;

	for (i = 0; i < base->n; i++)
		if (!ignored(base->name[i], ignore) &&
		    stats_get(now, base->name[i]) != base->val[i])
			return false;
	/* A counter that appeared meanwhile (module reloaded?) must be 0. */
	for (i = 0; i < now->n; i++)
		if (!ignored(now->name[i], ignore) &&
		    stats_get(base, now->name[i]) < 0 && now->val[i])
			return false;
	return true;
}

bool stats_wait_eq(const struct cstats_all *base, const char *const *ignore,
		   int ms, struct cstats_all *last)
{
	int waited = 0;

	for (;;) {
		if (!stats_read_all(last) && stats_eq(base, last, ignore))
			return true;
		if (waited >= ms)
			return false;
		sleep_ms(50);
		waited += 50;
	}
}

void stats_report_diff(const char *when, const struct cstats_all *base,
		       const struct cstats_all *now, const char *const *ignore)
{
	int i;

	for (i = 0; i < base->n; i++) {
		long long v = stats_get(now, base->name[i]);

		if (!ignored(base->name[i], ignore) && v != base->val[i])
			FAIL("%s: stats %s is %lld, baseline %lld", when,
			     base->name[i], v, base->val[i]);
	}
	for (i = 0; i < now->n; i++)
		if (!ignored(now->name[i], ignore) &&
		    stats_get(base, now->name[i]) < 0 && now->val[i])
			FAIL("%s: stats %s is %lld, not there at the baseline",
			     when, now->name[i], now->val[i]);
}

void stats_print_all(const char *when, const struct cstats_all *s)
{
	char buf[512];
	size_t off = 0;
	int i;

	for (i = 0; i < s->n && off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - off, " %s %lld",
				s->name[i], s->val[i]);
	buf[sizeof(buf) - 1] = 0;
	printf("# stats %s:%s\n", when, s->n ? buf : " (none)");
}

/* The shared EXPECT_RC() check: every program supplies t_fail_at(). */
bool t_expect_rc_at(const char *file, int line, int got, int want,
		    const char *fmt, ...)
{
	char what[300];
	va_list ap;

	if (got == -want)
		return true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	t_fail_at(file, line, "%s: expected %s, got %s", what, ename(want),
		  ename(got));
	return false;
}

/*
 * Fork a child that runs @fn(@arg) and exits 1 if it returned non-zero or
 * recorded a failure, else 0.  Return: its pid, or -1 (failure recorded).
 */
pid_t t_fork_child(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		FAIL("fork: %m");
		return -1;
	}
	if (!pid) {
		int before = t_nr_failed();
		int rc = fn(arg);

		fflush(stdout);
		_exit(rc || t_nr_failed() != before ? 1 : 0);
	}
	return pid;
}

/*
 * Wait for @pid (a fork or clone child: __WALL); true when it exited 0,
 * or was killed by @sig if that is non-zero, else the failure is recorded.
 */
bool t_wait_child(pid_t pid, int sig, const char *what)
{
	int status;

	if (pid <= 0)
		return false;
	while (waitpid(pid, &status, __WALL) < 0)
		if (errno != EINTR) {
			FAIL("waitpid %s: %m", what);
			return false;
		}
	if (sig && WIFSIGNALED(status) && WTERMSIG(status) == sig)
		return true;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (WIFSIGNALED(status))
		FAIL("%s: killed by signal %d", what, WTERMSIG(status));
	else
		FAIL("%s: exit status %d (its checks failed, see above)", what,
		     WEXITSTATUS(status));
	return false;
}
