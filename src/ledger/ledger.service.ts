import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IdempotencyConflict, ValidationFailed } from '../common/errors';
import { differingFields, differs } from '../common/idempotency';
import { decodeCursor, encodeCursor, DEFAULT_PAGE_SIZE } from '../common/pagination';
import { logger } from '../common/logger';
import { moneyText } from '../common/money';
import { csvCell } from '../reports/daily-report';
import {
  adjustmentFacts,
  adjustmentOfEntry,
  adjustmentPostings,
  parseAdjustment,
  parseIdempotencyKey,
} from './ledger.chart';
import {
  balancesAt,
  entryIdByIdempotencyKey,
  listEntries,
  positionMismatches,
  postEntry,
  type EntryRow,
} from './ledger-sql';
import type {
  BalancesView,
  EntriesQuery,
  EntryPage,
  EntryView,
  LedgerCheckView,
} from './dto/ledger.dto';
import { ledgerPositionMismatches } from '../metrics/metrics';
import { instantOf } from '../common/date-time';

const log = logger.child({ component: 'ledger' });

function entryView(r: EntryRow): EntryView {
  const v: EntryView = {
    id: r.id,
    createdAt: new Date(r.created_at).toISOString(),
    kind: r.kind,
    // Each amount with its currency's minor-unit digits, however it was posted ("-1000000.00").
    postings: (r.postings ?? []).map((p) => ({ ...p, amount: moneyText(p.amount, p.currency) })),
  };
  if (r.object_type !== null) v.objectType = r.object_type;
  if (r.object_id !== null) v.objectId = r.object_id;
  if (r.event_id !== null) v.eventId = r.event_id;
  if (r.key_id !== null) v.keyId = r.key_id;
  if (r.note !== null) v.note = r.note;
  return v;
}

const CSV_COLUMNS = [
  'id',
  'created_at',
  'kind',
  'object_type',
  'object_id',
  'event_id',
  'key_id',
  'note',
  'account',
  'currency',
  'amount',
];
const CSV_TEXT = new Set([
  'kind',
  'object_type',
  'object_id',
  'event_id',
  'key_id',
  'note',
  'account',
]);

/** Entries as one RFC 4180 table, a row per posting. */
export function entriesCsv(items: readonly EntryView[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const e of items) {
    for (const p of e.postings) {
      const row: Record<string, string | number | undefined> = {
        id: e.id,
        created_at: e.createdAt,
        kind: e.kind,
        object_type: e.objectType,
        object_id: e.objectId,
        event_id: e.eventId,
        key_id: e.keyId,
        note: e.note,
        account: p.account,
        currency: p.currency,
        amount: p.amount,
      };
      lines.push(CSV_COLUMNS.map((c) => csvCell(row[c], CSV_TEXT.has(c))).join(','));
    }
  }
  return lines.join('\r\n') + '\r\n';
}

@Injectable()
export class LedgerService {
  constructor(private readonly ds: DataSource) {}

  async balances(at?: string): Promise<BalancesView> {
    const when = instantOf(at, 'timeOrDay') ?? new Date();
    const rows = await balancesAt(this.ds, when);
    return {
      at: when.toISOString(),
      balances: rows.map((r) => ({
        account: r.account,
        currency: r.currency,
        balance: moneyText(r.balance, r.currency),
      })),
    };
  }

  /**
   * The books against the objects: every invoice, refund and payout whose entries do not sum to
   * the position its status implies (empty when healthy). Sets `ledger_position_mismatches`.
   */
  async check(): Promise<LedgerCheckView> {
    const checkedAt = new Date();
    const { objects, mismatches } = await positionMismatches(this.ds);
    ledgerPositionMismatches.set(mismatches.length);
    if (mismatches.length > 0)
      log.error(
        { mismatches: mismatches.length, first: mismatches[0].object_id },
        'ledger: objects whose entries do not equal the position of their state',
      );
    return {
      checkedAt: checkedAt.toISOString(),
      objects,
      mismatches: mismatches.map((m) => ({
        objectType: m.object_type,
        objectId: m.object_id,
        status: m.status,
        posted: m.posted,
        position: m.position,
      })),
    };
  }

  /** A page of entries; `currency` (the console's filter) keeps entries with a posting in it. */
  async entries(q: EntriesQuery & { currency?: number }): Promise<EntryPage> {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const beforeId = decodeCursor(q.cursor, 'bigint') ?? undefined;
    const rows = await listEntries(this.ds, {
      objectType: q.objectType,
      objectId: q.objectId,
      account: q.account,
      currency: q.currency,
      from: instantOf(q.from, 'timeOrDay'),
      to: instantOf(q.to, 'timeOrDay'),
      beforeId,
      limit,
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(entryView),
      nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
    };
  }

  /**
   * An operator's adjustment: checked whole (body and `Idempotency-Key`) before anything is
   * written; the entry keeps the admin's key. Under an `Idempotency-Key` the same request posts
   * once: a repeat answers the entry posted first (`replayed`), another request is a 409 naming
   * what differs from the entry (the first request's facts are its legs and note).
   */
  async adjust(
    body: unknown,
    keyId: string | null,
    idempotencyKey?: unknown,
  ): Promise<{ entry: EntryView; replayed: boolean }> {
    const parsed = parseAdjustment(body);
    const header = parseIdempotencyKey(idempotencyKey);
    const errors = [...header.errors, ...('errors' in parsed ? parsed.errors : [])];
    if (errors.length > 0 || 'errors' in parsed) throw new ValidationFailed(errors);
    const posted = await postEntry(this.ds, {
      kind: 'adjustment',
      keyId,
      note: parsed.note,
      postings: adjustmentPostings(parsed),
      idempotencyKey: header.key,
    });
    // Not posted: only an entry under the same key (and admin key) refuses one.
    const id = posted ?? (await entryIdByIdempotencyKey(this.ds, keyId, header.key as string));
    if (id === null) throw new Error('adjustment: neither posted nor found under its key');
    const [row] = await listEntries(this.ds, { id, limit: 1 });
    if (posted === null) {
      const differing = differingFields(
        adjustmentFacts(adjustmentOfEntry(row)),
        adjustmentFacts(parsed),
      );
      if (differing.length > 0)
        throw new IdempotencyConflict('Idempotency-Key', header.key as string, differs(differing));
    } else {
      log.info(
        {
          entry: id,
          account: parsed.account,
          currency: parsed.currency,
          amount: parsed.amount,
          keyId,
        },
        'ledger adjustment',
      );
    }
    return { entry: entryView(row), replayed: posted === null };
  }
}
