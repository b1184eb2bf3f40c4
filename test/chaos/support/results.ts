import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * The chaos table: each scenario appends its row (one JSON line) to the file global-setup names;
 * global-teardown prints them as one table at the end of the run.
 */

export interface ChaosRow {
  scenario: string;
  /** Runs or operations. */
  runs: number | string;
  twice: number | string;
  lost: number | string;
  unsettled: number | string;
  flagged?: number | string;
  verdict: 'ok' | 'FAIL';
  notes: string;
}

export function recordRow(row: ChaosRow): void {
  const file = process.env.CHAOS_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}

export function readRows(file: string): ChaosRow[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ChaosRow);
}

export function tableText(rows: ChaosRow[]): string {
  const head = [
    'scenario',
    'runs/ops',
    'twice',
    'lost',
    'unsettled',
    'flagged',
    'verdict',
    'notes',
  ];
  const data = rows.map((r) =>
    [r.scenario, r.runs, r.twice, r.lost, r.unsettled, r.flagged ?? '', r.verdict, r.notes].map(
      String,
    ),
  );
  const widths = head.map((h, i) =>
    Math.max(h.length, ...data.map((d) => Math.min(d[i].length, i === 7 ? 200 : 60))),
  );
  const cell = (c: string, i: number): string =>
    c.length > widths[i] ? `${c.slice(0, widths[i] - 1)}…` : c.padEnd(widths[i]);
  const line = (cells: string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [
    line(head),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...data.map(line),
  ].join('\n');
}
