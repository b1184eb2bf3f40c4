import { sha256Hex } from '../common/sha256';
import type { DataSource } from 'typeorm';
import { isSealed, type KeyRing } from '../common/key-ring';
import { notificationContentKey, NOTIFICATION_KEY_VERSION } from './notification-key';
import { notificationFieldContext, SEALED_NOTIFICATION_FIELDS } from './notification-payload';

/**
 * The start-up step that gives inbox rows of an older key recipe the current key, so a
 * redelivery of an old notification — with or without added empty fields — still finds its row.
 * Version 1 (the key over every field, empty ones included) is computed again from the stored
 * fields exactly as a new arrival's is; version 2 (the signed text without the kind) takes its
 * kind by one SQL statement per batch over its stored key and type (notification-key.ts
 * typedKey), opening nothing. A row stored under a kind that is not its own (a replay under a
 * wrong `?type=`, answered OK before such a kind was refused) so leaves the key of the genuine
 * notification, which is then received and applied as new. It runs before the service listens;
 * the data says what is left, so an interrupted run carries on at the next start.
 *
 * Rows that now share a key (the same notification stored twice under the old recipe, e.g. once
 * with an extra empty field) keep the earliest row as the notification's; the later ones keep
 * their history under a key no arrival can produce.
 */
export interface RekeyReport {
  rekeyed: number;
  /** Later copies of a notification already stored (they keep their rows, out of the key space). */
  superseded: number;
  /** Rows whose sealed fields could not be opened; left as they were. */
  failed: string[];
}

/** Any constant: one instance at a time re-keys. */
const REKEY_LOCK = 7_233_024;
const BATCH = 500;

export async function rekeyNotifications(ds: DataSource, keys: KeyRing): Promise<RekeyReport> {
  const report: RekeyReport = { rekeyed: 0, superseded: 0, failed: [] };
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [REKEY_LOCK]);
    let after = { at: new Date(0), id: '00000000-0000-0000-0000-000000000000' };
    for (;;) {
      // Oldest first: the first copy of a notification takes its key.
      const rows = (await ds.query(
        `SELECT id, type, verified, payload, received_at FROM notifications
          WHERE key_version < 2 AND (received_at, id) > ($1, $2)
          ORDER BY received_at, id LIMIT $3`,
        [after.at, after.id, BATCH],
      )) as Array<{
        id: string;
        type: string;
        verified: boolean;
        payload: Record<string, string>;
        received_at: Date;
      }>;
      for (const row of rows) {
        let fields: Record<string, string>;
        try {
          fields = openFields(keys, row.id, row.payload);
        } catch {
          report.failed.push(row.id);
          continue;
        }
        await rekeyRow(
          ds,
          row.id,
          notificationContentKey(row.type, fields, row.verified),
          report,
        );
      }
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1];
      after = { at: last.received_at, id: last.id };
    }
    await typeSignedKeys(ds, report);
    return report;
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [REKEY_LOCK]).catch(() => undefined);
    await runner.release();
  }
}

/** SQL twin of typedKey over a row: SHA-256 of `type:` and its version-2 key. */
const TYPED_KEY_SQL = `encode(sha256(convert_to(type || ':' || content_key, 'UTF8')), 'hex')`;

/**
 * Version-2 rows get their kind into their key, a batch per statement in id order. A key taken
 * meanwhile by a new arrival (an instance already listening received the redelivery first)
 * leaves this row under a key no arrival can produce, as rekeyRow does.
 */
async function typeSignedKeys(ds: DataSource, report: RekeyReport): Promise<void> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    let rows: Array<{ id: string; superseded: boolean }>;
    try {
      rows = (
        (await ds.query(
          `WITH batch AS (
             SELECT id, ${TYPED_KEY_SQL} AS k FROM notifications
              WHERE key_version = 2 AND id > $1 ORDER BY id LIMIT $2 FOR UPDATE)
           UPDATE notifications n
              SET content_key = CASE
                    WHEN EXISTS (SELECT 1 FROM notifications o WHERE o.content_key = b.k AND o.id <> n.id)
                    THEN encode(sha256(convert_to('superseded:' || n.id::text, 'UTF8')), 'hex')
                    ELSE b.k END,
                  key_version = $3
             FROM batch b WHERE n.id = b.id
           RETURNING n.id::text AS id, n.content_key <> b.k AS superseded`,
          [after, BATCH, NOTIFICATION_KEY_VERSION],
        )) as [Array<{ id: string; superseded: boolean }>, number]
      )[0];
    } catch (e) {
      // Taken in the meantime by a new arrival: the same batch again sees it taken.
      if ((e as { code?: string }).code === '23505') continue;
      throw e;
    }
    for (const r of rows) {
      if (r.superseded) report.superseded += 1;
      else report.rekeyed += 1;
      if (r.id > after) after = r.id;
    }
    if (rows.length < BATCH) return;
  }
}

async function rekeyRow(
  ds: DataSource,
  id: string,
  key: string,
  report: RekeyReport,
): Promise<void> {
  const taken = (await ds.query(`SELECT 1 FROM notifications WHERE content_key = $1 AND id <> $2`, [
    key,
    id,
  ])) as unknown[];
  try {
    if (taken.length === 0) {
      await ds.query(`UPDATE notifications SET content_key = $1, key_version = $2 WHERE id = $3`, [
        key,
        NOTIFICATION_KEY_VERSION,
        id,
      ]);
      report.rekeyed += 1;
      return;
    }
  } catch (e) {
    // Taken in the meantime by a new arrival (another instance already listening).
    if ((e as { code?: string }).code !== '23505') throw e;
  }
  await ds.query(`UPDATE notifications SET content_key = $1, key_version = $2 WHERE id = $3`, [
    sha256Hex(`superseded:${id}`),
    NOTIFICATION_KEY_VERSION,
    id,
  ]);
  report.superseded += 1;
}

/** The stored fields as received: sealed ones opened (a value sealed before the ring is as sent). */
function openFields(
  keys: KeyRing,
  id: string,
  payload: Record<string, string>,
): Record<string, string> {
  const open = { ...payload };
  for (const f of SEALED_NOTIFICATION_FIELDS) {
    const v = open[f];
    if (typeof v === 'string' && isSealed(v))
      open[f] = keys.unseal(v, notificationFieldContext(id, f));
  }
  return open;
}
