/**
 * Metric names a PromQL expression reads, by a small tokenizer (enough for the queries this
 * repository ships, not a PromQL parser): string literals, label matchers `{…}`, ranges `[…]`
 * and the label lists of `by`, `without`, `on`, `ignoring`, `group_left` and `group_right` are
 * dropped first; what is left of the identifiers, less functions (a name followed by `(`),
 * keywords, Grafana variables (`$job`) and numbers, are metric names.
 */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
  'atan2',
]);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/@\s*\S+/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w$.:])([A-Za-z_:][\w:]*)(?![\w:])(\s*\()?/g)) {
    const [, name, call] = m;
    if (call !== undefined) continue; // a function or an aggregation
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

/** Label names a selector `metric{…}` matches on, per metric name. */
export function matcherLabels(expr: string): Array<{ metric: string; labels: string[] }> {
  const out: Array<{ metric: string; labels: string[] }> = [];
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  for (const m of noStrings.matchAll(/(?<![\w$.:])([A-Za-z_:][\w:]*)\s*\{([^}]*)\}/g)) {
    const labels = [...m[2].matchAll(/([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]);
    out.push({ metric: m[1], labels });
  }
  return out;
}

/** Sample names and the label names each carries, from a /metrics text exposition. */
export function exposedSeries(text: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s/.exec(line);
    if (!m) continue;
    const labels = series.get(m[1]) ?? new Set<string>();
    for (const l of (m[2] ?? '').matchAll(/([A-Za-z_]\w*)="/g)) labels.add(l[1]);
    series.set(m[1], labels);
  }
  return series;
}
