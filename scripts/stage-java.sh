#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's OpenJDK 17 (openjdk-17-jre-headless, installed by
# scripts/setup.sh) for a guest (tests/vm/runtimes.sh): its java
# launcher, libraries, module image and configuration copied into DIR,
# links into /etc resolved and dangling ones (the JDK's src.zip, the GUI
# libraries of the full JRE) left out, and tests/vm/runtimes/Work.java
# compiled there (javac, openjdk-17-jdk-headless).  Idempotent.
#
#   scripts/stage-java.sh DIR      prints DIR (the guest's JAVA_HOME)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "$1")
stage_lock "$dir"
jdk=/usr/lib/jvm/java-17-openjdk-amd64
src=$top/tests/vm/runtimes/Work.java
if [ ! -x "$dir/bin/java" ] || [ ! -e "$dir/lib/server/libjvm.so" ] || [ "$jdk/lib/server/libjvm.so" -nt "$dir/bin/java" ] ||
   [ "$src" -nt "$dir/classes/Work.class" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/bin" "$dir/classes"
	cp -L "$jdk/bin/java" "$dir/bin/java"
	(cd "$jdk" && find lib conf -xtype l -prune -o -print0 2>/dev/null |
		cpio -0pdmL --quiet "$dir")
	"$jdk/bin/javac" -d "$dir/classes" "$src"
	touch "$dir/bin/java"
fi
echo "$dir"
