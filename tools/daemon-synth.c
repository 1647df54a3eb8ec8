// SPDX-License-Identifier: GPL-2.0
/*
 * codectl daemon, synthesis in a child: libcodectl's
 * codectl_import_synth() as nobody, with limits on time and memory (a
 * hostile ELF costs a child without privileges, never the daemon), from
 * a sealed copy of the file whose SHA-256 the daemon took: the entry's
 * key is the digest of the very bytes synthesised from, whatever the
 * file's owner writes to it meanwhile.  The child sends the section (and
 * its register table, where the object needs one: ld.so) back down a
 * pipe and the daemon writes the cache entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <codectl.h>

#include "daemon.h"

/*
 * Write (@out) or read exactly @len bytes of a pipe: 1, or 0 at EOF or
 * an error.
 */
static int pipe_all(int fd, void *buf, size_t len, int out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		p += n;
		len -= n;
	}
	return 1;
}

/*
 * A child's address space: SYNTH_AS, or half of the machine's memory where
 * that is less, so that a hostile file cannot make one synthesis take the
 * whole of a small machine's memory (a 2 GiB guest's OOM killer then
 * picks anyone).
 */
static rlim_t synth_as(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long half;

	if (pages <= 0 || page <= 0)
		return SYNTH_AS;
	half = (unsigned long long)pages * (unsigned long long)page / 2;
	return half < SYNTH_AS ? half : SYNTH_AS;
}

/* The synthesis child: never returns. */
static void synth_child(int fd, int out, uint64_t file_size)
{
	struct rlimit as = { synth_as(), synth_as() },
		      cpu = { SYNTH_SECONDS, SYNTH_SECONDS };
	struct entry_hdr hdr;
	uint64_t vaddr;
	size_t size, regs_size = 0;
	void *sec = NULL, *regs = NULL;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	index_close();		/* nobody's to write */
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
		_exit(EPERM);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	setrlimit(RLIMIT_AS, &as);
	setrlimit(RLIMIT_CPU, &cpu);
	alarm(SYNTH_SECONDS);
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic));
	hdr.file_size = file_size;
	if (codectl_import_synth_regs(fd, &sec, &size, &vaddr, &regs,
				      &regs_size, NULL)) {
		int err = errno;

		if (err != ENOENT && err != ENODATA)
			_exit(err & 0xff ?: EIO);
		hdr.kind = ENTRY_NO_CFI;
	} else {
		if (regs_size > ENTRY_MAX)
			_exit(EFBIG);
		hdr.kind = ENTRY_SECTION;
		hdr.vaddr = vaddr;
		hdr.size = size;
		hdr.regs_size = (uint32_t)regs_size;
	}
	if (!pipe_all(out, &hdr, sizeof(hdr), 1) ||
	    (hdr.size && !pipe_all(out, sec, hdr.size, 1)) ||
	    (hdr.regs_size && !pipe_all(out, regs, hdr.regs_size, 1)))
		_exit(EIO);
	_exit(0);
}

/*
 * A copy of the @size bytes of the file at @fd in a sealed memfd (no
 * write, no resize, by anyone), or -1: ESTALE when its SHA-256 is not
 * @md (the file changed since the daemon hashed it).
 */
static int sealed_copy(int fd, uint64_t size, const unsigned char *md)
{
	unsigned char got[DIGEST_LEN];
	int m, err;

	m = memfd_create("codectl-synth", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m < 0)
		return -1;
	if (file_sha256(fd, size, m, got))
		goto fail;
	errno = ESTALE;
	if (memcmp(got, md, DIGEST_LEN))
		goto fail;
	if (fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
		  F_SEAL_SEAL))
		goto fail;
	return m;
fail:
	err = errno;
	close(m);
	errno = err;
	return -1;
}

/*
 * Synthesise the entry for the object at @fd, @file_size bytes whose
 * SHA-256 is @md, into @path.  A child does the work, as nobody (no
 * capabilities, no new privileges), limited in time and memory: the file
 * is whatever a process mapped, and libdw parses it; it reads a sealed
 * copy, checked against @md.  It sends the header and the section down a
 * pipe; the daemon checks them and writes the entry, with @md and the
 * section's checksum (its own: the child's word is taken for nothing
 * else).  Returns 0 (written), ESTALE (the file is not @md any more),
 * the errno the child reported (ENOENT/ENODATA: no CFI, written as
 * such), or EIO when it died or sent something else.
 */
int synth_entry(int fd, const unsigned char *md, const char *path,
		uint64_t file_size, const char *name)
{
	struct entry_hdr hdr;
	void *sec = NULL;
	int p[2], status, ok, copy;
	pid_t pid;

	copy = sealed_copy(fd, file_size, md);
	if (copy < 0)
		return errno;
	if (pipe2(p, O_CLOEXEC)) {
		close(copy);
		return errno;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(copy);
		return errno;
	}
	if (!pid)
		synth_child(copy, p[1], file_size);
	close(p[1]);
	close(copy);
	say("synthesising %s (child %d)", name, (int)pid);
	ok = pipe_all(p[0], &hdr, sizeof(hdr), 0) &&
	     !memcmp(hdr.magic, ENTRY_MAGIC, sizeof(hdr.magic)) &&
	     hdr.file_size == file_size &&
	     (hdr.kind == ENTRY_NO_CFI ? !hdr.size && !hdr.regs_size :
	      hdr.kind == ENTRY_SECTION && hdr.size && hdr.size <= ENTRY_MAX &&
	      hdr.regs_size <= ENTRY_MAX);
	if (ok && hdr.size) {
		size_t len = hdr.size + hdr.regs_size;

		sec = malloc(len);
		ok = sec && pipe_all(p[0], sec, len, 0);
		if (ok)
			section_sum(sec, len, hdr.sum);
	}
	memcpy(hdr.file_sha256, md, DIGEST_LEN);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(sec);
			return EIO;
		}
	if (!WIFEXITED(status)) {
		say("synthesis for %s killed by signal %d", name,
		    WTERMSIG(status));
		free(sec);
		return EIO;
	}
	if (WEXITSTATUS(status) || !ok) {
		free(sec);
		return WEXITSTATUS(status) ?: EIO;
	}
	status = entry_write(path, &hdr, sec) ? errno ?: EIO : 0;
	free(sec);
	return status;
}
