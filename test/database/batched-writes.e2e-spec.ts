import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import {
  batchChangesIn,
  RowChanged,
  updateWithEvent,
  type RowChangeWithEvent,
} from '../../src/audit/event-write';
import { clientOf } from '../../src/common/sql';
import { managerFor, type By } from '../../src/common/actor';
import { JsonText } from '../../src/common/json-text';
import { InvoiceEntity } from '../../src/invoices/invoice.entity';
import { auth, startTestApp, TestContext } from '../support/app';
import { PAYMENT } from '../support/payways';

/**
 * The autocommit writes of a create (phase 1's claim, phase 3's answer with its event)
 * that arrive in one turn of the event loop share one statement and one commit (BatchedWrite).
 * Against the real database: each caller still gets its own row, answer, event and outcome; a
 * row another writer moved is not written; a batch PostgreSQL refuses is written row by row.
 */
type Json = Record<string, unknown>;

let ctx: TestContext;
let ds: DataSource;
let db: Client;

beforeAll(async () => {
  ctx = await startTestApp();
  ds = ctx.service.app.get(DataSource);
  db = new Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  await ctx.http.get('/api/v1/payways?direction=payment').set(auth()).expect(200);
}, 120000);

afterAll(async () => {
  await db?.end();
  await ctx?.close();
});

function create(shopOrderId: string) {
  return ctx.http.post('/api/v1/invoices').set(auth()).send({
    shopOrderId,
    amount: '10.00',
    currency: 643,
    payway: PAYMENT.card,
    description: 'Tea',
  });
}

async function row(shopOrderId: string): Promise<Json & { id: string; version: string }> {
  const r = await db.query(
    `SELECT id, xmin::text AS version, description, created_at FROM invoices WHERE shop_order_id = $1`,
    [shopOrderId],
  );
  return r.rows[0] as Json & { id: string; version: string };
}

/** The audit event of a change that leaves an invoice awaiting its payer (these tests move no status). */
function awaitingEvent(
  shopOrderId: string,
  details: Json,
  shop: Partial<Pick<RowChangeWithEvent['event'], 'type' | 'data' | 'dataIs'>> = {},
): RowChangeWithEvent['event'] {
  return {
    entityType: 'invoice',
    entityId: shopOrderId,
    fromStatus: 'awaiting_payer',
    toStatus: 'awaiting_payer',
    cause: 'api',
    details,
    type: null,
    data: null,
    ...shop,
  };
}

/** A status-less change of an invoice's description, with an audit entry, conditional on `version`. */
function changeDescription(
  inv: { id: string; version?: string },
  shopOrderId: string,
  description: string,
  /** Inside this transaction, unconditionally (the row is locked); else on condition of the version. */
  inTransaction?: EntityManager,
  /** Outside a transaction: who acts. */
  by?: By,
) {
  return updateWithEvent(inTransaction ?? managerFor(ds, by), {
    table: 'invoices',
    target: InvoiceEntity,
    rowId: inv.id,
    ...(inTransaction ? {} : { version: inv.version }),
    changes: { description, updatedAt: new Date() },
    returning: ['description'],
    event: awaitingEvent(shopOrderId, { batchedTest: description.slice(0, 20) }),
  });
}

async function awaitingInvoices(
  n: number,
): Promise<Array<{ shopOrderId: string; id: string; version: string }>> {
  const ids = Array.from({ length: n }, () => `bw-${randomUUID()}`);
  for (const id of ids) await create(id).expect(201);
  return Promise.all(
    ids.map(async (shopOrderId) => ({ shopOrderId, ...(await row(shopOrderId)) })),
  );
}

async function auditEntries(shopOrderId: string): Promise<Json[]> {
  const r = await db.query(
    `SELECT id::text, details, key_id FROM events WHERE entity_id = $1 AND details ? 'batchedTest' ORDER BY id`,
    [shopOrderId],
  );
  return r.rows as Json[];
}

/** A create over fetch's keep-alive pool: the connections of one round are open for the next. */
async function createOverPool(
  shopOrderId: string,
): Promise<{ status: number; body: Json; contentType: string | null }> {
  const res = await fetch(`${ctx.url}/api/v1/invoices`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({
      shopOrderId,
      amount: '10.00',
      currency: 643,
      payway: PAYMENT.card,
      description: 'Tea',
    }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Json,
    contentType: res.headers.get('content-type'),
  };
}

it('creates of one turn: each caller its own row, answer and one event, with shared statements', async () => {
  // Requests on open connections reach the service in the same turns (a new connection is
  // accepted one per turn): their claims and answers are batched. Rows written by one statement
  // share its transaction: created_at (now()) for the claim, xmin for the answer.
  let sharedClaims = 0;
  let sharedAnswers = 0;
  for (let round = 0; round < 8 && (sharedClaims === 0 || sharedAnswers === 0); round++) {
    const ids = Array.from({ length: 16 }, () => `bw-${randomUUID()}`);
    const answers = await Promise.all(ids.map((id) => createOverPool(id)));
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(201);
      // The answer's JSON text is made once (JsonText) and sent as fastify sends a body it serialised.
      expect(res.contentType).toBe('application/json; charset=utf-8');
      expect(res.body).toMatchObject({ shopOrderId: ids[i], status: 'awaiting_payer' });
      const got = await ctx.http.get(`/api/v1/invoices/${ids[i]}`).set(auth()).expect(200);
      expect(res.body).toEqual(got.body);
      const events = await db.query(
        `SELECT type, sequence, data FROM events WHERE entity_type = 'invoice' AND entity_id = $1 AND type IS NOT NULL`,
        [ids[i]],
      );
      expect(events.rows).toEqual([
        { type: 'invoice.awaiting_payer', sequence: 1, data: got.body },
      ]);
    }
    const rows = await db.query(
      `SELECT count(DISTINCT created_at)::int AS claims, count(DISTINCT xmin::text)::int AS answers
         FROM invoices WHERE shop_order_id = ANY($1)`,
      [ids],
    );
    if (rows.rows[0].claims < ids.length) sharedClaims++;
    if (rows.rows[0].answers < ids.length) sharedAnswers++;
  }
  expect({ sharedClaims: sharedClaims > 0, sharedAnswers: sharedAnswers > 0 }).toEqual({
    sharedClaims: true,
    sharedAnswers: true,
  });
});

it('a repeat of a create in the same turn as the create: one gateway call, the same answer', async () => {
  const id = `bw-${randomUUID()}`;
  const [a, b, c] = await Promise.all([createOverPool(id), createOverPool(id), createOverPool(id)]);
  expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
  expect(b.body).toEqual(a.body);
  expect(c.body).toEqual(a.body);
  const res = await fetch(`${ctx.sandbox.origin}/sandbox/requests`);
  const calls = ((await res.json()) as { data: Array<{ path: string; body: Json }> }).data.filter(
    (r) => r.path === 'invoice/create' && r.body.shop_order_id === id,
  );
  expect(calls).toHaveLength(1);
});

it("changes of one turn: one statement, each row its own event and the actor's key", async () => {
  const invs = await awaitingInvoices(3);
  const actors = ['key_a', 'key_b', 'key_c'];
  const written = await Promise.all(
    invs.map((inv, i) =>
      changeDescription(inv, inv.shopOrderId, `batched ${i}`, undefined, {
        keyId: actors[i],
        role: 'shop',
        scopes: ['payments'],
      }),
    ),
  );
  written.forEach((w, i) => expect(w.row).toEqual({ id: invs[i].id, description: `batched ${i}` }));
  expect(new Set(written.map((w) => w.eventId)).size).toBe(3);
  const after = await Promise.all(invs.map((inv) => row(inv.shopOrderId)));
  expect(new Set(after.map((r) => r.version)).size).toBe(1); // one transaction
  for (const [i, inv] of invs.entries()) {
    expect(after[i].description).toBe(`batched ${i}`);
    expect(await auditEntries(inv.shopOrderId)).toEqual([
      { id: written[i].eventId, details: { batchedTest: `batched ${i}` }, key_id: actors[i] },
    ]);
  }
});

/**
 * A change that stores an answer whose event carries the same view (a create's answer); `made`:
 * the answer as its JSON text made already (JsonText), as a create's answer writes it.
 */
function storeAnswer(
  inv: { id: string; version: string },
  shopOrderId: string,
  view: Json,
  made = false,
) {
  return updateWithEvent(managerFor(ds, undefined), {
    table: 'invoices',
    target: InvoiceEntity,
    rowId: inv.id,
    version: inv.version,
    changes: {
      responseBody: made ? new JsonText({ ...view }) : { ...view },
      updatedAt: new Date(),
    },
    returning: [],
    // Data goes with a type (ck_events_typed): the shop event this answer would be.
    event: awaitingEvent(
      shopOrderId,
      { batchedTest: 'answer' },
      { type: 'invoice.awaiting_payer', data: view, dataIs: 'responseBody' },
    ),
  });
}

it('an event whose data is the stored answer (dataIs) carries that answer, alone and in a batch', async () => {
  const views = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      n: i,
      text: `"quoted" \\ ✓ ${i}`,
      nested: { a: [1, null] },
      // Keys of the batch row's own, inside the value: the made text is joined, never searched.
      ev__: { set__: ',"ev__":{}}', id__: '"}' },
    }));
  for (const [n, made] of [
    [1, false],
    [3, false],
    [1, true],
    [3, true],
  ] as const) {
    const invs = await awaitingInvoices(n);
    const vs = views(n);
    const written = await Promise.all(
      invs.map((inv, i) => storeAnswer(inv, inv.shopOrderId, vs[i], made)),
    );
    if (n > 1) {
      const versions = await Promise.all(invs.map((inv) => row(inv.shopOrderId)));
      expect(new Set(versions.map((r) => r.version)).size).toBe(1); // one statement
    }
    for (const [i, inv] of invs.entries()) {
      const r = await db.query(
        `SELECT e.data, i.response_body FROM events e JOIN invoices i ON i.id = $2
          WHERE e.id = $1`,
        [written[i].eventId, inv.id],
      );
      expect(r.rows).toEqual([{ data: vs[i], response_body: vs[i] }]);
    }
  }
  // Naming a value that is no jsonb column set by the change is a mistake, never a silent copy.
  const [inv] = await awaitingInvoices(1);
  await expect(
    updateWithEvent(managerFor(ds, undefined), {
      table: 'invoices',
      target: InvoiceEntity,
      rowId: inv.id,
      changes: { description: 'x' },
      event: awaitingEvent(
        inv.shopOrderId,
        {},
        { type: 'invoice.awaiting_payer', data: { a: 1 }, dataIs: 'description' },
      ),
    }),
  ).rejects.toThrow(/no jsonb value/);
});

it('a row changed since it was read is not written; the rest of its batch is', async () => {
  const invs = await awaitingInvoices(3);
  await db.query(`UPDATE invoices SET description = 'moved' WHERE id = $1`, [invs[1].id]);
  const outcomes = await Promise.allSettled(
    invs.map((inv, i) => changeDescription(inv, inv.shopOrderId, `kept ${i}`)),
  );
  expect(outcomes[0].status).toBe('fulfilled');
  expect(outcomes[2].status).toBe('fulfilled');
  expect(outcomes[1]).toEqual({ status: 'rejected', reason: expect.any(RowChanged) });
  expect((await row(invs[1].shopOrderId)).description).toBe('moved');
  expect(await auditEntries(invs[1].shopOrderId)).toEqual([]);
  expect((await row(invs[0].shopOrderId)).description).toBe('kept 0');
  expect((await row(invs[2].shopOrderId)).description).toBe('kept 2');
});

it('a batch PostgreSQL refuses for one row is written row by row: only that row fails', async () => {
  const invs = await awaitingInvoices(3);
  const texts = ['fine 0', 'x'.repeat(300), 'fine 2']; // description is varchar(255)
  const outcomes = await Promise.allSettled(
    invs.map((inv, i) => changeDescription(inv, inv.shopOrderId, texts[i])),
  );
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '22001' });
  const after = await Promise.all(invs.map((inv) => row(inv.shopOrderId)));
  expect(after.map((r) => r.description)).toEqual(['fine 0', 'Tea', 'fine 2']);
  // Written alone, after the batch was refused: two transactions.
  expect(after[0].version).not.toBe(after[2].version);
  expect(await auditEntries(invs[1].shopOrderId)).toEqual([]);
  expect(await auditEntries(invs[0].shopOrderId)).toHaveLength(1);
  expect(await auditEntries(invs[2].shopOrderId)).toHaveLength(1);
});

it('the same row twice in one turn: the second meets the first as a later writer would', async () => {
  const [inv] = await awaitingInvoices(1);
  const [first, second] = await Promise.allSettled([
    changeDescription(inv, inv.shopOrderId, 'first'),
    changeDescription(inv, inv.shopOrderId, 'second'),
  ]);
  expect(first.status).toBe('fulfilled');
  expect(second).toEqual({ status: 'rejected', reason: expect.any(RowChanged) });
  expect((await row(inv.shopOrderId)).description).toBe('first');
  expect(await auditEntries(inv.shopOrderId)).toHaveLength(1);
});

/** The same change inside the caller's transaction (no version: the row is locked). */
function changeInTransaction(
  m: EntityManager,
  inv: { id: string; shopOrderId: string },
  description: string,
) {
  return changeDescription(inv, inv.shopOrderId, description, m);
}

/** Counts the statements sent on a transaction's connection while `fn` runs. */
async function statementsSent(m: EntityManager, fn: () => Promise<unknown>): Promise<number> {
  const client = (await clientOf(m)) as unknown as { query: (...a: unknown[]) => unknown };
  const query = client.query;
  let sent = 0;
  client.query = (...a: unknown[]) => {
    sent++;
    return query.apply(client, a);
  };
  try {
    await fn();
  } finally {
    client.query = query;
  }
  return sent;
}

it('a batching transaction (batchChangesIn): the changes of one turn are one statement, each its own event', async () => {
  const invs = await awaitingInvoices(3);
  let sent = 0;
  const written = await ds.transaction(async (m) => {
    batchChangesIn(m);
    let out: Array<{ eventId: string; row: Json }> = [];
    sent = await statementsSent(m, async () => {
      out = await Promise.all(invs.map((inv, i) => changeInTransaction(m, inv, `in tx ${i}`)));
    });
    return out;
  });
  expect(sent).toBe(1);
  written.forEach((w, i) => expect(w.row).toEqual({ id: invs[i].id, description: `in tx ${i}` }));
  for (const [i, inv] of invs.entries()) {
    expect((await row(inv.shopOrderId)).description).toBe(`in tx ${i}`);
    expect(await auditEntries(inv.shopOrderId)).toEqual([
      { id: written[i].eventId, details: { batchedTest: `in tx ${i}` }, key_id: null },
    ]);
  }
});

it('a transaction that does not batch sends each change as its own statement', async () => {
  const invs = await awaitingInvoices(3);
  let sent = 0;
  await ds.transaction(async (m) => {
    sent = await statementsSent(m, () =>
      Promise.all(invs.map((inv, i) => changeInTransaction(m, inv, `plain ${i}`))),
    );
  });
  expect(sent).toBe(3);
});

it('a batching transaction whose batch statement fails: every caller gets the error, nothing is kept', async () => {
  const invs = await awaitingInvoices(3);
  const texts = ['fine 0', 'x'.repeat(300), 'fine 2'];
  const outcomes: PromiseSettledResult<unknown>[] = [];
  await expect(
    ds.transaction(async (m) => {
      batchChangesIn(m);
      outcomes.push(
        ...(await Promise.allSettled(invs.map((inv, i) => changeInTransaction(m, inv, texts[i])))),
      );
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
  for (const inv of invs) {
    expect((await row(inv.shopOrderId)).description).toBe('Tea');
    expect(await auditEntries(inv.shopOrderId)).toEqual([]);
  }
});

it('counts on /metrics what its batches did, per writer (db_write_batches_total)', async () => {
  // By now this suite has sent batches of claims and of answers, writes alone, and a batch
  // PostgreSQL refused (written row by row) and one that failed inside a transaction.
  const text = (await ctx.http.get('/metrics').expect(200)).text;
  const count = (writer: string, outcome: string): number => {
    const m = new RegExp(
      `^db_write_batches_total\\{writer="${writer}",outcome="${outcome}"\\} (\\d+)$`,
      'm',
    ).exec(text);
    return m ? Number(m[1]) : 0;
  };
  expect(count('invoice_claim', 'batch')).toBeGreaterThan(0);
  expect(count('invoice_claim', 'one')).toBeGreaterThan(0);
  expect(count('status_change', 'batch')).toBeGreaterThan(0);
  expect(count('status_change', 'row_by_row')).toBeGreaterThan(0);
  expect(count('status_change_in_transaction', 'batch')).toBeGreaterThan(0);
  expect(count('status_change_in_transaction', 'failed')).toBeGreaterThan(0);
});
