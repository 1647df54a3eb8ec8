// SPDX-License-Identifier: GPL-2.0
/*
 * The demand queue's overflow test (tests/vm/ondemand.sh): dlopen() every
 * DIR/plug-NNN.so given, print "ready", then, once per SIGUSR1, call each
 * one's plug_spin() for N iterations (a pass), so that a profiler samples
 * code in every one of them.  Built without frame pointers or SFrame.
 *
 *   many DIR COUNT N      prints "pass K done" after each pass; SIGTERM
 *                         ends it
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	void (**spin)(unsigned long);
	unsigned long n;
	int count, i, pass = 0;
	char path[4096];
	sigset_t none;

	if (argc != 4)
		return 2;
	count = atoi(argv[2]);
	n = strtoul(argv[3], NULL, 0);
	spin = calloc(count, sizeof(*spin));
	if (!spin)
		return 1;
	for (i = 0; i < count; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/plug-%03d.so", argv[1], i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h || !(spin[i] = (void (*)(unsigned long))dlsym(h, "plug_spin"))) {
			fprintf(stderr, "many: %s: %s\n", path, dlerror());
			return 1;
		}
	}
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	sigemptyset(&none);
	for (;;) {
		while (!go)
			sigsuspend(&none);
		go = 0;
		for (i = 0; i < count; i++)
			spin[i](n);
		printf("pass %d done\n", ++pass);
		fflush(stdout);
	}
}
