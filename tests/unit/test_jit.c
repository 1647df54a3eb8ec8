// SPDX-License-Identifier: GPL-2.0
/*
 * The JIT table builder (lib/jit.c): the tables it registers, entries in
 * address order, chaining when full, the errors, unregistration, and a
 * reader walking the chain as the kernel does while a writer appends.
 * The device is the fake one (fakedev.h): its REGISTER_JIT checks the
 * first table's header as the module does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakedev.h"

#define HDR	sizeof(struct codectl_jit_unwind_table)
#define STRIDE	24u
#define TEXT	0x7f0000000000ull	/* the fake kernel does not look at it */

typedef struct codectl_jit_unwind_table table_t;

static const struct codectl_jit_rule entry_rule = { 8, -8, 0, 0 };

/* The module's codectl_jit_table_ok(). */
static int table_ok(const table_t *t)
{
	return t->fre_size >= CODECTL_JIT_FRE_SIZE_VER0 &&
	       t->fre_stride >= t->fre_size && !(t->fre_stride % 4) &&
	       !(t->reserved_len % t->fre_stride) &&
	       t->used_len <= t->reserved_len && !t->__reserved;
}

/* REGISTER_JIT as the module checks it (header only), others succeed. */
static int fake_kernel_jit(unsigned long request, struct codectl_args *args)
{
	const struct codectl_jit_info *ji;

	if (request != CODECTL_IOC_REGISTER_JIT)
		return 0;
	ji = (const void *)(uintptr_t)args->info;
	if (args->info_size != CODECTL_JIT_INFO_SIZE_VER0 ||
	    ji->text_start >= ji->text_end)
		return -EINVAL;
	return table_ok((const table_t *)(uintptr_t)ji->unwind_head) ?
	       0 : -EINVAL;
}

static int setup(void **state)
{
	fake_setup(state);
	fake_kernel = fake_kernel_jit;
	return 0;
}

static const struct codectl_jit_unwind_fre *fre(const table_t *t, uint64_t i)
{
	return (const void *)((const unsigned char *)(t + 1) + i * t->fre_stride);
}

static const table_t *next_of(const table_t *t)
{
	return (const table_t *)(uintptr_t)
		__atomic_load_n(&t->next, __ATOMIC_ACQUIRE);
}

/*
 * The module's codectl_jit_find(): the entry covering @off, or NULL (no
 * rule: a gap, or past the published entries).
 */
static const struct codectl_jit_unwind_fre *lookup(const table_t *t,
						   uint64_t off)
{
	for (; t; t = next_of(t)) {
		uint64_t n = __atomic_load_n(&t->used_len, __ATOMIC_ACQUIRE) /
			     t->fre_stride, lo = 0, hi = n;

		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;
			const struct codectl_jit_unwind_fre *e = fre(t, mid);

			if (off < e->ip_off)
				hi = mid;
			else if (off - e->ip_off >= e->size)
				lo = mid + 1;
			else
				return e;
		}
		if (n && off < (uint64_t)fre(t, n - 1)->ip_off + fre(t, n - 1)->size)
			return NULL;
	}
	return NULL;
}

static void test_create_registers_empty_table(void **state)
{
	struct codectl_jit *jit;
	const struct codectl_jit_info *ji;
	const table_t *t;

	(void)state;
	jit = codectl_jit_create(TEXT, TEXT + 4096, 10, 0);
	assert_non_null(jit);
	t = codectl_jit_head(jit);
	assert_non_null(t);
	/* A mapping of its own, page-aligned (not malloc()'s). */
	assert_int_equal((uintptr_t)t % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
	assert_int_equal(fake_log_count(), 1);
	assert_int_equal(fake_log[0].request, CODECTL_IOC_REGISTER_JIT);
	assert_int_equal(fake_log[0].args.info_size, CODECTL_JIT_INFO_SIZE_VER0);
	assert_int_equal(fake_log[0].args.flags, 0);
	ji = (const void *)fake_log[0].info;
	assert_int_equal(ji->text_start, TEXT);
	assert_int_equal(ji->text_end, TEXT + 4096);
	assert_int_equal(ji->unwind_head, (uintptr_t)t);
	/* The header: the library's entry size, stride a multiple of 4. */
	assert_int_equal(sizeof(struct codectl_jit_unwind_table), 40);
	assert_int_equal(t->fre_size, CODECTL_JIT_FRE_SIZE_VER0);
	assert_int_equal(t->fre_size, 21);
	assert_int_equal(t->fre_stride, STRIDE);
	assert_int_equal(t->fre_stride, sizeof(struct codectl_jit_unwind_fre));
	assert_int_equal(t->reserved_len, 10 * STRIDE);
	assert_int_equal(t->used_len, 0);
	assert_int_equal(t->next, 0);
	assert_int_equal(t->__reserved, 0);
	assert_true(table_ok(t));
	assert_null(lookup(t, 0));

	assert_int_equal(codectl_jit_destroy(jit), 0);
	assert_int_equal(fake_log_count(), 2);
	assert_int_equal(fake_log[1].request, CODECTL_IOC_UNREGISTER);
	{
		const struct codectl_unregister_info *u =
			(const void *)fake_log[1].info;

		assert_int_equal(u->text_start, TEXT);
		assert_int_equal(u->text_end, TEXT + 4096);
	}
}

static void test_default_table_fills_a_page(void **state)
{
	struct codectl_jit *jit;
	long page = sysconf(_SC_PAGESIZE);

	(void)state;
	jit = codectl_jit_create(TEXT, TEXT + 1, 0, 0);
	assert_non_null(jit);
	assert_int_equal(codectl_jit_head(jit)->reserved_len,
			 (page - HDR) / STRIDE * STRIDE);
	assert_int_equal(codectl_jit_destroy(jit), 0);
}

static void test_append_in_order(void **state)
{
	static const struct codectl_jit_rule r[] = {
		{ 8, -8, 0, 0 },
		{ 16, -8, -16, CODECTL_JIT_FRE_FP_SAVED },
		{ 16, -8, -16, CODECTL_JIT_FRE_CFA_BASE_FP | CODECTL_JIT_FRE_FP_SAVED },
		{ 0, 0, 0, CODECTL_JIT_FRE_OUTERMOST },
	};
	/* Ranges: adjacent, then a gap, then adjacent again. */
	static const uint64_t start[] = { 0, 1, 40, 100 }, size[] = { 1, 39, 60, 1 };
	struct codectl_jit *jit;
	const table_t *t;
	unsigned int i;

	(void)state;
	jit = codectl_jit_create(TEXT, TEXT + 101, 8, 0);
	assert_non_null(jit);
	t = codectl_jit_head(jit);
	for (i = 0; i < 4; i++) {
		const struct codectl_jit_unwind_fre *e;
		const unsigned char *pad;

		errno = 1234;
		assert_int_equal(codectl_jit_add(jit, TEXT + start[i], size[i],
						 &r[i]), 0);
		assert_int_equal(errno, 1234);	/* left alone on success */
		/* Published at once: used_len counts whole strides. */
		assert_int_equal(t->used_len, (i + 1) * STRIDE);
		e = fre(t, i);
		assert_int_equal(e->ip_off, start[i]);
		assert_int_equal(e->size, size[i]);
		assert_int_equal(e->cfa_off, r[i].cfa_off);
		assert_int_equal(e->ra_off, r[i].ra_off);
		assert_int_equal(e->fp_off, r[i].fp_off);
		assert_int_equal(e->info, r[i].flags);
		pad = (const unsigned char *)e + CODECTL_JIT_FRE_SIZE_VER0;
		assert_true(!pad[0] && !pad[1] && !pad[2]);
	}
	assert_int_equal(t->next, 0);
	assert_true(table_ok(t));
	/* What the kernel's lookup finds. */
	assert_ptr_equal(lookup(t, 0), fre(t, 0));
	assert_ptr_equal(lookup(t, 1), fre(t, 1));
	assert_ptr_equal(lookup(t, 39), fre(t, 1));
	assert_ptr_equal(lookup(t, 40), fre(t, 2));
	assert_ptr_equal(lookup(t, 99), fre(t, 2));
	assert_ptr_equal(lookup(t, 100), fre(t, 3));
	assert_null(lookup(t, 101));
	assert_int_equal(codectl_jit_destroy(jit), 0);
}

static void test_chain_when_full(void **state)
{
	struct codectl_jit *jit;
	const table_t *t[4];
	unsigned int i, k;

	(void)state;
	jit = codectl_jit_create(TEXT, TEXT + 1000, 2, 0);
	assert_non_null(jit);
	t[0] = codectl_jit_head(jit);
	for (i = 0; i < 5; i++) {
		assert_int_equal(codectl_jit_add(jit, TEXT + 10 * i, 10,
						 &entry_rule), 0);
		/* A new table appears only when it holds the entry. */
		for (k = 0, t[1] = t[0]; next_of(t[k]); k++)
			t[k + 1] = next_of(t[k]);
		assert_int_equal(k, i / 2);
		assert_int_equal(t[k]->used_len, (i % 2 + 1) * STRIDE);
	}
	/* Tables of 2, 2 and 1 entries, linked in address order. */
	assert_non_null(t[1]);
	assert_non_null(t[2]);
	assert_null(next_of(t[2]));
	for (k = 0; k < 3; k++) {
		assert_true(table_ok(t[k]));
		assert_int_equal(t[k]->reserved_len, 2 * STRIDE);
		assert_int_equal(t[k]->used_len, (k < 2 ? 2 : 1) * STRIDE);
		assert_int_equal(t[k]->fre_size, CODECTL_JIT_FRE_SIZE_VER0);
		assert_int_equal(t[k]->fre_stride, STRIDE);
	}
	for (i = 0; i < 5; i++) {
		const struct codectl_jit_unwind_fre *e = fre(t[i / 2], i % 2);

		assert_int_equal(e->ip_off, 10 * i);
		assert_int_equal(e->size, 10);
		assert_ptr_equal(lookup(t[0], 10 * i + 9), e);
	}
	assert_null(lookup(t[0], 50));
	/* Only the first table was registered. */
	assert_int_equal(fake_log_count(), 1);
	assert_int_equal(codectl_jit_destroy(jit), 0);
}

static void test_add_errors(void **state)
{
	struct codectl_jit_rule bad = entry_rule;
	struct codectl_jit *jit;
	const table_t *t;

	(void)state;
	jit = codectl_jit_create(TEXT + 100, TEXT + 200, 4, 0);
	assert_non_null(jit);
	t = codectl_jit_head(jit);
#define EINVAL_ADD(j, s, n, r) \
	do { \
		errno = 0; \
		assert_int_equal(codectl_jit_add(j, s, n, r), -1); \
		assert_int_equal(errno, EINVAL); \
	} while (0)
	EINVAL_ADD(NULL, TEXT + 100, 1, &entry_rule);
	EINVAL_ADD(jit, TEXT + 100, 1, NULL);
	EINVAL_ADD(jit, TEXT + 100, 0, &entry_rule);	/* empty */
	EINVAL_ADD(jit, TEXT + 99, 2, &entry_rule);	/* starts before */
	EINVAL_ADD(jit, TEXT + 199, 2, &entry_rule);	/* ends after */
	EINVAL_ADD(jit, TEXT + 200, 1, &entry_rule);
	EINVAL_ADD(jit, TEXT + 300, 1, &entry_rule);	/* past the end */
	EINVAL_ADD(jit, UINT64_MAX, 1, &entry_rule);
	EINVAL_ADD(jit, TEXT + 150, UINT64_MAX, &entry_rule);	/* wraps */
	EINVAL_ADD(jit, 0, 1, &entry_rule);
	bad.flags = 0x8;
	EINVAL_ADD(jit, TEXT + 100, 1, &bad);
	assert_int_equal(t->used_len, 0);

	assert_int_equal(codectl_jit_add(jit, TEXT + 120, 10, &entry_rule), 0);
	EINVAL_ADD(jit, TEXT + 110, 5, &entry_rule);	/* before the last */
	EINVAL_ADD(jit, TEXT + 125, 10, &entry_rule);	/* overlaps it */
	EINVAL_ADD(jit, TEXT + 120, 10, &entry_rule);	/* the same again */
	EINVAL_ADD(jit, TEXT + 129, 1, &entry_rule);	/* its last byte */
	assert_int_equal(t->used_len, STRIDE);
	assert_int_equal(codectl_jit_add(jit, TEXT + 130, 70, &entry_rule), 0);
	EINVAL_ADD(jit, TEXT + 199, 1, &entry_rule);	/* region used up */
	assert_int_equal(t->used_len, 2 * STRIDE);
	assert_int_equal(codectl_jit_destroy(jit), 0);
#undef EINVAL_ADD
}

static void test_create_errors(void **state)
{
#define EINVAL_CREATE(s, e, n, f) \
	do { \
		errno = 0; \
		assert_null(codectl_jit_create(s, e, n, f)); \
		assert_int_equal(errno, EINVAL); \
	} while (0)
	(void)state;
	EINVAL_CREATE(TEXT, TEXT, 1, 0);
	EINVAL_CREATE(TEXT + 1, TEXT, 1, 0);
	EINVAL_CREATE(TEXT, TEXT + UINT32_MAX + 1ull, 1, 0);	/* 32-bit offsets */
	EINVAL_CREATE(TEXT, TEXT + 16, (1u << 20) + 1, 0);
	EINVAL_CREATE(TEXT, TEXT + 16, 1, 0x2);
	assert_int_equal(fake_log_count(), 0);	/* the kernel was not asked */
	/* The largest region and table are fine. */
	{
		struct codectl_jit *jit =
			codectl_jit_create(TEXT, TEXT + UINT32_MAX, 1u << 20, 0);

		assert_non_null(jit);
		assert_int_equal(codectl_jit_head(jit)->reserved_len,
				 (1ull << 20) * STRIDE);
		assert_int_equal(codectl_jit_add(jit, TEXT + UINT32_MAX - 1, 1,
						 &entry_rule), 0);
		assert_int_equal(fre(codectl_jit_head(jit), 0)->ip_off,
				 UINT32_MAX - 1);
		assert_int_equal(codectl_jit_destroy(jit), 0);
	}
#undef EINVAL_CREATE
}

static void test_no_module(void **state)
{
	(void)state;
	fake_open_errno = ENOENT;	/* no /dev/codectl */
	errno = 0;
	assert_null(codectl_jit_create(TEXT, TEXT + 64, 4, 0));
	assert_int_equal(errno, ENODEV);
	assert_int_equal(fake_ioctls, 0);
}

static void test_kernel_refuses(void **state)
{
	(void)state;
	fake_kernel = fake_kernel_fail;
	fake_fail_errno = EFAULT;	/* text not mapped executable */
	errno = 0;
	assert_null(codectl_jit_create(TEXT, TEXT + 64, 4, 0));
	assert_int_equal(errno, EFAULT);
	fake_fail_errno = EEXIST;
	assert_null(codectl_jit_create(TEXT, TEXT + 64, 4, 0));
	assert_int_equal(errno, EEXIST);
}

static int unreg_errno;
static int fake_kernel_unreg(unsigned long request, struct codectl_args *args)
{
	if (request == CODECTL_IOC_UNREGISTER)
		return -unreg_errno;
	return fake_kernel_jit(request, args);
}

static void test_destroy(void **state)
{
	struct codectl_jit *jit;

	(void)state;
	fake_kernel = fake_kernel_unreg;
	assert_int_equal(codectl_jit_destroy(NULL), 0);

	/* ENOENT: the kernel dropped it already (code unmapped): freed. */
	unreg_errno = ENOENT;
	jit = codectl_jit_create(TEXT, TEXT + 64, 4, 0);
	assert_non_null(jit);
	errno = 4321;
	assert_int_equal(codectl_jit_destroy(jit), 0);
	assert_int_equal(errno, 4321);

	/* Another failure: nothing is freed, the call can be repeated. */
	unreg_errno = EINTR;
	jit = codectl_jit_create(TEXT, TEXT + 64, 4, 0);
	assert_non_null(jit);
	assert_int_equal(codectl_jit_add(jit, TEXT, 8, &entry_rule), 0);
	assert_int_equal(codectl_jit_destroy(jit), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(codectl_jit_head(jit)->used_len, STRIDE);
	assert_int_equal(codectl_jit_add(jit, TEXT + 8, 8, &entry_rule), 0);
	unreg_errno = 0;
	assert_int_equal(codectl_jit_destroy(jit), 0);
}

static void test_unregistered_flag(void **state)
{
	struct codectl_jit *jit;

	(void)state;
	fake_open_errno = ENOENT;	/* no module needed */
	jit = codectl_jit_create(TEXT, TEXT + 64, 1, CODECTL_JIT_UNREGISTERED);
	assert_non_null(jit);
	assert_int_equal(codectl_jit_add(jit, TEXT, 8, &entry_rule), 0);
	assert_int_equal(codectl_jit_add(jit, TEXT + 8, 8, &entry_rule), 0);
	assert_non_null(next_of(codectl_jit_head(jit)));
	assert_int_equal(codectl_jit_destroy(jit), 0);
	assert_int_equal(fake_open_attempts, 0);
	assert_int_equal(fake_ioctls, 0);
}

/*
 * A reader walking the chain as the kernel does while the writer appends:
 * every entry it can see is complete (entry i covers [3i, 3i + 3) with
 * cfa_off i) and every linked table holds at least one entry.
 */
#define RACE_N	20000
static struct codectl_jit *race_jit;
static volatile int race_done;

static void *race_reader(void *arg)
{
	const table_t *head = codectl_jit_head(race_jit);
	unsigned long bad = 0, walks = 0;

	(void)arg;
	while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE) || !walks) {
		uint64_t seen = 0;
		const table_t *t;

		for (t = head; t; t = next_of(t)) {
			uint64_t n = __atomic_load_n(&t->used_len,
						     __ATOMIC_ACQUIRE) / STRIDE;

			bad += !n || !table_ok(t);
			for (uint64_t i = 0; i < n; i++, seen++) {
				const struct codectl_jit_unwind_fre *e = fre(t, i);

				bad += e->ip_off != 3 * seen || e->size != 3 ||
				       e->cfa_off != (int32_t)seen ||
				       e->ra_off != -8;
			}
		}
		if (seen) {
			const struct codectl_jit_unwind_fre *e =
				lookup(head, 3 * (seen - 1) + 1);

			bad += !e || e->cfa_off != (int32_t)(seen - 1);
		}
		walks++;
	}
	return (void *)bad;
}

static void test_reader_during_appends(void **state)
{
	struct codectl_jit_rule r = { 0, -8, 0, 0 };
	pthread_t th;
	void *bad;
	int i;

	(void)state;
	race_done = 0;
	race_jit = codectl_jit_create(TEXT, TEXT + 3 * RACE_N, 7, 0);
	assert_non_null(race_jit);
	/* The first entry: the reader's invariant holds for the head too. */
	assert_int_equal(codectl_jit_add(race_jit, TEXT, 3, &r), 0);
	assert_int_equal(pthread_create(&th, NULL, race_reader, NULL), 0);
	for (i = 1; i < RACE_N; i++) {
		r.cfa_off = i;
		assert_int_equal(codectl_jit_add(race_jit, TEXT + 3 * i, 3, &r), 0);
	}
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, &bad), 0);
	assert_int_equal((uintptr_t)bad, 0);
	assert_int_equal(codectl_jit_destroy(race_jit), 0);
}

#define T(f)	cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_create_registers_empty_table),
		T(test_default_table_fills_a_page),
		T(test_append_in_order),
		T(test_chain_when_full),
		T(test_add_errors),
		T(test_create_errors),
		T(test_no_module),
		T(test_kernel_refuses),
		T(test_destroy),
		T(test_unregistered_flag),
		T(test_reader_during_appends),
	};

	return cmocka_run_group_tests(tests, NULL, fake_setup);
}
