import type { DataSource, EntityManager } from 'typeorm';
import { isSealed, type KeyRing, SEALED_PREFIX, SealError } from '../common/key-ring';
import { deriveKey, unseal as unsealLegacy } from '../common/sealed';
import { PAYMENT_TOKEN_INDEX, paymentTokenContext, registerToken } from '../invoices/payment-token';
import type { PaymentTokenInfo } from '../invoices/invoice.entity';
import { notificationFieldContext } from '../notifications/notification-payload';
import { Amount } from '../common/money';
import { accountContext } from '../payouts/account-seal';
import { fingerprintOfStored } from '../payouts/payout-fingerprint';

/**
 * Re-sealing of every secret kept at rest, in batches of rows locked `FOR UPDATE SKIP LOCKED`
 * (a row the service is working on is taken on a later pass, never waited for), each batch its
 * own short transaction. Which rows still need work is read from the data itself (the key id
 * in each sealed value), so an interrupted run simply starts again where the data says.
 *
 * Two uses: `npm run keys:rotate` moves everything under the ring's first key; the start-up
 * step (`legacyOnly`) seals what the key ring never sealed — clear tokens and payout accounts
 * sealed with the key derived from GATEWAY_SECRET_KEY before there was a ring.
 */
export interface ResealOptions {
  /** The gateway secret that sealed accounts before the key ring (format `v1.`). */
  legacySecret?: string;
  /** Only values never sealed by the ring (the start-up step); otherwise everything not under the first key. */
  legacyOnly?: boolean;
  batchSize?: number;
  /** How long to keep coming back for rows locked by the running service. */
  maxWaitMs?: number;
  onBatch?: (column: string, resealed: number) => void;
}

export interface ResealReport {
  resealed: Record<string, number>;
  /** Rows that could not be opened (a key missing from the ring, an altered value). */
  failed: Array<{ column: string; id: string; reason: string }>;
  /** Rows still to do (locked throughout, or failed). */
  remaining: number;
}

interface Row {
  id: string;
  value: string;
  hash?: string | null;
  [column: string]: unknown;
}

interface SealedColumn {
  name: string;
  /** Rows needing work: `$1` the prefix a done value starts with (or `doneMark`'s value). */
  where: string;
  /** What `$1` is for this column when not the sealed prefix (e.g. the first key's id). */
  doneMark?: (keys: KeyRing) => string;
  /** Not part of the start-up step (`legacyOnly`): nothing there was sealed by hand. */
  rotationOnly?: boolean;
  table: string;
  valueSql: string;
  extraSelect?: string;
  write(m: EntityManager, row: Row, keys: KeyRing, open: (row: Row) => string): Promise<void>;
}

const COLUMNS: SealedColumn[] = [
  {
    name: 'payouts.account_sealed',
    table: 'payouts',
    valueSql: 'account_sealed',
    where: `left(account_sealed, length($1)) <> $1`,
    async write(m, row, keys, open) {
      const sealed = keys.seal(open(row), accountContext(row.id));
      await m.query(`UPDATE payouts SET account_sealed = $1 WHERE id = $2`, [sealed, row.id]);
    },
  },
  {
    name: 'invoices.payment_token',
    table: 'invoices',
    valueSql: 'payment_token',
    extraSelect: ', payment_token_hash AS hash, shop_id AS "shopId", payment_token_info AS info',
    // A value without its blind index was never sealed by the ring: a clear token.
    where: `payment_token IS NOT NULL AND (left(payment_token, length($1)) <> $1 OR payment_token_hash IS NULL)`,
    async write(m, row, keys, open) {
      const token = open(row);
      const index = keys.blindIndex(token, PAYMENT_TOKEN_INDEX);
      await m.query(
        `UPDATE invoices SET payment_token = $1, payment_token_hash = $2 WHERE id = $3`,
        [keys.seal(token, paymentTokenContext(row.id)), index, row.id],
      );
      // The registry entry follows the token to the first key (or is made for a clear token).
      await registerToken(m, {
        shopId: Number(row.shopId),
        invoiceRowId: row.id,
        indexes: keys.blindIndexes(token, PAYMENT_TOKEN_INDEX),
        index,
        info: (row.info ?? {}) as PaymentTokenInfo,
      });
    },
  },
  {
    name: 'notifications.payload.ps_data',
    table: 'notifications',
    valueSql: `payload->>'ps_data'`,
    where: `coalesce(payload->>'ps_data', '') <> '' AND left(payload->>'ps_data', length($1)) <> $1`,
    async write(m, row, keys, open) {
      const sealed = keys.seal(open(row), notificationFieldContext(row.id, 'ps_data'));
      await m.query(
        `UPDATE notifications SET payload = jsonb_set(payload, '{ps_data}', to_jsonb($1::text)) WHERE id = $2`,
        [sealed, row.id],
      );
    },
  },
  {
    // Payout idempotency: the request fingerprint is an HMAC under the ring,
    // so it moves to the first key too, recomputed from the row and its sealed recipient (after
    // the account column above, so the recipient already opens under the first key). Which key
    // made it is stored beside it: a re-run finds nothing to do.
    name: 'payouts.request_fingerprint',
    table: 'payouts',
    valueSql: 'account_sealed',
    extraSelect: `, shop_payment_id, amount::text AS amount, amount_type, shop_currency, payway, description`,
    where: `request_fingerprint_key IS DISTINCT FROM $1`,
    doneMark: (keys) => keys.primaryId,
    rotationOnly: true,
    async write(m, row, keys, open) {
      let recipient: { account: string; accountDetails?: Record<string, string> };
      try {
        recipient = JSON.parse(open(row)) as typeof recipient;
      } catch (e) {
        if (e instanceof SealError) throw e;
        throw new SealError('the sealed recipient is not a recipient');
      }
      const fingerprint = fingerprintOfStored(keys, {
        shopPaymentId: String(row.shop_payment_id),
        amount: Amount.fromText(String(row.amount)),
        amountType: String(row.amount_type),
        shopCurrency: Number(row.shop_currency),
        payway: String(row.payway),
        account: recipient.account,
        accountDetails: recipient.accountDetails,
        description: row.description === null ? null : String(row.description),
      });
      await m.query(
        `UPDATE payouts SET request_fingerprint = $1, request_fingerprint_key = $2 WHERE id = $3`,
        [fingerprint, keys.primaryId, row.id],
      );
    },
  },
];

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

export async function resealAll(
  ds: DataSource,
  keys: KeyRing,
  opts: ResealOptions = {},
): Promise<ResealReport> {
  const batchSize = opts.batchSize ?? 500;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  const done = opts.legacyOnly ? SEALED_PREFIX : `${SEALED_PREFIX}${keys.primaryId}.`;
  const legacyKey = opts.legacySecret ? deriveKey(opts.legacySecret, 'payout-account') : null;
  const report: ResealReport = { resealed: {}, failed: [], remaining: 0 };

  for (const col of COLUMNS) {
    if (col.rotationOnly && opts.legacyOnly) continue;
    const mark = col.doneMark?.(keys) ?? done;
    const ctx = contextOf(col);
    const open = (row: Row): string => {
      if (isSealed(row.value)) return keys.unseal(row.value, ctx(row.id));
      if (col.table === 'payouts') {
        if (legacyKey === null)
          throw new SealError('sealed before the key ring; GATEWAY_SECRET_KEY needed');
        return unsealLegacy(row.value, legacyKey);
      }
      return row.value;
    };
    const failedIds = new Set<string>();
    report.resealed[col.name] = 0;
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      let after = FIRST_ID;
      for (;;) {
        const rows = await ds.transaction(async (m) => {
          const batch = (await m.query(
            `SELECT id, ${col.valueSql} AS value${col.extraSelect ?? ''} FROM ${col.table}
              WHERE id > $2 AND ${col.where} ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED`,
            [mark, after, batchSize],
          )) as Row[];
          let n = 0;
          for (const row of batch) {
            if (failedIds.has(row.id)) continue;
            try {
              await col.write(m, row, keys, open);
              n += 1;
            } catch (e) {
              if (!(e instanceof SealError)) throw e;
              failedIds.add(row.id);
              report.failed.push({ column: col.name, id: row.id, reason: e.message });
            }
          }
          report.resealed[col.name] += n;
          if (n > 0) opts.onBatch?.(col.name, n);
          return batch;
        });
        if (rows.length < batchSize) break;
        after = rows[rows.length - 1].id;
      }
      const left = await remaining(ds, col, mark);
      if (left <= failedIds.size || Date.now() > deadline) {
        report.remaining += left;
        break;
      }
      // Rows the service holds locked right now: come back for them shortly.
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return report;
}

async function remaining(ds: DataSource, col: SealedColumn, done: string): Promise<number> {
  const rows = (await ds.query(`SELECT count(*)::int AS n FROM ${col.table} WHERE ${col.where}`, [
    done,
  ])) as Array<{ n: number }>;
  return rows[0].n;
}

function contextOf(col: SealedColumn): (id: string) => ReturnType<typeof accountContext> {
  if (col.table === 'payouts') return accountContext;
  if (col.table === 'invoices') return paymentTokenContext;
  return (id) => notificationFieldContext(id, 'ps_data');
}

/** Any constant: one instance at a time runs the start-up step. */
const UPGRADE_LOCK = 7_233_016;

/**
 * The start-up data step: seals clear tokens and re-seals accounts sealed before the key ring,
 * before the service takes requests. Idempotent (the data says what is left), so every start
 * runs it and finds nothing to do once it has finished.
 */
export async function upgradeLegacySecrets(
  ds: DataSource,
  keys: KeyRing,
  legacySecret: string,
): Promise<ResealReport> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [UPGRADE_LOCK]);
    return await resealAll(ds, keys, { legacySecret, legacyOnly: true, maxWaitMs: 5_000 });
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [UPGRADE_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
