#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build-level tests of libcodectl, in TAP: the public header in C and C++,
# the exported symbols of the shared library, the install tree and the
# pkg-config file.  Run from tests/unit after the library is built.

LIB=../../lib
UAPI=../../uapi
CC=${CC:-cc}
CXX=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

API="codectl
codectl_check_sframe
codectl_close
codectl_elf_info_from_phdr
codectl_frame_name
codectl_get_fd
codectl_hook_stats
codectl_import_clear
codectl_import_file
codectl_import_remove
codectl_import_sframe
codectl_import_sframe_regs
codectl_import_synth
codectl_import_synth_regs
codectl_jit_add
codectl_jit_create
codectl_jit_destroy
codectl_jit_head
codectl_query
codectl_query_pid
codectl_register_all
codectl_register_elf
codectl_register_jit
codectl_register_object
codectl_register_object_all
codectl_register_self
codectl_set_fd
codectl_sframe_synth
codectl_stop_name
codectl_unregister
codectl_unregister_object
codectl_unwind_request
codectl_unwind_self
codectl_unwind_stats
codectl_version"

echo "1..13"
. ./tap.sh

# The header, its macros and structs, as C++.
cxx_syntax() {
	cat <<'CC' | $CXX -x c++ -std="$1" -fsyntax-only -Wall -Wextra -Werror \
			-pedantic -I$LIB/include -I$UAPI -
#include <codectl.h>
unsigned long reqs[] = { CODECTL_IOC_UNREGISTER, CODECTL_IOC_REGISTER_ELF,
	CODECTL_IOC_REGISTER_JIT, CODECTL_IOC_QUERY, CODECTL_IOC_VERSION,
	CODECTL_IOC(CODECTL_NR_OPTIONS) };
struct codectl_elf_info e = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
struct codectl_elf_buf b;
int (*fn)(unsigned int, void *, size_t, unsigned int) = codectl;
CC
}
check "header compiles as C++98" cxx_syntax c++98
check "header compiles as C++20" cxx_syntax c++20

c_syntax() {
	printf '#include <codectl.h>\n' |
		$CC -x c -std=c99 -fsyntax-only -Wall -Wextra -Werror -pedantic \
			-I$LIB/include -I$UAPI -
}
check "header is self-contained C99" c_syntax

# extern "C": a C++ program links against the .so and runs.
cxx_link() {
	cat >"$tmp/t.cc" <<'CC'
#include <codectl.h>
#include <cerrno>
int main()
{
	struct codectl_version v;
	void *fns[] = {
		(void *)codectl, (void *)codectl_set_fd, (void *)codectl_close,
		(void *)codectl_register_elf, (void *)codectl_register_jit,
		(void *)codectl_unregister, (void *)codectl_query,
		(void *)codectl_version, (void *)codectl_elf_info_from_phdr,
		(void *)codectl_register_object,
		(void *)codectl_unregister_object,
		(void *)codectl_register_self,
		(void *)codectl_jit_create, (void *)codectl_jit_add,
		(void *)codectl_jit_destroy, (void *)codectl_jit_head,
	};
	(void)fns;
	/* Without the module: ENODEV; with it: success. */
	if (codectl_version(&v) == 0)
		return v.abi_version >= 1 ? 0 : 1;
	return errno == ENODEV ? 0 : 1;
}
CC
	$CXX -Wall -Wextra -Werror -I$LIB/include -I$UAPI -o "$tmp/t" \
		"$tmp/t.cc" -L$LIB -lcodectl &&
		LD_LIBRARY_PATH=$LIB "$tmp/t"
}
check "C++ program links and runs against libcodectl.so" cxx_link

exports() {
	got=$(nm -D --defined-only $LIB/libcodectl.so.1.0.0 |
	      awk '$3 != "LIBCODECTL_1" { print $3 }' | sed 's/@.*//' | sort)
	bad=$(printf '%s\n' "$got" | grep -v -x -E 'codectl(_.*)?')
	[ -z "$bad" ] || { echo "unexpected exports: $bad"; return 1; }
	[ "$got" = "$API" ] || { echo "exports: $got"; return 1; }
}
check "the .so exports exactly the codectl* API" exports

versions() {
	[ -f $LIB/libcodectl.so.1.0.0 ] || { echo "no libcodectl.so"; return 1; }
	nm -D --defined-only $LIB/libcodectl.so.1.0.0 |
		awk '$3 != "LIBCODECTL_1" && $3 !~ /@@LIBCODECTL_1$/ \
		     { print "unversioned: " $3; bad = 1 } END { exit bad }'
}
check "every export is versioned LIBCODECTL_1" versions

soname() {
	readelf -d $LIB/libcodectl.so.1.0.0 |
		grep -q 'Library soname: \[libcodectl.so.1\]' &&
	[ "$(readlink $LIB/libcodectl.so.1)" = libcodectl.so.1.0.0 ] &&
	[ "$(readlink $LIB/libcodectl.so)" = libcodectl.so.1.0.0 ] &&
	[ "$(readelf -d $LIB/libcodectl.so.1.0.0 |
	     sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')" = \
	  "libc.so.6 libdw.so.1 libelf.so.1 " ]
}
check "SONAME libcodectl.so.1, symlinks, needs only libc, libdw, libelf" soname

static_syms() {
	[ -f $LIB/libcodectl.a ] || { echo "no libcodectl.a"; return 1; }
	bad=$(nm -g --defined-only $LIB/libcodectl.a | awk 'NF == 3 { print $3 }' |
	      grep -v -E '^codectl')
	[ -z "$bad" ] || { echo "global symbols of libcodectl.a: $bad"; return 1; }
}
check "libcodectl.a defines only codectl* globals" static_syms

install_tree() {
	make -s -C $LIB install DESTDIR="$tmp/root" PREFIX=/usr/local >/dev/null &&
	for f in lib/libcodectl.so.1.0.0 lib/libcodectl.so.1 lib/libcodectl.so \
		 lib/libcodectl.a lib/codectl/libcodectl-audit.so \
		 include/codectl.h include/linux/codectl.h \
		 lib/pkgconfig/libcodectl.pc; do
		[ -e "$tmp/root/usr/local/$f" ] || { echo "missing $f"; return 1; }
	done
	cmp "$tmp/root/usr/local/include/linux/codectl.h" $UAPI/linux/codectl.h
}
check "make install DESTDIR PREFIX installs lib, headers, pc" install_tree

pc_file() {
	pc=$tmp/root/usr/local/lib/pkgconfig
	[ "$(PKG_CONFIG_PATH=$pc pkg-config --variable=prefix libcodectl)" = /usr/local ] &&
	[ "$(PKG_CONFIG_PATH=$pc pkg-config --modversion libcodectl)" = 1.0.0 ] &&
	libs=$(PKG_CONFIG_PATH=$pc pkg-config --libs libcodectl) &&
	[ "$(echo $libs)" = "-L/usr/local/lib -lcodectl" ]
}
check "libcodectl.pc: prefix, version, libs" pc_file

# A C program built against the installed tree with pkg-config.
pc_build() {
	printf '#include <codectl.h>\nint main(void){return codectl(CODECTL_VERSION, 0, 0, 0) == -1 ? 0 : 0;}\n' >"$tmp/p.c"
	pc=$tmp/root/usr/local/lib/pkgconfig
	flags=$(PKG_CONFIG_PATH=$pc pkg-config \
		--define-variable=prefix="$tmp/root/usr/local" \
		--cflags --libs libcodectl) &&
	$CC -Wall -Werror -o "$tmp/p" "$tmp/p.c" $flags &&
	LD_LIBRARY_PATH=$tmp/root/usr/local/lib "$tmp/p"
}
check "a C program builds with pkg-config against the install" pc_build

static_link() {
	printf '#include <codectl.h>\n#include <errno.h>\nint main(void){return codectl_register_self() == -1 && errno == ENODEV ? 0 : codectl_register_self() >= 0 ? 0 : 1;}\n' >"$tmp/s.c"
	$CC -Wall -Werror -I$LIB/include -I$UAPI -o "$tmp/s" "$tmp/s.c" \
		$LIB/libcodectl.a && "$tmp/s"
}
check "a C program links libcodectl.a statically" static_link

man_pages() {
	for f in ../../man/codectl.1 ../../man/libcodectl.3; do
		out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$f" 2>&1) &&
		[ -z "$out" ] || { echo "$f: $out"; return 1; }
	done
}
check "the man pages format without warnings" man_pages

[ "$failed" -eq 0 ]
