// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, fair shares: whom each object is charged to, and the
 * order the objects waiting are served in.
 *
 * An object is the system's when root owns its file and root alone may
 * write it (mode bits), else its owner's; a file of root's that others
 * may write is charged to the uid of the process that maps it.  Records
 * (the module's, or rescan()'s) wait in a list of PENDING_MAX, of which
 * the users' hold at most three quarters and one user's PENDING_OWNER
 * (more are dropped: found again at the next rescan).  What the module
 * queued (a process unwinds through the object now) is served before
 * what rescan() found; within each, the system's first, then the owner
 * that has had the least synthesis time, each in its order.  Owners
 * past the first OWNERS_MAX seen share the last slot.  A user's entries
 * beyond its share of the cache (CACHE_SHARE of --cache-max) are used
 * once and not kept.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "daemon.h"

#define PENDING_MAX	4096
#define PENDING_OWNER	512		/* of one owner not the system */
#define PENDING_USERS	(PENDING_MAX * 3 / 4)	/* of all but the system */
#define OWNERS_MAX	64

struct pending {
	struct codectl_demand r;
	int queued;
	unsigned int owner;	/* index in owners[] */
};

struct owner {
	uint64_t id;		/* OWNER_SYSTEM, or a uid */
	double synth_ms;	/* synthesis time spent on its objects */
	uint64_t cache_bytes;	/* bytes of cache entries written for it */
	unsigned int pending;
	unsigned int demanded;	/* of them, queued by the module */
};

static struct pending pending[PENDING_MAX];
static unsigned int npending;
static unsigned int npending_users;	/* of them, not the system's */
static struct owner owners[OWNERS_MAX];
static unsigned int nowners;
static unsigned long dropped;

/* The slot of @id in owners[], made if need be. */
static unsigned int owner_slot(uint64_t id)
{
	unsigned int i;

	for (i = 0; i < nowners; i++)
		if (owners[i].id == id)
			return i;
	if (nowners == OWNERS_MAX)
		return OWNERS_MAX - 1;
	owners[nowners].id = id;
	return nowners++;
}

/**
 * owner_of() - whom an object is charged to
 * @st:		its file, as opened or stat()ed through /proc/PID/map_files
 * @pid:	a process that maps it, or 0
 *
 * Return: OWNER_SYSTEM, or a uid.
 */
uint64_t owner_of(const struct stat *st, unsigned int pid)
{
	char p[32];
	struct stat ps;

	if (st->st_uid)
		return st->st_uid;
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
		return OWNER_SYSTEM;
	snprintf(p, sizeof(p), "/proc/%u", pid);
	if (pid && !stat(p, &ps))
		return ps.st_uid;
	return OWNER_NOBODY;
}

/* The same file, as queued? */
static int same_record(const struct codectl_demand *a,
		       const struct codectl_demand *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/**
 * pending_add() - a record to serve
 * @r:		the record, its identity filled
 * @queued:	from the module's queue (else from rescan())
 *
 * A file already waiting is not added again; one past its owner's share
 * of the list, or past the list's size, is dropped (the next rescan, or
 * its next queueing, finds it).
 */
void pending_add(const struct codectl_demand *r, int queued)
{
	struct pending *p;
	struct stat st;
	char path[128];
	unsigned int i, o;
	int user;

	for (i = 0; i < npending; i++)
		if (same_record(&pending[i].r, r)) {
			p = &pending[i];
			owners[p->owner].demanded += queued && !p->queued;
			p->queued |= queued;
			return;
		}
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", r->pid,
		 (unsigned long long)r->vm_start,
		 (unsigned long long)r->vm_end);
	if (stat(path, &st) && (!r->path[0] || stat(r->path, &st)))
		return;	/* gone: nothing to serve */
	o = owner_slot(owner_of(&st, r->pid));
	user = owners[o].id != OWNER_SYSTEM;
	if (npending == PENDING_MAX ||
	    (user && (owners[o].pending >= PENDING_OWNER ||
		      npending_users >= PENDING_USERS))) {
		dropped++;
		return;
	}
	p = &pending[npending++];
	p->r = *r;
	p->queued = queued;
	p->owner = o;
	owners[o].pending++;
	owners[o].demanded += queued;
	npending_users += user;
}

/**
 * pending_next() - the next record to serve, taken off the list
 * @r:		out: the record
 * @queued:	out: whether the module queued it
 * @owner:	out: its owner's slot, for share_synth() and share_cache()
 *
 * Return: 1, or 0 when nothing waits.
 */
int pending_next(struct codectl_demand *r, int *queued, unsigned int *owner)
{
	unsigned int i, o, best = OWNERS_MAX;
	int demand = 0;

	if (!npending)
		return 0;
	for (o = 0; o < nowners && !demand; o++)
		demand = owners[o].demanded > 0;
	for (o = 0; o < nowners; o++) {
		if (!(demand ? owners[o].demanded : owners[o].pending))
			continue;
		if (owners[o].id == OWNER_SYSTEM) {
			best = o;
			break;
		}
		if (best == OWNERS_MAX ||
		    owners[o].synth_ms < owners[best].synth_ms)
			best = o;
	}
	for (i = 0; i < npending && (pending[i].owner != best ||
				     (demand && !pending[i].queued)); i++)
		;
	*r = pending[i].r;
	*queued = pending[i].queued;
	*owner = best;
	owners[best].pending--;
	owners[best].demanded -= pending[i].queued;
	npending_users -= owners[best].id != OWNER_SYSTEM;
	memmove(&pending[i], &pending[i + 1],
		(npending - i - 1) * sizeof(pending[0]));
	npending--;
	return 1;
}

/**
 * share_synth() - charge synthesis time to an owner
 * @owner:	its slot
 * @ms:		the time
 */
void share_synth(unsigned int owner, double ms)
{
	owners[owner].synth_ms += ms;
}

/**
 * share_cache() - may an owner keep a new cache entry?
 * @owner:	its slot
 * @bytes:	the entry's size
 *
 * Return: 1 when it is the system's or within the owner's share of the
 * cache (the bytes are then counted), else 0.
 */
int share_cache(unsigned int owner, uint64_t bytes)
{
	if (owners[owner].id == OWNER_SYSTEM)
		return 1;
	if (owners[owner].cache_bytes + bytes > d.cache_max / CACHE_SHARE)
		return 0;
	owners[owner].cache_bytes += bytes;
	return 1;
}

/**
 * share_name() - an owner, for the log
 * @owner:	its slot
 * @buf:	where to write it
 * @len:	its size
 *
 * Return: @buf.
 */
const char *share_name(unsigned int owner, char *buf, size_t len)
{
	uint64_t id = owners[owner].id;

	if (id == OWNER_SYSTEM)
		snprintf(buf, len, "the system");
	else if (id == OWNER_NOBODY)
		snprintf(buf, len, "nobody known");
	else
		snprintf(buf, len, "uid %llu", (unsigned long long)id);
	return buf;
}

/**
 * share_dropped() - records dropped for want of room in the list
 *
 * Return: how many, this run.
 */
unsigned long share_dropped(void)
{
	return dropped;
}
