// SPDX-License-Identifier: GPL-2.0
//
// A Java workload for tests/vm/runtimes.sh, as work.js is node's: named
// methods calling each other through HotSpot's interpreter and compiled
// code, and into the JDK (sorting with a comparator, string building,
// hash maps).  java Work SECONDS READY: after a first second of work,
// READY is created and the work goes on for SECONDS, then the JVM exits
// (its perf map is written at exit: -XX:+DumpPerfMapAtExit).
import java.io.File;
import java.util.Arrays;
import java.util.HashMap;

public class Work {
	static double leafMath(int n) {
		double s = 0;
		for (int i = 0; i < n; i++)
			s += Math.sqrt(i) * (i & 7);
		return s;
	}

	static int leafSort(int n) {
		Integer[] a = new Integer[n];
		for (int i = 0; i < n; i++)
			a[i] = (i * 7919) % 1009;
		Arrays.sort(a, (x, y) -> x - y);
		return a[n >> 1];
	}

	static int leafString(int n) {
		StringBuilder b = new StringBuilder();
		for (int i = 0; i < (n >> 3); i++)
			b.append("ab").append(i).append(';');
		return b.toString().split(";").length;
	}

	static int leafMap(int n) {
		HashMap<Integer, String> m = new HashMap<>();
		for (int i = 0; i < (n >> 2); i++)
			m.put(i * 31, "v" + i);
		return m.size();
	}

	static int leaf(int n) {
		switch (n & 3) {
		case 0: return (int) leafMath(200 + n % 600);
		case 1: return leafSort(200 + n % 600);
		case 2: return leafString(200 + n % 600);
		default: return leafMap(200 + n % 600);
		}
	}

	static int step(int depth, int n) {
		if (depth == 0)
			return leaf(n);
		return descend(depth - 1, n) + 1;
	}

	static int descend(int depth, int n) {
		return step(depth, n + depth);
	}

	static int round(int n) {
		int t = 0;
		for (int d = 4; d < 16; d++)
			t += descend(d, n + d);
		return t;
	}

	public static void main(String[] args) throws Exception {
		long seconds = Long.parseLong(args[0]);
		long start = System.currentTimeMillis(), end = 0;
		int t = 0, n = 0;

		while (end == 0 || System.currentTimeMillis() < end) {
			t += round(n++);
			if (end == 0 && System.currentTimeMillis() - start > 1000) {
				new File(args[1]).createNewFile();
				end = System.currentTimeMillis() + seconds * 1000;
			}
		}
		System.out.println(t);
	}
}
