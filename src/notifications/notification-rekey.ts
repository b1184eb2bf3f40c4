import { sha256Hex } from '../common/sha256';
import type { DataSource } from 'typeorm';
import { isSealed, type KeyRing } from '../common/key-ring';
import { notificationContentKey, NOTIFICATION_KEY_VERSION } from './notification-key';
import { notificationFieldContext, SEALED_NOTIFICATION_FIELDS } from './notification-payload';

/**
 * The start-up step that gives inbox rows of an older key recipe (key_version < 2: the key over
 * every field, empty ones included, and the type) the current key, computed from the stored
 * fields exactly as a new arrival's is, so a redelivery of an old notification — with or without
 * added empty fields — still finds its row. It runs before the service listens; the data says
 * what is left, so an interrupted run carries on at the next start.
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
        `SELECT id, verified, payload, received_at FROM notifications
          WHERE key_version < $1 AND (received_at, id) > ($2, $3)
          ORDER BY received_at, id LIMIT $4`,
        [NOTIFICATION_KEY_VERSION, after.at, after.id, BATCH],
      )) as Array<{
        id: string;
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
        await rekeyRow(ds, row.id, notificationContentKey(fields, row.verified), report);
      }
      if (rows.length < BATCH) break;
      const last = rows[rows.length - 1];
      after = { at: last.received_at, id: last.id };
    }
    return report;
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [REKEY_LOCK]).catch(() => undefined);
    await runner.release();
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
