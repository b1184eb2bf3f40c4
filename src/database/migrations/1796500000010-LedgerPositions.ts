import { MigrationInterface, QueryRunner } from 'typeorm';
import { LEDGER_070 } from './1795900000070-LedgerLegsInline';

const ACCOUNTS_070 = [
  'gateway_payment_shop',
  'sales',
  'agent_frozen',
  'agent_available',
  'payouts_paid',
  'payout_fees',
  'adjustments',
];
/** The chart as of this migration: `chargebacks` joins (a lost or accepted dispute). */
const ACCOUNTS = [...ACCOUNTS_070, 'chargebacks'];
const KINDS_060 = [
  'invoice.succeeded',
  'refund.succeeded',
  'payout.sent',
  'payout.succeeded',
  'payout.failed',
  'opening',
  'adjustment',
];
const KINDS = [
  ...KINDS_060,
  'invoice.corrected',
  'refund.corrected',
  'payout.corrected',
  'dispute.lost',
  'dispute.corrected',
];
const list = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(',');

/** The entry's own check (LedgerLegsInline's) over a chart: legs in it, none zero, balanced. */
const legsBalanced = (accounts: readonly string[]): string => `CREATE OR REPLACE FUNCTION ledger_legs_balanced(entry bigint, legs ledger_leg[])
      RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
      DECLARE
        l ledger_leg;
        first_currency int;
        total numeric := 0;
        several boolean := false;
        off record;
      BEGIN
        IF legs IS NULL OR cardinality(legs) = 0 THEN
          RAISE EXCEPTION 'ledger entry % has no postings', entry USING ERRCODE = 'check_violation';
        END IF;
        FOREACH l IN ARRAY legs LOOP
          IF l.account IS NULL OR l.account NOT IN (${list(accounts)}) THEN
            RAISE EXCEPTION 'ledger entry %: % is not an account of the chart', entry, coalesce(l.account, 'null')
              USING ERRCODE = 'check_violation';
          END IF;
          IF l.currency IS NULL OR l.amount IS NULL OR l.amount = 0 THEN
            RAISE EXCEPTION 'ledger entry %: a posting needs a currency and an amount other than 0', entry
              USING ERRCODE = 'check_violation';
          END IF;
          IF first_currency IS NULL THEN first_currency := l.currency; END IF;
          IF l.currency = first_currency THEN total := total + l.amount; ELSE several := true; END IF;
        END LOOP;
        IF total <> 0 THEN
          RAISE EXCEPTION 'ledger entry % does not balance in currency %: debits - credits = %',
            entry, first_currency, total USING ERRCODE = 'check_violation';
        END IF;
        IF several THEN
          SELECT x.currency, sum(x.amount) AS total INTO off FROM unnest(legs) x
           GROUP BY x.currency HAVING sum(x.amount) <> 0 ORDER BY x.currency LIMIT 1;
          IF FOUND THEN
            RAISE EXCEPTION 'ledger entry % does not balance in currency %: debits - credits = %',
              entry, off.currency, off.total USING ERRCODE = 'check_violation';
          END IF;
        END IF;
        RETURN true;
      END $$`;

/**
 * One kind of object's trigger function, `ledger_follow_<type>`: the row takes the position of
 * its state; the difference from what it had posted is posted, as `kind` (an SQL expression: the
 * forward kind, or NULL for a correction) when not zero. An insert posts after the row is in (an
 * INSERT … ON CONFLICT DO NOTHING that finds the row already there writes nothing, and must post
 * nothing): before it, the row only takes its position.
 */
export const followFunction = (type: string, idColumn: string, kind: string): string => `CREATE FUNCTION ledger_follow_${type}() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        pos ledger_leg[] := ledger_position_${type}(NEW);
        posted ledger_leg[] := CASE WHEN TG_OP = 'UPDATE' THEN OLD.ledger_legs ELSE '{}' END;
        diff ledger_leg[];
      BEGIN
        NEW.ledger_legs := pos;
        IF TG_OP = 'INSERT' AND TG_WHEN = 'BEFORE' THEN RETURN NEW; END IF;
        IF pos = posted THEN RETURN NEW; END IF;
        diff := ledger_legs_minus(pos, posted);
        IF cardinality(diff) > 0 THEN
          PERFORM ledger_post_difference('${type}', NEW.id, NEW.${idColumn}, ${kind}, diff);
        END IF;
        RETURN NEW;
      END $$`;

/**
 * The final statuses as the position rule reads them (a change away from one is a correction).
 * The same lists as invoice.state.ts, refund.state.ts, payout.state.ts and dispute.state.ts: a test holds them
 * equal (test/ledger/corrections.e2e-spec.ts). `expired` is an invoice's lapsed hold.
 */
export const POSITION_FINALS = {
  invoice: ['succeeded', 'rejected', 'unheld', 'expired'],
  refund: ['SUCCESS', 'FAILED'],
  payout: ['succeeded', 'failed', 'rejected', 'cancelled'],
  /** A dispute's position and trigger: migration 1796600000200-DisputesAndChargebacks. */
  dispute: ['won', 'lost', 'accepted'],
} as const;

/**
 * Posting by position (docs/api.md, "Books").
 *
 * Each object's state implies a position in the chart (`ledger_position_invoice`, `_refund`,
 * `_payout` below: the one place of that rule). Every write of an invoice, refund or payout that
 * can change its position runs `ledger_follow_*` before the row is written: it posts the
 * difference between the new position and what the object has posted so far as one entry (none
 * when it is zero), and keeps the new position on the row (`ledger_legs`), so the next change
 * finds what was posted without reading the ledger. Whatever path changes the state (a gateway
 * answer, a notification, Recheck, Accept, reconciliation, a restated write-off), the books
 * follow it: for every object the sum of its entries is the position of its state.
 *
 * An entry takes the kind of the forward movement it is (`invoice.succeeded`, `payout.sent`…)
 * when the object was not final before; a change from a final status, or a second difference of
 * a kind already posted (a restated write-off), is `<type>.corrected`. The unique index keeps the
 * forward kinds once per object; corrections may be several.
 *
 * A payout's create may have been sent from its first claim (`sent_at`): from then until it is
 * final its write-off is frozen, also while its outcome is unknown. A create refused in its
 * answer nets to nothing (frozen, then given back).
 *
 * Existing objects: what they posted is summed onto their rows, and any difference from their
 * position is posted now (a missing `payout.sent` for a payout sent before its id was known, a
 * correction an operator made that booked nothing), so every object starts at its position.
 */
export class LedgerPositions1796500000010 implements MigrationInterface {
  name = 'LedgerPositions1796500000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(legsBalanced(ACCOUNTS));
    await q.query(`ALTER TABLE "ledger_entries" DROP CONSTRAINT "ck_ledger_entries_kind"`);
    await q.query(
      `ALTER TABLE "ledger_entries" ADD CONSTRAINT "ck_ledger_entries_kind" CHECK ("kind" IN (${list(KINDS)}))`,
    );
    await q.query(`DROP INDEX "uq_ledger_entries_object_kind"`);
    await q.query(
      `CREATE UNIQUE INDEX "uq_ledger_entries_object_kind" ON "ledger_entries" ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL AND "kind" NOT LIKE '%.corrected'`,
    );

    for (const t of ['invoices', 'refunds', 'payouts'])
      await q.query(`ALTER TABLE "${t}" ADD COLUMN "ledger_legs" ledger_leg[] NOT NULL DEFAULT '{}'`);

    // a − b, per account and currency, zero legs left out (positions have one leg per account).
    await q.query(`CREATE FUNCTION ledger_legs_minus(a ledger_leg[], b ledger_leg[])
      RETURNS ledger_leg[] LANGUAGE plpgsql IMMUTABLE AS $$
      DECLARE
        out ledger_leg[] := '{}';
        x ledger_leg;
        y ledger_leg;
        s numeric;
        seen boolean;
      BEGIN
        FOREACH x IN ARRAY a LOOP
          s := x.amount;
          FOREACH y IN ARRAY b LOOP
            IF y.account = x.account AND y.currency = x.currency THEN s := s - y.amount; END IF;
          END LOOP;
          IF s <> 0 THEN out := out || ROW(x.account, x.currency, s)::ledger_leg; END IF;
        END LOOP;
        FOREACH y IN ARRAY b LOOP
          seen := false;
          FOREACH x IN ARRAY a LOOP
            IF x.account = y.account AND x.currency = y.currency THEN seen := true; END IF;
          END LOOP;
          IF NOT seen AND y.amount <> 0 THEN
            out := out || ROW(y.account, y.currency, -y.amount)::ledger_leg;
          END IF;
        END LOOP;
        RETURN out;
      END $$`);

    // The positions: the chart of accounts of docs/api.md, one function per kind of object.
    await q.query(`CREATE FUNCTION ledger_position_invoice(i invoices) RETURNS ledger_leg[]
      LANGUAGE plpgsql IMMUTABLE AS $$
      BEGIN
        IF i.status = 'succeeded' THEN
          RETURN ARRAY[ROW('gateway_payment_shop', i.currency, i.amount),
                       ROW('sales', i.currency, -i.amount)]::ledger_leg[];
        END IF;
        RETURN '{}';
      END $$`);
    await q.query(`CREATE FUNCTION ledger_position_refund(r refunds) RETURNS ledger_leg[]
      LANGUAGE plpgsql IMMUTABLE AS $$
      BEGIN
        IF r.status = 'SUCCESS' THEN
          RETURN ARRAY[ROW('sales', r.currency, r.amount),
                       ROW('gateway_payment_shop', r.currency, -r.amount)]::ledger_leg[];
        END IF;
        RETURN '{}';
      END $$`);
    // A payout: its write-off frozen from the moment its create may have been sent until it is
    // final; succeeded: paid (and the fee, when the payee's currency is the shop's), out of
    // available; failed, rejected, cancelled, or never sent: nothing. The write-off is the row's
    // (restated by the gateway's record), else the amount (a shop_amount is its write-off).
    await q.query(`CREATE FUNCTION ledger_position_payout(p payouts) RETURNS ledger_leg[]
      LANGUAGE plpgsql IMMUTABLE AS $$
      DECLARE
        w numeric := COALESCE(p.shop_write_off, p.amount);
        c int := p.shop_currency;
      BEGIN
        IF w IS NULL OR w <= 0 THEN
          RETURN '{}';
        END IF;
        IF p.status = 'succeeded' THEN
          IF (p.ps_currency IS NULL OR p.ps_currency = c) AND p.payee_receive IS NOT NULL
             AND p.payee_receive <= w THEN
            IF p.payee_receive = w THEN
              RETURN ARRAY[ROW('payouts_paid', c, w), ROW('agent_available', c, -w)]::ledger_leg[];
            END IF;
            RETURN ARRAY[ROW('payouts_paid', c, p.payee_receive), ROW('payout_fees', c, w - p.payee_receive),
                         ROW('agent_available', c, -w)]::ledger_leg[];
          END IF;
          RETURN ARRAY[ROW('payouts_paid', c, w), ROW('agent_available', c, -w)]::ledger_leg[];
        END IF;
        IF p.status IN (${list(POSITION_FINALS.payout)}, 'awaiting_approval') OR p.sent_at IS NULL THEN
          RETURN '{}';
        END IF;
        RETURN ARRAY[ROW('agent_frozen', c, w), ROW('agent_available', c, -w)]::ledger_leg[];
      END $$`);

    // One difference, posted: the forward kind when the object has none of it yet, else a
    // correction (several may follow one another). Dated by the service's clock, as every row.
    await q.query(`CREATE FUNCTION ledger_post_difference(p_object_type varchar, p_object_pk uuid,
        p_object_id varchar, p_kind varchar, p_legs ledger_leg[])
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        IF p_kind IS NOT NULL THEN
          INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, legs)
            VALUES (clock_now(), p_kind, p_object_type, p_object_pk, p_object_id, p_legs)
            ON CONFLICT ("object_type", "object_pk", "kind")
              WHERE "object_pk" IS NOT NULL AND "kind" NOT LIKE '%.corrected' DO NOTHING;
          IF FOUND THEN RETURN; END IF;
        END IF;
        INSERT INTO ledger_entries (created_at, kind, object_type, object_pk, object_id, legs)
          VALUES (clock_now(), p_object_type || '.corrected', p_object_type, p_object_pk, p_object_id, p_legs);
      END $$`);

    // The triggers: before the row is written, post the difference and keep the position.
    await q.query(
      followFunction(
        'invoice',
        'shop_order_id',
        `CASE WHEN NEW.status = 'succeeded' AND (TG_OP = 'INSERT' OR OLD.status NOT IN (${list(POSITION_FINALS.invoice)}))
                 THEN 'invoice.succeeded' END`,
      ),
    );
    await q.query(
      followFunction(
        'refund',
        'shop_refund_id',
        `CASE WHEN NEW.status = 'SUCCESS' AND (TG_OP = 'INSERT' OR OLD.status NOT IN (${list(POSITION_FINALS.refund)}))
                 THEN 'refund.succeeded' END`,
      ),
    );
    await q.query(
      followFunction(
        'payout',
        'shop_payment_id',
        `CASE WHEN TG_OP = 'UPDATE' AND OLD.status IN (${list(POSITION_FINALS.payout)}) THEN NULL
                 WHEN NEW.status = 'succeeded' THEN 'payout.succeeded'
                 WHEN NEW.status IN (${list(POSITION_FINALS.payout)}) THEN 'payout.failed'
                 ELSE 'payout.sent' END`,
      ),
    );

    // What was posted so far, onto the rows (the triggers of the rows are off meanwhile).
    for (const [table, type] of [
      ['invoices', 'invoice'],
      ['refunds', 'refund'],
      ['payouts', 'payout'],
    ]) {
      await q.query(`ALTER TABLE "${table}" DISABLE TRIGGER USER`);
      await q.query(
        `UPDATE "${table}" o SET ledger_legs = s.legs
           FROM (SELECT object_pk, array_agg(ROW(account, currency, amount)::ledger_leg ORDER BY account, currency) AS legs
                   FROM (SELECT e.object_pk, l.account, l.currency, sum(l.amount) AS amount
                           FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) l
                          WHERE e.object_type = $1 AND e.object_pk IS NOT NULL
                          GROUP BY 1, 2, 3 HAVING sum(l.amount) <> 0) x
                  GROUP BY object_pk) s
          WHERE o.id = s.object_pk`,
        [type],
      );
      await q.query(`ALTER TABLE "${table}" ENABLE TRIGGER USER`);
    }

    // The old triggers go; the new ones fire on every write that can move a position.
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(`DROP TRIGGER "tr_${t}_ledger_upd" ON "${t}"`);
      await q.query(`DROP TRIGGER "tr_${t}_ledger_ins" ON "${t}"`);
    }
    await q.query(`DROP FUNCTION ledger_on_invoice()`);
    await q.query(`DROP FUNCTION ledger_on_refund()`);
    await q.query(`DROP FUNCTION ledger_on_payout()`);
    await q.query(`DROP FUNCTION ledger_post_invoice(invoices, timestamptz)`);
    await q.query(`DROP FUNCTION ledger_post_refund(refunds, timestamptz)`);
    await q.query(`DROP FUNCTION ledger_post_payout(payouts, timestamptz)`);
    await q.query(
      `DROP FUNCTION ledger_post_legs(varchar, varchar, uuid, varchar, ledger_leg[], timestamptz)`,
    );
    // At insert: the position taken before the row is written, posted once it is in. The states
    // an object can be inserted in with a position (an invoice or refund already final, a payout
    // claimed for its send) are the triggers' WHEN.
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_pos" BEFORE INSERT ON "invoices" FOR EACH ROW
      WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION ledger_follow_invoice()`);
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_ins" AFTER INSERT ON "invoices" FOR EACH ROW
      WHEN (cardinality(NEW.ledger_legs) > 0) EXECUTE FUNCTION ledger_follow_invoice()`);
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_upd" BEFORE UPDATE ON "invoices" FOR EACH ROW
      WHEN (NEW.status IS DISTINCT FROM OLD.status OR NEW.amount IS DISTINCT FROM OLD.amount
            OR NEW.currency IS DISTINCT FROM OLD.currency)
      EXECUTE FUNCTION ledger_follow_invoice()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_pos" BEFORE INSERT ON "refunds" FOR EACH ROW
      WHEN (NEW.status = 'SUCCESS') EXECUTE FUNCTION ledger_follow_refund()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_ins" AFTER INSERT ON "refunds" FOR EACH ROW
      WHEN (cardinality(NEW.ledger_legs) > 0) EXECUTE FUNCTION ledger_follow_refund()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_upd" BEFORE UPDATE ON "refunds" FOR EACH ROW
      WHEN (NEW.status IS DISTINCT FROM OLD.status OR NEW.amount IS DISTINCT FROM OLD.amount
            OR NEW.currency IS DISTINCT FROM OLD.currency)
      EXECUTE FUNCTION ledger_follow_refund()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_pos" BEFORE INSERT ON "payouts" FOR EACH ROW
      WHEN (NEW.sent_at IS NOT NULL OR NEW.status = 'succeeded') EXECUTE FUNCTION ledger_follow_payout()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_ins" AFTER INSERT ON "payouts" FOR EACH ROW
      WHEN (cardinality(NEW.ledger_legs) > 0) EXECUTE FUNCTION ledger_follow_payout()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_upd" BEFORE UPDATE ON "payouts" FOR EACH ROW
      WHEN (NEW.status IS DISTINCT FROM OLD.status OR NEW.sent_at IS DISTINCT FROM OLD.sent_at
            OR NEW.shop_write_off IS DISTINCT FROM OLD.shop_write_off OR NEW.amount IS DISTINCT FROM OLD.amount
            OR NEW.payee_receive IS DISTINCT FROM OLD.payee_receive OR NEW.ps_currency IS DISTINCT FROM OLD.ps_currency
            OR NEW.shop_currency IS DISTINCT FROM OLD.shop_currency)
      EXECUTE FUNCTION ledger_follow_payout()`);

    // Every existing object to its position: the differences are posted now, then kept.
    const follow = {
      invoice: `CASE WHEN o.status = 'succeeded' THEN 'invoice.succeeded' END`,
      refund: `CASE WHEN o.status = 'SUCCESS' THEN 'refund.succeeded' END`,
      payout: `CASE WHEN o.status = 'succeeded' THEN 'payout.succeeded'
                    WHEN o.status IN (${list(POSITION_FINALS.payout)}) THEN 'payout.failed'
                    ELSE 'payout.sent' END`,
    };
    for (const [table, type, idColumn] of [
      ['invoices', 'invoice', 'shop_order_id'],
      ['refunds', 'refund', 'shop_refund_id'],
      ['payouts', 'payout', 'shop_payment_id'],
    ] as const) {
      await q.query(`SELECT ledger_post_difference('${type}', o.id, o.${idColumn}, ${follow[type]},
                            ledger_legs_minus(ledger_position_${type}(o), o.ledger_legs))
                       FROM ${table} o
                      WHERE cardinality(ledger_legs_minus(ledger_position_${type}(o), o.ledger_legs)) > 0
                      ORDER BY o.created_at, o.id`);
      await q.query(`ALTER TABLE "${table}" DISABLE TRIGGER USER`);
      await q.query(`UPDATE ${table} o SET ledger_legs = ledger_position_${type}(o)
                      WHERE ledger_position_${type}(o) IS DISTINCT FROM o.ledger_legs`);
      await q.query(`ALTER TABLE "${table}" ENABLE TRIGGER USER`);
    }

    // The check: every object whose entries do not sum to the position of its state, and every
    // object posted that no longer exists.
    await q.query(`CREATE FUNCTION ledger_position_mismatches()
      RETURNS TABLE (object_type varchar, object_pk uuid, object_id varchar, status varchar,
                     posted ledger_leg[], "position" ledger_leg[])
      LANGUAGE sql STABLE AS $$
      WITH sums AS (
        SELECT e.object_type, e.object_pk, l.account, l.currency, sum(l.amount) AS amount
          FROM ledger_entries e CROSS JOIN LATERAL unnest(e.legs) l
         WHERE e.object_pk IS NOT NULL AND e.object_type IN ('invoice', 'refund', 'payout')
         GROUP BY 1, 2, 3, 4 HAVING sum(l.amount) <> 0),
      posted AS (
        SELECT s.object_type, s.object_pk,
               array_agg(ROW(s.account, s.currency, s.amount)::ledger_leg ORDER BY s.account, s.currency) AS legs
          FROM sums s GROUP BY 1, 2),
      objects AS (
        SELECT 'invoice'::varchar AS object_type, i.id AS object_pk, i.shop_order_id AS object_id,
               i.status, ledger_position_invoice(i) AS pos FROM invoices i
        UNION ALL
        SELECT 'refund', r.id, r.shop_refund_id, r.status, ledger_position_refund(r) FROM refunds r
        UNION ALL
        SELECT 'payout', p.id, p.shop_payment_id, p.status, ledger_position_payout(p) FROM payouts p)
      SELECT COALESCE(o.object_type, p.object_type), COALESCE(o.object_pk, p.object_pk),
             COALESCE(o.object_id, (SELECT e.object_id FROM ledger_entries e
                                     WHERE e.object_type = p.object_type AND e.object_pk = p.object_pk LIMIT 1)),
             o.status, COALESCE(p.legs, '{}'), COALESCE(o.pos, '{}')
        FROM objects o FULL JOIN posted p ON p.object_type = o.object_type AND p.object_pk = o.object_pk
       WHERE cardinality(ledger_legs_minus(COALESCE(o.pos, '{}'), COALESCE(p.legs, '{}'))) > 0
       ORDER BY 1, 3
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The earlier books know no correction and no chargeback: going back would lose them.
    const later = (await q.query(
      `SELECT count(*)::int AS n FROM ledger_entries
        WHERE kind NOT IN (${list(KINDS_060)}) OR EXISTS (SELECT 1 FROM unnest(legs) l WHERE l.account = 'chargebacks')`,
    )) as { n: number }[];
    if (later[0].n > 0)
      throw new Error(
        `LedgerPositions down: ${later[0].n} ledger entries are corrections or chargebacks, which the earlier books cannot hold; entries are immutable, so this migration cannot be reverted`,
      );
    await q.query(`DROP FUNCTION ledger_position_mismatches()`);
    for (const t of ['invoices', 'refunds', 'payouts']) {
      await q.query(`DROP TRIGGER "tr_${t}_ledger_upd" ON "${t}"`);
      await q.query(`DROP TRIGGER "tr_${t}_ledger_ins" ON "${t}"`);
      await q.query(`DROP TRIGGER "tr_${t}_ledger_pos" ON "${t}"`);
    }
    await q.query(`DROP FUNCTION ledger_follow_invoice()`);
    await q.query(`DROP FUNCTION ledger_follow_refund()`);
    await q.query(`DROP FUNCTION ledger_follow_payout()`);
    await q.query(
      `DROP FUNCTION ledger_post_difference(varchar, uuid, varchar, varchar, ledger_leg[])`,
    );
    await q.query(`DROP FUNCTION ledger_position_invoice(invoices)`);
    await q.query(`DROP FUNCTION ledger_position_refund(refunds)`);
    await q.query(`DROP FUNCTION ledger_position_payout(payouts)`);
    await q.query(`DROP FUNCTION ledger_legs_minus(ledger_leg[], ledger_leg[])`);
    for (const t of ['invoices', 'refunds', 'payouts'])
      await q.query(`ALTER TABLE "${t}" DROP COLUMN "ledger_legs"`);
    // The earlier posting, as LedgerLegsInline made it.
    await q.query(LEDGER_070.POST_LEGS);
    await q.query(LEDGER_070.POST_INVOICE);
    await q.query(LEDGER_070.POST_REFUND);
    await q.query(LEDGER_070.POST_PAYOUT);
    await q.query(`CREATE FUNCTION ledger_on_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_invoice(NEW, now()); RETURN NULL; END $$`);
    await q.query(`CREATE FUNCTION ledger_on_refund() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_refund(NEW, now()); RETURN NULL; END $$`);
    await q.query(`CREATE FUNCTION ledger_on_payout() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM ledger_post_payout(NEW, now()); RETURN NULL; END $$`);
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_upd" AFTER UPDATE ON "invoices" FOR EACH ROW
      WHEN (NEW.status = 'succeeded' AND OLD.status IS DISTINCT FROM 'succeeded') EXECUTE FUNCTION ledger_on_invoice()`);
    await q.query(`CREATE TRIGGER "tr_invoices_ledger_ins" AFTER INSERT ON "invoices" FOR EACH ROW
      WHEN (NEW.status = 'succeeded') EXECUTE FUNCTION ledger_on_invoice()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_upd" AFTER UPDATE ON "refunds" FOR EACH ROW
      WHEN (NEW.status = 'SUCCESS' AND OLD.status IS DISTINCT FROM 'SUCCESS') EXECUTE FUNCTION ledger_on_refund()`);
    await q.query(`CREATE TRIGGER "tr_refunds_ledger_ins" AFTER INSERT ON "refunds" FOR EACH ROW
      WHEN (NEW.status = 'SUCCESS') EXECUTE FUNCTION ledger_on_refund()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_upd" AFTER UPDATE ON "payouts" FOR EACH ROW
      WHEN (NEW.withdraw_id IS NOT NULL AND NEW.shop_write_off IS NOT NULL AND (
        OLD.withdraw_id IS NULL OR OLD.shop_write_off IS NULL OR OLD.status IS DISTINCT FROM NEW.status))
      EXECUTE FUNCTION ledger_on_payout()`);
    await q.query(`CREATE TRIGGER "tr_payouts_ledger_ins" AFTER INSERT ON "payouts" FOR EACH ROW
      WHEN (NEW.withdraw_id IS NOT NULL AND NEW.shop_write_off IS NOT NULL) EXECUTE FUNCTION ledger_on_payout()`);
    await q.query(`DROP INDEX "uq_ledger_entries_object_kind"`);
    await q.query(
      `CREATE UNIQUE INDEX "uq_ledger_entries_object_kind" ON "ledger_entries" ("object_type", "object_pk", "kind") WHERE "object_pk" IS NOT NULL`,
    );
    await q.query(`ALTER TABLE "ledger_entries" DROP CONSTRAINT "ck_ledger_entries_kind"`);
    await q.query(
      `ALTER TABLE "ledger_entries" ADD CONSTRAINT "ck_ledger_entries_kind" CHECK ("kind" IN (${list(KINDS_060)}))`,
    );
    await q.query(legsBalanced(ACCOUNTS_070));
  }
}
