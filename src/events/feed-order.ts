export interface Unpositioned {
  id: string;
  entity_type: string;
  entity_id: string;
  sequence: number;
}

/**
 * The order in which committed events (given in id order) get their feed positions: the same
 * interleaving of objects, but each object's events by sequence, and an object's event only
 * once every earlier one of it is positioned or positioned with it. The write paths number an
 * object's events under its row lock, so this holds already; the relay does not rely on it.
 * `firsts` is each object's lowest unpositioned sequence. Returns event ids in position order.
 */
export function orderForFeed(
  stable: Unpositioned[],
  firsts: Array<{ entity_type: string; entity_id: string; sequence: number }>,
): string[] {
  const key = (t: string, i: string): string => JSON.stringify([t, i]);
  const next = new Map(firsts.map((f) => [key(f.entity_type, f.entity_id), f.sequence]));
  const byObject = new Map<string, Unpositioned[]>();
  for (const e of stable) {
    const k = key(e.entity_type, e.entity_id);
    byObject.set(k, [...(byObject.get(k) ?? []), e]);
  }
  // Per object, the run of consecutive sequences from the first unpositioned one.
  const eligible = new Map<string, Unpositioned[]>();
  for (const [k, events] of byObject) {
    const sorted = [...events].sort((a, b) => a.sequence - b.sequence);
    const run: Unpositioned[] = [];
    let expect = next.get(k) ?? sorted[0].sequence;
    for (const e of sorted) {
      if (e.sequence !== expect) break;
      run.push(e);
      expect += 1;
    }
    eligible.set(k, run);
  }
  // Keep the objects' interleaving (slots in transaction-id order), fill each object's slots in sequence order.
  const taken = new Map<string, number>();
  const out: string[] = [];
  for (const e of stable) {
    const k = key(e.entity_type, e.entity_id);
    const run = eligible.get(k)!;
    if (!run.some((r) => r.id === e.id)) continue;
    const i = taken.get(k) ?? 0;
    out.push(run[i].id);
    taken.set(k, i + 1);
  }
  return out;
}
