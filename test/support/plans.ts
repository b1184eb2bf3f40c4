import type { DataSource } from 'typeorm';

/** One node of PostgreSQL's JSON plan (EXPLAIN (FORMAT JSON)), with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** The plan PostgreSQL makes for `sql` with these parameters (nothing is run). */
export async function planOf(ds: DataSource, sql: string, params: unknown[]): Promise<PlanNode> {
  const rows = (await ds.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)) as Array<{
    'QUERY PLAN': Array<{ Plan: PlanNode }>;
  }>;
  return rows[0]['QUERY PLAN'][0].Plan;
}

/** The tables a plan reads whole (its sequential scans), by name. */
export function seqScans(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Seq Scan' ? [node['Relation Name'] ?? '?'] : [];
  return [...own, ...(node.Plans ?? []).flatMap(seqScans)];
}

/** Every node of a plan that names `table`, by its node type. */
export function scansOf(node: PlanNode, table: string): string[] {
  const own = node['Relation Name'] === table ? [node['Node Type']] : [];
  return [...own, ...(node.Plans ?? []).flatMap((n) => scansOf(n, table))];
}
