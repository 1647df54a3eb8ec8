// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The JIT table builder: append-only unwind tables for CODECTL_REGISTER_JIT
 * (see <codectl.h> for the contract, <linux/codectl.h> for the layout).
 *
 * The kernel reads the tables at any moment, from NMI too, trusting only
 * what each table's used_len covers (load-acquire) and following next.
 * So an entry is written in full before used_len grows past it
 * (store-release), and a new table is filled before the old one's next
 * points to it (store-release): the kernel never sees a half-written
 * entry nor a table that is not complete.  Entries are never changed
 * once published; tables are unmapped only after the unregistration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define JIT_FRE_STRIDE	((sizeof(struct codectl_jit_unwind_fre) + 3) & ~(size_t)3)
#define JIT_MAX_FRES	(1u << 20)
#define JIT_RULE_FLAGS	(CODECTL_JIT_FRE_CFA_BASE_FP | CODECTL_JIT_FRE_FP_SAVED | \
			 CODECTL_JIT_FRE_OUTERMOST)

struct codectl_jit {
	uint64_t text_start;
	uint64_t text_end;
	uint64_t next_off;	/* end of the last range added, from text_start */
	struct codectl_jit_unwind_table *head;
	struct codectl_jit_unwind_table *cur;	/* the last of the chain */
	size_t map_size;	/* of each table's mapping */
	uint32_t nr_fres;	/* entries per table */
	unsigned int flags;
};

/* A new table, empty (mmap'd memory is zero: next 0, entries' padding 0). */
static struct codectl_jit_unwind_table *jit_table_new(const struct codectl_jit *jit)
{
	struct codectl_jit_unwind_table *t;

	t = mmap(NULL, jit->map_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->reserved_len = (uint64_t)jit->nr_fres * JIT_FRE_STRIDE;
	t->fre_stride = JIT_FRE_STRIDE;
	t->fre_size = CODECTL_JIT_FRE_SIZE_VER0;
	return t;
}

static void jit_tables_free(struct codectl_jit *jit)
{
	struct codectl_jit_unwind_table *t = jit->head, *next;

	while (t) {
		next = (struct codectl_jit_unwind_table *)(uintptr_t)t->next;
		munmap(t, jit->map_size);
		t = next;
	}
	jit->head = jit->cur = NULL;
}

CODECTL_EXPORT struct codectl_jit *
codectl_jit_create(uint64_t text_start, uint64_t text_end,
		   unsigned int fres_per_table, unsigned int flags)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t hdr = sizeof(struct codectl_jit_unwind_table);
	struct codectl_jit *jit;
	int saved = errno;

	if (text_start >= text_end || text_end - text_start > UINT32_MAX ||
	    fres_per_table > JIT_MAX_FRES || (flags & ~CODECTL_JIT_UNREGISTERED)) {
		errno = EINVAL;
		return NULL;
	}
	if (!fres_per_table)
		fres_per_table = (page - hdr) / JIT_FRE_STRIDE;
	jit = calloc(1, sizeof(*jit));
	if (!jit)
		return NULL;
	jit->text_start = text_start;
	jit->text_end = text_end;
	jit->nr_fres = fres_per_table;
	jit->flags = flags;
	jit->map_size = (hdr + (size_t)fres_per_table * JIT_FRE_STRIDE +
			 page - 1) & ~(page - 1);
	jit->head = jit->cur = jit_table_new(jit);
	if (!jit->head)
		goto fail;
	if (!(flags & CODECTL_JIT_UNREGISTERED)) {
		struct codectl_jit_info info = {
			.text_start = text_start,
			.text_end = text_end,
			.unwind_head = (uint64_t)(uintptr_t)jit->head,
		};

		if (codectl_register_jit(&info))
			goto fail;
	}
	errno = saved;
	return jit;
fail:
	saved = errno;
	jit_tables_free(jit);
	free(jit);
	errno = saved;
	return NULL;
}

/* Write entry @i of @t; it is published by the caller. */
static void jit_fre_write(struct codectl_jit_unwind_table *t, uint64_t i,
			  uint32_t off, uint32_t size,
			  const struct codectl_jit_rule *rule)
{
	struct codectl_jit_unwind_fre e;

	memset(&e, 0, sizeof(e));
	e.size = size;
	e.ip_off = off;
	e.cfa_off = rule->cfa_off;
	e.ra_off = rule->ra_off;
	e.fp_off = rule->fp_off;
	e.info = (uint8_t)rule->flags;
	memcpy((unsigned char *)(t + 1) + i * JIT_FRE_STRIDE, &e, sizeof(e));
}

CODECTL_EXPORT int codectl_jit_add(struct codectl_jit *jit, uint64_t start,
				   uint64_t size,
				   const struct codectl_jit_rule *rule)
{
	struct codectl_jit_unwind_table *t, *n;
	uint64_t off, used;

	if (!jit || !rule || !size || (rule->flags & ~JIT_RULE_FLAGS) ||
	    start < jit->text_start || start >= jit->text_end ||
	    start - jit->text_start < jit->next_off ||
	    size > jit->text_end - start) {
		errno = EINVAL;
		return -1;
	}
	off = start - jit->text_start;	/* < 2^32: the region is */
	t = jit->cur;
	used = t->used_len;		/* only this thread writes it */
	if (used < t->reserved_len) {
		jit_fre_write(t, used / JIT_FRE_STRIDE, (uint32_t)off,
			      (uint32_t)size, rule);
		/* The entry, then used_len: the kernel load-acquires it. */
		__atomic_store_n(&t->used_len, used + JIT_FRE_STRIDE,
				 __ATOMIC_RELEASE);
	} else {
		n = jit_table_new(jit);
		if (!n)
			return -1;
		jit_fre_write(n, 0, (uint32_t)off, (uint32_t)size, rule);
		n->used_len = JIT_FRE_STRIDE;
		/* The whole new table, then the link to it. */
		__atomic_store_n(&t->next, (uint64_t)(uintptr_t)n,
				 __ATOMIC_RELEASE);
		jit->cur = n;
	}
	jit->next_off = off + size;
	return 0;
}

CODECTL_EXPORT int codectl_jit_destroy(struct codectl_jit *jit)
{
	int saved = errno;

	if (!jit)
		return 0;
	if (!(jit->flags & CODECTL_JIT_UNREGISTERED) &&
	    codectl_unregister(jit->text_start, jit->text_end) &&
	    errno != ENOENT)
		return -1;
	/* The kernel no longer reads the tables. */
	jit_tables_free(jit);
	free(jit);
	errno = saved;
	return 0;
}

CODECTL_EXPORT const struct codectl_jit_unwind_table *
codectl_jit_head(const struct codectl_jit *jit)
{
	return jit ? jit->head : NULL;
}
