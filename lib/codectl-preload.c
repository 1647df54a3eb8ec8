// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcodectl-preload.so: the LD_PRELOAD variant of the audit module.
 * Its constructor registers every loaded object, with its own or a
 * synthesised SFrame section (codectl_register_object_all()); it wraps
 * dlopen() and dlclose() to register what a dlopen() brought and to
 * unregister what a dlclose() took away, with no change to the program.
 *
 *   LD_PRELOAD=/usr/local/lib/codectl/libcodectl-preload.so program
 *
 * For programs where LD_AUDIT is unwelcome (it slows symbol binding in
 * some glibc releases, and a program can have only so many audit
 * modules); the audit module sees objects earlier (before their
 * constructors run) and also those of dlmopen() namespaces, which this
 * one does not.
 *
 * The objects are tracked by their load address and name: an object
 * dlopen()ed many times is registered once and unregistered when the
 * loader really unloads it.  Without /dev/codectl nothing is registered
 * and the program runs unchanged; each later dlopen() tries again, so
 * objects loaded before the module came are registered then.  Nothing is
 * printed unless CODECTL_DEBUG is set in the environment.  It carries its
 * own copy of libcodectl (its symbols are not exported); thread-safe (one
 * lock around the table), not async-signal-safe (as dlopen() is not).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* One object registered: where, which, and its segments. */
struct pl_obj {
	struct pl_obj *next;
	uintptr_t addr;
	char *name;
	struct codectl__segs *segs;
	int seen;			/* in the current scan */
};

static pthread_mutex_t pl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_obj *pl_objs;
static int pl_no_device;
static void *(*real_dlopen)(const char *, int);
static int (*real_dlclose)(void *);

static const char *name_of(const char *name)
{
	return name && name[0] ? name : "(main program)";
}

static struct pl_obj *pl_find(uintptr_t addr, const char *name)
{
	struct pl_obj *o;

	for (o = pl_objs; o; o = o->next)
		if (o->addr == addr && !strcmp(o->name, name))
			return o;
	return NULL;
}

/* Register @info unless it is known; mark it seen. */
static int pl_add(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	struct pl_obj *o;
	int ret;

	(void)size;
	(void)data;
	o = pl_find(info->dlpi_addr, name);
	if (o) {
		o->seen = 1;
		return 0;
	}
	if (pl_no_device)
		return 0;
	ret = codectl_register_object_all(info, 0);
	if (ret < 0) {
		if (errno == ENODEV)
			pl_no_device = 1;
		codectl__debug("codectl-preload: %s: not registered: %s\n",
			       name_of(name), strerror(errno));
		return 0;
	}
	codectl__debug("codectl-preload: %s: %d segment%s registered\n",
		       name_of(name), ret, ret == 1 ? "" : "s");
	o = calloc(1, sizeof(*o));
	if (!o)
		return 0;
	o->addr = info->dlpi_addr;
	o->name = strdup(name);
	o->segs = codectl__segments(info);
	if (!o->name || !o->segs) {
		free(o->name);
		free(o->segs);
		free(o);
		return 0;
	}
	o->seen = 1;
	o->next = pl_objs;
	pl_objs = o;
	return 0;
}

/* Unregister the objects the last scan did not see: unloaded. */
static void pl_drop_unseen(void)
{
	struct pl_obj **p = &pl_objs, *o;

	while ((o = *p)) {
		if (o->seen) {
			o->seen = 0;
			p = &o->next;
			continue;
		}
		codectl__unregister_segments(o->segs, "codectl-preload");
		codectl__debug("codectl-preload: %s: unregistered\n",
			       name_of(o->name));
		*p = o->next;
		free(o->segs);
		free(o->name);
		free(o);
	}
}

/* Bring the registrations in line with the loaded objects. */
static void pl_scan(int force)
{
	int saved = errno;

	pthread_mutex_lock(&pl_lock);
	/*
	 * After a failure for want of the module, try again: it may have
	 * been loaded since.
	 */
	if (pl_no_device && force)
		pl_no_device = 0;
	dl_iterate_phdr(pl_add, NULL);
	pl_drop_unseen();
	pthread_mutex_unlock(&pl_lock);
	errno = saved;
}

static void pl_resolve(void)
{
	if (!real_dlopen)
		real_dlopen = (void *(*)(const char *, int))
			      dlsym(RTLD_NEXT, "dlopen");
	if (!real_dlclose)
		real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
}

__attribute__((constructor)) static void pl_init(void)
{
	pl_resolve();
	pl_scan(0);
}

CODECTL_EXPORT void *dlopen(const char *file, int mode)
{
	void *h;

	pl_resolve();
	if (!real_dlopen) {
		errno = ENOSYS;
		return NULL;
	}
	h = real_dlopen(file, mode);
	if (h)
		pl_scan(1);
	return h;
}

CODECTL_EXPORT int dlclose(void *handle)
{
	int ret;

	pl_resolve();
	if (!real_dlclose)
		return -1;
	ret = real_dlclose(handle);
	if (!ret)
		pl_scan(0);
	return ret;
}
