/**
 * "Did you mean" for names a caller got wrong: a field (`shop_order_id` for `shopOrderId`) or a
 * payway alias. The work is bounded whatever the caller sends: names past MAX_NAME characters are
 * not compared, and the edit distance gives up past its limit (a band of the matrix, not all of it).
 */

/** Longer names are not compared (a payway alias is at most 150 characters). */
export const MAX_NAME = 160;

/**
 * The Levenshtein distance of `a` and `b` when it is at most `limit`, else `limit + 1`. Only the
 * diagonal band of width 2·limit+1 is computed: O(length × limit).
 */
export function boundedDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  if (a === b) return 0;
  const over = limit + 1;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j <= limit ? j : over;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    cur.fill(over);
    cur[0] = i <= limit ? i : over;
    let best = cur[0];
    for (let j = from; j <= to; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const d = Math.min(prev[j - 1] + cost, prev[j] + 1, cur[j - 1] + 1);
      cur[j] = d > over ? over : d;
      if (cur[j] < best) best = cur[j];
    }
    if (best > limit) return over;
    [prev, cur] = [cur, prev];
  }
  return Math.min(prev[b.length], over);
}

/** A field name with case, underscores and dashes dropped: `shop_order_id` → `shoporderid`. */
function folded(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/**
 * The declared field `name` most resembles, or null: the same name in another case or with
 * underscores (`shop_order_id`, `ShopOrderID`), a misspelling (one edit per four letters), or its
 * tail (`order_id` for `shopOrderId`).
 */
export function closestField(name: string, fields: Iterable<string>): string | null {
  if (name.length === 0 || name.length > MAX_NAME) return null;
  const given = folded(name);
  const limit = Math.max(1, Math.floor(given.length / 4));
  let best: string | null = null;
  let bestScore = Infinity;
  for (const field of fields) {
    const f = folded(field);
    let score = f === given ? 0 : boundedDistance(given, f, limit);
    if (score > limit && given.length >= 5 && f.endsWith(given)) score = limit;
    if (score <= limit && score < bestScore) {
      best = field;
      bestScore = score;
    }
  }
  return best;
}

/**
 * `card_core_payin_rub[mock_server,success]` → base and scenario (`mock_server,success`),
 * compared in lower case (an alias written in capitals is close to the listed one).
 */
function splitAlias(given: string): { base: string; scenario: string | null } {
  const alias = given.toLowerCase();
  const open = alias.indexOf('[');
  if (open < 0) return { base: alias, scenario: null };
  const close = alias.lastIndexOf(']');
  return {
    base: alias.slice(0, open),
    scenario: alias.slice(open + 1, close > open ? close : alias.length).replace(/\s+/g, ''),
  };
}

/** How far a candidate's scenario is from the one asked for: a name it starts with is near. */
function scenarioScore(asked: string | null, candidate: string | null): number {
  if (asked === null || asked === candidate) return 0;
  if (candidate === null) return MAX_NAME;
  if (candidate.startsWith(asked)) return 1;
  const askedParts = asked.split(',');
  const parts = candidate.split(',');
  let score = 0;
  for (let i = 0; i < askedParts.length; i++) {
    const a = askedParts[i];
    const c = parts[i] ?? '';
    if (a === c) continue;
    score += c.startsWith(a) && a.length > 0 ? 1 : 2 + boundedDistance(a, c, 40);
  }
  return score;
}

/**
 * Up to `max` known payway aliases closest to `alias`, closest first: the payway itself named
 * with a typo (`card_core_payin_rbu`) or a prefix (`card_core_payin`), its scenario forms when
 * the scenario is left out (`card_core_payin_rub` → `card_core_payin_rub[mock_server,success]`,
 * …), or a scenario that starts like a listed one (`[mock_server,rejected]` →
 * `[mock_server,rejected_with_callback]`). Empty when nothing is close.
 */
export function closestAliases(alias: string, known: Iterable<string>, max = 5): string[] {
  if (alias.length === 0 || alias.length > MAX_NAME) return [];
  const asked = splitAlias(alias);
  const limit = Math.max(2, Math.floor(asked.base.length / 3));
  const baseScores = new Map<string, number>();
  const scored: Array<{ alias: string; base: number; scenario: number }> = [];
  for (const candidate of known) {
    if (candidate === alias || candidate.length > MAX_NAME) continue;
    const c = splitAlias(candidate);
    let base = baseScores.get(c.base);
    if (base === undefined) {
      base = boundedDistance(asked.base, c.base, limit);
      if (base > limit && asked.base.length >= 4 && c.base.startsWith(asked.base)) base = limit;
      baseScores.set(c.base, base);
    }
    if (base > limit) continue;
    scored.push({ alias: candidate, base, scenario: scenarioScore(asked.scenario, c.scenario) });
  }
  scored.sort(
    (x, y) =>
      x.base - y.base ||
      x.scenario - y.scenario ||
      (x.alias < y.alias ? -1 : x.alias > y.alias ? 1 : 0),
  );
  return scored.slice(0, max).map((s) => s.alias);
}
