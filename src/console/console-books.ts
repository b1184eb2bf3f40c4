/**
 * The overview's books tile, built from what the reconciliation and the ledger check answer (pure,
 * so the tile renders whatever shape a run has: per-currency `differences: {available, frozen}`,
 * or the older single `difference`).
 */

export interface BooksDifference {
  currency: number;
  available: string | null;
  frozen: string | null;
  /** The single difference of a run that reported one. */
  total: string | null;
}

export interface BooksTile {
  last: {
    id: string;
    date: string;
    status: string;
    finishedAt: string | null;
    items: number;
    differences: BooksDifference[];
  } | null;
  /** Objects whose postings differ from their state's position; null when the ledger has no check. */
  mismatches: Array<{ objectType: string; objectId: string; status: string; posted: unknown; position: unknown }> | null;
  checkedAt: string | null;
  checkError: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const nonZero = (v: string | null): boolean => v !== null && !/^-?0*(\.0*)?$/.test(v);

export function booksTile(rec: unknown, check: unknown, checkError: string | null): BooksTile {
  const r = (rec ?? null) as Record<string, unknown> | null;
  const balances = Array.isArray(r?.balances) ? (r.balances as Array<Record<string, unknown>>) : [];
  const differences: BooksDifference[] = balances
    .map((b) => {
      const d = (b.differences ?? null) as Record<string, unknown> | null;
      return {
        currency: Number(b.currency),
        available: d ? text(d.available) : null,
        frozen: d ? text(d.frozen) : null,
        total: d ? null : text(b.difference),
      };
    })
    .filter((d) => nonZero(d.available) || nonZero(d.frozen) || nonZero(d.total));
  const c = (check ?? null) as Record<string, unknown> | null;
  const raw = c && Array.isArray(c.mismatches) ? (c.mismatches as Array<Record<string, unknown>>) : null;
  return {
    last: r
      ? {
          id: String(r.id),
          date: String(r.date),
          status: String(r.status),
          finishedAt: text(r.finishedAt),
          items: Array.isArray(r.items) ? r.items.length : 0,
          differences,
        }
      : null,
    mismatches: raw
      ? raw.map((m) => ({
          objectType: String(m.objectType),
          objectId: String(m.objectId),
          status: String(m.status),
          posted: m.posted,
          position: m.position,
        }))
      : null,
    checkedAt: c ? text(c.checkedAt) : null,
    checkError,
  };
}
