// Import circles under src/: every relative import (type-only imports and re-exports too) is an
// edge, and every strongly connected group of more than one file, or a file importing itself, is
// a circle. Prints each circle and exits 1 when there is one; `findCycles` is what the unit spec
// (src/import-cycles.spec.ts) calls.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveImport(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')])
    if (candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile())
      return candidate;
  return null;
}

/** Each file's relative imports, resolved to files under `root`. */
export function importGraph(root) {
  const graph = new Map();
  for (const file of sources(root)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set();
    for (const { fileName } of info.importedFiles) {
      const to = resolveImport(file, fileName);
      if (to !== null && to.startsWith(root)) targets.add(to);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components (Tarjan) of more than one file, or of a file importing itself. */
export function cyclesOf(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    // Iterative, so a deep import chain cannot overflow the call stack.
    const work = [[v, [...(graph.get(v) ?? [])], 0]];
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, targets] = frame;
      if (frame[2] < targets.length) {
        const w = targets[frame[2]++];
        if (!graph.has(w)) continue;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, [...(graph.get(w) ?? [])], 0]);
        } else if (onStack.has(w)) low.set(node, Math.min(low.get(node), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const group = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          group.push(w);
        } while (w !== node);
        if (group.length > 1 || graph.get(node)?.has(node)) found.push(group.sort());
      }
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The circles under `root`, each as its files relative to `root`. */
export function findCycles(root) {
  const abs = resolve(root);
  return cyclesOf(importGraph(abs)).map((group) => group.map((f) => relative(abs, f)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? 'src');
  const cycles = findCycles(root);
  for (const group of cycles) console.log(`import circle (${group.length} files):\n  ${group.join('\n  ')}`);
  if (cycles.length > 0) process.exit(1);
  console.log(`no import circle under ${relative(process.cwd(), root) || '.'}`);
}
