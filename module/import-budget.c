// SPDX-License-Identifier: GPL-2.0
/*
 * Module, the imports' budget: whom an import is charged to, and whether
 * it fits.  An object file is a system object when root owns it and its
 * mode lets nobody else write it; any other file is charged to its owner
 * (a file of root's that others may write: to one bucket of its own, as
 * anyone could have written it).  What a user cannot forge decides: the
 * inode of the very file imported (the descriptor the importer hands
 * over), not a path or anything the importer says.
 *
 * The imports together hold at most import_max_bytes; one owner's at most
 * import_user_max_bytes, and those of every owner but the system at most
 * half of import_max_bytes, so that system objects always find room.  The
 * charges are kept least recently used first: import.c evicts, from the
 * head, those whose file no process maps before it refuses an import.
 * No lock of its own: every function but codectl_owner_of() is called
 * under import.c's lock.  More: docs/design.md, "Fair shares".
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/stat.h>
#include <linux/uidgid.h>

#include "internal.h"

static unsigned long codectl_import_max_bytes = 128UL << 20;
module_param_named(import_max_bytes, codectl_import_max_bytes, ulong, 0644);
MODULE_PARM_DESC(import_max_bytes,
		 "Total size of the SFrame sections CODECTL_IOC_IMPORT may hold, and their kept tables (default 128 MiB)");

static unsigned long codectl_import_user_max_bytes = 32UL << 20;
module_param_named(import_user_max_bytes, codectl_import_user_max_bytes,
		   ulong, 0644);
MODULE_PARM_DESC(import_user_max_bytes,
		 "Size of the imports of the files one user owns (not the system's), at most (default 32 MiB)");

static LIST_HEAD(codectl_budget_lru_list);	/* least recently used first */
static u64 codectl_budget_total;		/* bytes charged */
static u64 codectl_budget_users;		/* of them, not the system's */

/**
 * codectl_owner_of() - whom a file's import or queue record is charged to
 * @inode:	the file's inode
 *
 * Return: CODECTL_OWNER_SYSTEM (root's, writable by root alone: mode
 * bits), CODECTL_OWNER_SHARED (root's, writable by others), else the
 * owner's uid in the initial user namespace.
 */
u64 codectl_owner_of(const struct inode *inode)
{
	uid_t uid = from_kuid(&init_user_ns, inode->i_uid);

	if (uid)
		return uid;
	return inode->i_mode & 0022 ? CODECTL_OWNER_SHARED :
					       CODECTL_OWNER_SYSTEM;
}

/**
 * codectl_budget_lru() - the charges, least recently used first
 *
 * Return: the list head; walk it under import.c's lock.
 */
struct list_head *codectl_budget_lru(void)
{
	return &codectl_budget_lru_list;
}

/**
 * codectl_budget_charge() - charge an import just inserted
 * @c:		its charge, @owner and @bytes set
 */
void codectl_budget_charge(struct codectl_charge *c)
{
	list_add_tail(&c->lru, &codectl_budget_lru_list);
	codectl_budget_total += c->bytes;
	if (c->owner != CODECTL_OWNER_SYSTEM)
		codectl_budget_users += c->bytes;
}

/**
 * codectl_budget_uncharge() - an import is unhashed
 * @c:		its charge
 */
void codectl_budget_uncharge(struct codectl_charge *c)
{
	list_del_init(&c->lru);
	codectl_budget_total -= c->bytes;
	if (c->owner != CODECTL_OWNER_SYSTEM)
		codectl_budget_users -= c->bytes;
}

/**
 * codectl_budget_touch() - an import is used: the most recently now
 * @c:		its charge
 */
void codectl_budget_touch(struct codectl_charge *c)
{
	list_move_tail(&c->lru, &codectl_budget_lru_list);
}

/**
 * codectl_budget_shortfall() - what @c lacks to fit
 * @c:		the charge of an import not inserted yet
 * @s:		out: bytes over each bound (<= 0: within it)
 *
 * The owner's total is summed over the charges: at most one walk of the
 * imports, once per import.
 */
void codectl_budget_shortfall(const struct codectl_charge *c,
			      struct codectl_shortfall *s)
{
	struct codectl_charge *o;
	u64 own = 0;

	s->owner = c->owner;
	s->total = codectl_budget_total + c->bytes -
		   READ_ONCE(codectl_import_max_bytes);
	s->users = 0;
	s->own = 0;
	if (c->owner == CODECTL_OWNER_SYSTEM)
		return;
	list_for_each_entry(o, &codectl_budget_lru_list, lru)
		if (o->owner == c->owner)
			own += o->bytes;
	s->users = codectl_budget_users + c->bytes -
		   READ_ONCE(codectl_import_max_bytes) / 2;
	s->own = own + c->bytes - READ_ONCE(codectl_import_user_max_bytes);
}

/**
 * codectl_budget_helps() - would dropping @c's import reduce @s?
 * @s:		a shortfall from codectl_budget_shortfall()
 * @c:		the charge of an import in the store
 * @take:	if so, count it as dropped (reduce @s)
 *
 * Return: true when @c is under a bound that @s exceeds.
 */
bool codectl_budget_helps(struct codectl_shortfall *s,
			  const struct codectl_charge *c, bool take)
{
	bool user = c->owner != CODECTL_OWNER_SYSTEM;
	bool helps = s->total > 0 || (s->users > 0 && user) ||
		     (s->own > 0 && c->owner == s->owner);

	if (helps && take) {
		s->total -= c->bytes;
		if (user)
			s->users -= c->bytes;
		if (c->owner == s->owner)
			s->own -= c->bytes;
	}
	return helps;
}

/**
 * codectl_budget_verdict() - does the import fit?
 * @s:		its shortfall, less what it replaces or evicts
 *
 * Return: 0; -EDQUOT when its owner's share (or the users' half) is
 * full; else -ENOSPC when import_max_bytes is.
 */
int codectl_budget_verdict(const struct codectl_shortfall *s)
{
	if (s->own > 0 || s->users > 0)
		return -EDQUOT;
	return s->total > 0 ? -ENOSPC : 0;
}

/**
 * codectl_budget_max() - the most all imports together may hold
 *
 * Return: import_max_bytes; a section larger could never be held.
 */
u64 codectl_budget_max(void)
{
	return READ_ONCE(codectl_import_max_bytes);
}

/**
 * codectl_budget_show() - the budget's lines of debugfs codectl/imports
 * @m:		the seq_file
 */
void codectl_budget_show(struct seq_file *m)
{
	seq_printf(m, "system_bytes %llu\nusers_bytes %llu\n",
		   codectl_budget_total - codectl_budget_users,
		   codectl_budget_users);
}
