// SPDX-License-Identifier: GPL-2.0
//
// A JS workload for tests/vm/runtimes.sh: named functions calling each
// other through the interpreter, optimised code and V8's builtins (sort
// with a comparator, JSON, regular expressions, string building), so
// that samples land in JIT code, in builtins embedded in node, and in
// node's C++.  Runs for ARGV[2] seconds; ARGV[3]: see main().
'use strict';

function leafMath(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += Math.sqrt(i) * (i & 7);
	return s;
}

function leafSort(n) {
	const a = [];
	for (let i = 0; i < n; i++)
		a.push((i * 7919) % 1009);
	a.sort(function byValue(x, y) { return x - y; });
	return a[n >> 1];
}

function leafJson(n) {
	const o = { list: [], name: 'x'.repeat(n & 31) };
	for (let i = 0; i < (n >> 4); i++)
		o.list.push({ i, s: 'v' + i });
	return JSON.parse(JSON.stringify(o)).list.length;
}

function leafRegexp(n) {
	let s = '';
	for (let i = 0; i < (n >> 3); i++)
		s += 'ab' + i + ';';
	return (s.match(/b(\d+);/g) || []).length;
}

const leaves = [leafMath, leafSort, leafJson, leafRegexp];

function step(depth, n) {
	if (depth === 0)
		return leaves[n & 3](200 + (n % 600));
	return descend(depth - 1, n) + 1;
}

function descend(depth, n) {
	return step(depth, n + depth);
}

function round(n) {
	let t = 0;
	for (let d = 4; d < 16; d++)
		t += descend(d, n + d);
	return t;
}

// After a first second of work (node's own start-up is over, the hot
// functions compiled), READY is created, for the sampling to begin.
function main(seconds, ready) {
	const start = Date.now(), end = start + seconds * 1000;
	let t = 0, n = 0;
	while (Date.now() < end) {
		t += round(n++);
		if (ready && Date.now() - start > 1000) {
			require('fs').writeFileSync(ready, '');
			ready = null;
		}
	}
	return t;
}

main(Number(process.argv[2] || 3), process.argv[3]);
