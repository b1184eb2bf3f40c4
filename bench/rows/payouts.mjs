// P4: two service instances polling never-final payouts; polls counted from the sandbox's log.
import { createDatabase, forEachBounded, gatewaySign, percentile, postJson, rssSampler, sleep, stopProcess, withClient } from '../support.mjs';
import { atLeast, fmt, ratioOf } from '../lib/format.mjs';
import { dbServer, migrate, sandboxControl, sandboxUrl, startService } from '../lib/processes.mjs';
import {
  num,
  P4_INTERVAL_S,
  P4_LATENESS_GOAL_MS,
  P4_PAYOUTS,
  P4_S,
  PAYOUT_ACCOUNT,
  PAYOUT_AMOUNT,
  PAYOUT_PAYWAY,
  SECRET,
  SHOP_ID,
} from '../lib/settings.mjs';
import { details, row, runTag } from '../lib/state.mjs';

/**
 * P4_PAYOUTS never-final payouts on the sandbox, their rows `processing` and first due spread
 * over one interval from the start, two service instances polling every P4_INTERVAL_S. Polls are
 * counted from the sandbox's request log.
 *
 * Lateness and double polls follow the service's rule for the next due time: first the seeded
 * time, then one interval after each poll. A poll at or after its due time answers it (done; its
 * lateness is how long after); a poll before it is one the schedule did not owe (a double poll).
 * A due time still unanswered at the end is late by at least the rest of the window (censored).
 *
 * Polls done vs due: the polls done in the window that answered a due time (so neither double
 * polls nor payouts of other runs count) against the polls the mission's cadence owes in it: one
 * per payout at its seeded time and every interval after, up to the window's end less the 2 s
 * lateness the goal allows (one due at the last instant is not owed yet). The cadence is the
 * nominal one, not "an interval after the last poll": a late poll must not lower what is owed.
 * A poller that keeps up within 2 s reaches 1.0 (a little over: it also answers some of the last
 * 2 s); one that falls behind leaves a backlog that grows with the window.
 */
export async function p4() {
  const seedStarted = Date.now();
  const withdrawIds = new Array(P4_PAYOUTS);
  // What the create answer says of each payout, stored on the row as the service stores it (a row
  // whose create answer was written): payee_receive and shop_write_off as their exact JSON text.
  const psCurrencies = new Array(P4_PAYOUTS);
  const payeeReceives = new Array(P4_PAYOUTS);
  const shopWriteOffs = new Array(P4_PAYOUTS);
  const rawDecimal = (text, field) => {
    const m = new RegExp(`"${field}"\\s*:\\s*"?(-?\\d+(?:\\.\\d+)?)`).exec(text);
    if (!m) throw new Error(`seeding: no ${field} in ${text.slice(0, 300)}`);
    return m[1];
  };
  const signed = ['account', 'amount', 'amount_type', 'payway', 'shop_currency', 'shop_id', 'shop_payment_id'];
  await forEachBounded(P4_PAYOUTS, 32, async (i) => {
    const body = {
      shop_id: SHOP_ID,
      shop_payment_id: `p4-${runTag}-${i}`,
      amount: PAYOUT_AMOUNT,
      amount_type: 'ps_amount',
      shop_currency: 643,
      payway: PAYOUT_PAYWAY,
      account: PAYOUT_ACCOUNT,
    };
    const res = await postJson(`${sandboxUrl}/gateway/v1/withdraw/create`, { ...body, sign: gatewaySign(body, signed, SECRET) });
    const parsed = JSON.parse(res.text);
    if (parsed.result !== true) throw new Error(`seeding payout ${i}: ${res.text.slice(0, 300)}`);
    withdrawIds[i] = String(parsed.data.id);
    psCurrencies[i] = Number(parsed.data.ps_currency);
    payeeReceives[i] = rawDecimal(res.text, 'payee_receive');
    shopWriteOffs[i] = rawDecimal(res.text, 'shop_write_off');
  });
  const seedMs = Date.now() - seedStarted;

  const db = await createDatabase(dbServer.serverUrl, 'bench_p4');
  const pollEnv = {
    PAYOUT_POLL_INTERVAL_S: String(P4_INTERVAL_S),
    PAYOUT_POLL_MAX_S: '7200',
    RECONCILE_TICK_MS: String(num('BENCH_P4_TICK_MS', 500)),
    PAYOUT_POLL_CONCURRENCY: String(num('BENCH_P4_CONCURRENCY', 16)),
  };
  // The migrations first, with the scheduler off; then both instances poll.
  await migrate(db);
  const a = await startService(db, pollEnv);
  const b = await startService(db, pollEnv);
  const rssA = rssSampler(a.pid);
  const rssB = rssSampler(b.pid);
  await sandboxControl('DELETE', '/requests');
  // The rows go in not due (writing 20,000 rows takes a while, and a row due before it is
  // visible would count as late); one UPDATE then spreads their due times over one interval,
  // starting 2 s after it runs, so every due time is after the rows are visible.
  await withClient(db, (c) =>
    c.query(
      `INSERT INTO payouts (shop_id, shop_payment_id, request_fingerprint, status, gateway_status, withdraw_id, amount, amount_type,
         shop_currency, payway, account_masked, account_sealed, create_attempts, next_poll_at, poll_deadline,
         ps_currency, payee_receive, shop_write_off)
       SELECT $1, 'p4-' || $2 || '-' || (g - 1), md5(g::text) || md5(g::text), 'processing', 3, w::bigint, '100', 'ps_amount',
              643, $3, '411111******1111', 'not-used', 1, NULL, now() + interval '2 hours',
              pc, pr::numeric, sw::numeric
         FROM unnest($4::text[], $5::int[], $6::text[], $7::text[]) WITH ORDINALITY AS t(w, pc, pr, sw, g)`,
      [SHOP_ID, runTag, PAYOUT_PAYWAY, withdrawIds, psCurrencies, payeeReceives, shopWriteOffs],
    ),
  );
  const t0 = Date.now();
  const due = await withClient(db, async (c) => {
    const res = await c.query(
      `UPDATE payouts SET next_poll_at = clock_timestamp() + interval '2 seconds' + make_interval(secs => $2 * random())
        WHERE shop_payment_id LIKE 'p4-' || $1 || '-%'
       RETURNING withdraw_id::text AS w, (extract(epoch FROM next_poll_at) * 1000)::float8 AS due`,
      [runTag, P4_INTERVAL_S],
    );
    return new Map(res.rows.map((x) => [x.w, x.due]));
  });
  await sleep(P4_S * 1000);
  const tEnd = Date.now();
  const peakRss = [rssA.stop(), rssB.stop()];
  await Promise.all([stopProcess(a), stopProcess(b)]);
  const log = await sandboxControl('GET', '/requests');
  // The services' own count, a cross-check of the log's (it may add the polls of the shutdown).
  const recorded = await withClient(db, async (c) => (await c.query('SELECT sum(poll_count)::int AS n FROM payouts')).rows[0].n);

  const polls = new Map();
  for (const r of log) {
    if (r.path !== 'withdraw/status' && r.path !== 'withdraw/shop_payment_status') continue;
    const t = Date.parse(r.time);
    if (t > tEnd) continue;
    const id = String(r.body.withdraw_id);
    if (!due.has(id)) continue;
    let list = polls.get(id);
    if (list === undefined) polls.set(id, (list = []));
    list.push(t);
  }
  const intervalMs = P4_INTERVAL_S * 1000;
  const owedBy = tEnd - P4_LATENESS_GOAL_MS;
  // 50 ms for the log's millisecond clock against the database's.
  const slackMs = 50;
  let doubles = 0;
  let maxPerInterval = 0;
  let done = 0;
  let owed = 0;
  let totalPolls = 0;
  const lateness = [];
  for (const [id, dueAt] of due) {
    const times = (polls.get(id) ?? []).sort((x, y) => x - y);
    totalPolls += times.length;
    let expected = dueAt;
    let start = 0;
    for (let k = 0; k < times.length; k++) {
      const t = times[k];
      if (t < expected - slackMs) {
        doubles += 1;
      } else {
        done += 1;
        lateness.push(Math.max(0, t - expected));
      }
      // Whatever the poll was, the service sets the next due time an interval after it.
      expected = t + intervalMs;
      while (t - times[start] >= intervalMs - slackMs) start += 1;
      maxPerInterval = Math.max(maxPerInterval, k - start + 1);
    }
    if (expected < tEnd) lateness.push(tEnd - expected);
    if (dueAt <= owedBy) owed += 1 + Math.floor((owedBy - dueAt) / intervalMs);
  }
  lateness.sort((x, y) => x - y);
  const p99 = percentile(lateness, 99);
  const p50 = percentile(lateness, 50);
  const windowS = (tEnd - t0) / 1000;
  const doneRatio = ratioOf(done, owed);
  details.p4 = {
    payouts: P4_PAYOUTS,
    intervalS: P4_INTERVAL_S,
    seedMs,
    windowS,
    polls: totalPolls,
    pollsRecordedByService: recorded,
    pollsDone: done,
    pollsOwed: owed,
    pollsDonePerSecond: done / windowS,
    pollsDuePerSecond: owed / windowS,
    nominalDuePerSecond: P4_PAYOUTS / P4_INTERVAL_S,
    doublePolls: doubles,
    maxPollsPerPayoutPerInterval: maxPerInterval,
    latenessP50Ms: p50,
    latenessP99Ms: p99,
    env: pollEnv,
    peakRssMb: peakRss,
  };
  const title = `P4 poller, ${fmt(P4_PAYOUTS)} payouts, 2 instances, ${P4_INTERVAL_S} s, ${fmt(windowS)} s`;
  row(`${title}: double polls`, `${doubles} double polls; max ${maxPerInterval} poll(s) per payout per interval`, '0 double polls (max 1)', '', doubles === 0 && maxPerInterval <= 1);
  row('P4 lateness', `p50 ${fmt(p50 / 1000, 2)} s, p99 ${fmt(p99 / 1000, 2)} s`, 'p99 ≤ 2 s', '', p99 !== null && p99 <= P4_LATENESS_GOAL_MS);
  row(
    'P4 polls/s done vs due',
    `${fmt(done / windowS)} vs ${fmt(owed / windowS)}/s (${fmt(done)} done, ${fmt(owed)} due by end − 2 s; ${fmt(P4_PAYOUTS)} / ${P4_INTERVAL_S} s = ${fmt(P4_PAYOUTS / P4_INTERVAL_S)}/s)`,
    'done ≥ due',
    atLeast(doneRatio),
    doneRatio !== null && doneRatio >= 1,
  );
}
