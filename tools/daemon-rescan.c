// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, every process's mappings: at start, and whenever the
 * module says records were lost, every running process's executable
 * file mappings are added to what waits (daemon-shares.c), after what
 * the module queues (after a restart, a crash or a module reload nothing
 * in use stays uncovered).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "daemon.h"

/**
 * collect() - every executable file mapping of every process, to serve
 *
 * What a restart, a crash or a full queue may have missed.
 */
void collect(void)
{
	struct codectl_demand r;
	struct dirent *e;
	char p[320], line[4600];
	DIR *proc = opendir("/proc");

	if (!proc)
		return;
	d.rescans++;
	d.last_rescan = now_ms();
	while (!stop && (e = readdir(proc))) {
		unsigned long long lo, hi, off, ino;
		unsigned int maj, min;
		char perms[8];
		FILE *f;
		int n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/maps", e->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *path;
			struct stat st;

			n = 0;
			if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n",
				   &lo, &hi, perms, &off, &maj, &min, &ino,
				   &n) < 7 || perms[2] != 'x' || !ino || !n)
				continue;
			path = line + n;
			path[strcspn(path, "\n")] = 0;
			memset(&r, 0, sizeof(r));
			r.pid = atoi(e->d_name);
			r.vm_start = lo;
			r.vm_end = hi;
			r.vm_pgoff = off;
			if (path[0] == '/' && strlen(path) < sizeof(r.path) &&
			    !strstr(path, " (deleted)"))
				strcpy(r.path, path);
			/* The identity is the file's as it is now. */
			snprintf(p, sizeof(p), "/proc/%u/map_files/%llx-%llx",
				 r.pid, lo, hi);
			if (stat(p, &st) || !S_ISREG(st.st_mode))
				continue;
			r.dev = st.st_dev;
			r.ino = st.st_ino;
			r.size = st.st_size;
			r.mtime_sec = st.st_mtim.tv_sec;
			r.mtime_nsec = st.st_mtim.tv_nsec;
			pending_add(&r, 0);
		}
		fclose(f);
	}
	closedir(proc);
}
