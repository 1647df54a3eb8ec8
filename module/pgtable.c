// SPDX-License-Identifier: GPL-2.0
/*
 * codectl: is a user address executable?  The page tables answer without
 * a lock, as GUP-fast and perf's data-page-size samples read them: with
 * interrupts off, no page table of the walk can be freed under it (their
 * freeing waits for an IPI or an RCU grace period, which a CPU with
 * interrupts off holds up).  This is what lets a walk in NMI know that a
 * return address is in code it has no registration for: JIT code in
 * anonymous memory, an object discovery has not examined yet.
 */
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/page-flags.h>
#include <linux/pgtable.h>

#include "arch.h"
#include "compat.h"
#include "internal.h"

/*
 * Anonymous memory (a JIT's code), as the page's folio says: read without
 * a reference, as GUP-fast reads it, the struct page staying valid while
 * interrupts are off even if the page is being unmapped.  Special PTEs
 * (a PFN map) have no struct page to ask.
 */
static unsigned int codectl_page_anon(struct page *page)
{
	return PageAnon(page) ? CODECTL_PAGE_ANON : 0;
}

/**
 * codectl_user_page() - is @addr in a present, executable user page of @mm?
 * @mm:		the address space (current's: its page tables are live)
 * @addr:	a user address
 *
 * Lock-free and fault-free: any context, NMI included.  A page that is
 * not resident says no (nor could its code be read without a fault).
 *
 * Return: 0, or CODECTL_PAGE_EXEC when the page-table entry that maps
 * @addr is present, user and executable, with CODECTL_PAGE_ANON when the
 * page is anonymous memory (JIT code) rather than a file's.
 */
unsigned int codectl_user_page(struct mm_struct *mm, unsigned long addr)
{
	unsigned long flags;
	pgd_t *pgdp, pgd;
	p4d_t *p4dp, p4d;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;
	pte_t *ptep, pte;
	unsigned int exec = 0;

	if (addr >= TASK_SIZE_MAX)
		return false;
	local_irq_save(flags);
	pgdp = pgd_offset(mm, addr);
	pgd = READ_ONCE(*pgdp);
	if (pgd_none(pgd) || pgd_leaf(pgd))
		goto out;
	p4dp = p4d_offset_lockless(pgdp, pgd, addr);
	p4d = READ_ONCE(*p4dp);
	if (!p4d_present(p4d) || p4d_leaf(p4d))
		goto out;
	pudp = pud_offset_lockless(p4dp, p4d, addr);
	pud = READ_ONCE(*pudp);
	if (!pud_present(pud))
		goto out;
	if (pud_leaf(pud)) {
		exec = codectl_arch_pud_user_exec(pud) ? CODECTL_PAGE_EXEC : 0;
		goto out;
	}
	pmdp = pmd_offset_lockless(pudp, pud, addr);
	pmd = codectl_pmdp_get_lockless(pmdp);
	if (!pmd_present(pmd))
		goto out;
	if (pmd_leaf(pmd)) {
		if (codectl_arch_pmd_user_exec(pmd) && pfn_valid(pmd_pfn(pmd)))
			exec = CODECTL_PAGE_EXEC |
			       codectl_page_anon(pmd_page(pmd));
		goto out;
	}
	if (pmd_bad(pmd))
		goto out;
	/* The PTE page is in the direct map (no HIGHPTE on 64-bit). */
	ptep = pte_offset_kernel(&pmd, addr);
	pte = codectl_ptep_get_lockless(ptep);
	if (!codectl_arch_pte_user_exec(pte))
		goto out;
	exec = CODECTL_PAGE_EXEC;
	if (!pte_special(pte) && pfn_valid(pte_pfn(pte)))
		exec |= codectl_page_anon(pte_page(pte));
out:
	local_irq_restore(flags);
	return exec;
}
