import { Amount } from '../common/money';
import { holdReading, judgeInvoice, type InvoiceEvidence, type InvoiceRuleFacts } from './invoice.rules';
import type { InvoiceStatus } from './invoice.state';

const now = new Date('2026-01-01T00:00:00Z');
const policy = { checks: 3, windowS: 600, now };
const facts = (status: InvoiceStatus, over: Partial<InvoiceRuleFacts> = {}): InvoiceRuleFacts => ({
  status,
  amount: Amount.fromText('100.10'),
  currency: 643,
  shopId: 1001,
  absentCount: 0,
  firstAbsentAt: null,
  ...over,
});
const record = (
  status: InvoiceStatus | null,
  over: Partial<InvoiceEvidence> = {},
): InvoiceEvidence =>
  ({ kind: 'record', status, statusText: String(status), ...over }) as InvoiceEvidence;

describe('judgeInvoice: what a gateway message means (every path uses it)', () => {
  it.each<[string, InvoiceRuleFacts, InvoiceEvidence, string]>([
    [
      'success on an open invoice is applied',
      facts('awaiting_payer'),
      record('succeeded'),
      'apply',
    ],
    [
      'success with the same amount at another scale is applied',
      facts('created'),
      record('succeeded', { amount: '100.100' }),
      'apply',
    ],
    [
      'another amount raises attention, changes nothing',
      facts('awaiting_payer'),
      record('succeeded', { amount: '100.11' }),
      'attention:mismatch',
    ],
    [
      'another currency raises attention',
      facts('awaiting_payer'),
      record('succeeded', { currency: '840' }),
      'attention:mismatch',
    ],
    [
      'another shop raises attention',
      facts('awaiting_payer'),
      record('succeeded', { shopId: '7' }),
      'attention:mismatch',
    ],
    [
      'success after rejected is a contradiction',
      facts('rejected'),
      record('succeeded'),
      'attention:contradiction',
    ],
    [
      'rejected after succeeded is a contradiction',
      facts('succeeded'),
      record('rejected'),
      'attention:contradiction',
    ],
    [
      'success after unheld is a contradiction',
      facts('unheld'),
      record('succeeded'),
      'attention:contradiction',
    ],
    [
      'the same final status again changes nothing',
      facts('succeeded'),
      record('succeeded'),
      'ignore',
    ],
    ['a late non-final status changes nothing', facts('succeeded'), record('held'), 'ignore'],
    [
      'an unknown status word is never final',
      facts('unknown'),
      record(null, { statusText: 'failed' }),
      'ignore',
    ],
  ])('%s', (_name, inv, ev, expected) => {
    const v = judgeInvoice(inv, ev, policy);
    expect(v.kind === 'attention' ? `attention:${v.reason}` : v.kind).toBe(expected);
  });

  it('absence is evidence over time: final only after enough checks spread over the window', () => {
    const first = judgeInvoice(facts('unknown'), { kind: 'absent' }, policy);
    expect(first).toEqual({ kind: 'absent', count: 1, firstAt: now });
    const early = new Date(now.getTime() - 100_000);
    expect(
      judgeInvoice(
        facts('pending', { absentCount: 5, firstAbsentAt: early }),
        { kind: 'absent' },
        policy,
      ),
    ).toMatchObject({ kind: 'absent', count: 6 });
    const longAgo = new Date(now.getTime() - 600_000);
    expect(
      judgeInvoice(
        facts('pending', { absentCount: 1, firstAbsentAt: longAgo }),
        { kind: 'absent' },
        policy,
      ),
    ).toMatchObject({ kind: 'absent', count: 2 });
    expect(
      judgeInvoice(
        facts('pending', { absentCount: 2, firstAbsentAt: longAgo }),
        { kind: 'absent' },
        policy,
      ),
    ).toEqual({ kind: 'never_created', count: 3 });
  });

  it('an invoice the gateway had answered is never rejected for being absent', () => {
    expect(
      judgeInvoice(
        facts('awaiting_payer', { absentCount: 9, firstAbsentAt: new Date(0) }),
        { kind: 'absent' },
        policy,
      ).kind,
    ).toBe('ignore');
  });

  it('an answered invoice (its gateway id known) that the gateway no longer knows is a mismatch, never rejected', () => {
    for (const status of ['awaiting_payer', 'held', 'succeeded', 'rejected'] as const) {
      const v = judgeInvoice(facts(status, { invoiceId: '4242' }), { kind: 'absent' }, policy);
      expect({ status, kind: v.kind === 'attention' ? `attention:${v.reason}` : v.kind }).toEqual({
        status,
        kind: 'attention:mismatch',
      });
    }
  });
});

/** A verdict in one line: kind, target status, flag and the invoice id it teaches. */
function summary(v: ReturnType<typeof judgeInvoice>): string {
  let s = v.kind === 'attention' ? `attention:${v.reason}` : v.kind;
  if (v.kind === 'apply') s += `:${v.to}`;
  if ((v.kind === 'apply' || v.kind === 'ignore') && v.flag) s += ` +${v.flag.reason}`;
  if ('invoiceId' in v && v.invoiceId !== undefined) s += ` #${v.invoiceId}`;
  return s;
}

describe('judgeInvoice: the invoice id every record carries', () => {
  const id = { invoiceId: '777' };
  it.each<[string, InvoiceRuleFacts, InvoiceEvidence, string]>([
    [
      'a check record of a paid invoice teaches the id the create answer lost',
      facts('unknown', { invoiceId: null }),
      record('succeeded', id),
      'apply:succeeded #777',
    ],
    [
      'a held record teaches it too',
      facts('created', { invoiceId: null }),
      record('held', id),
      'apply:held #777',
    ],
    [
      'a record whose status changes nothing still teaches it',
      facts('succeeded', { invoiceId: null }),
      record('succeeded', id),
      'ignore #777',
    ],
    [
      'the same id known already: nothing to learn',
      facts('awaiting_payer', { invoiceId: '777' }),
      record('succeeded', id),
      'apply:succeeded',
    ],
    [
      'another id than the known one: the record is not ours',
      facts('awaiting_payer', { invoiceId: '778' }),
      record('succeeded', id),
      'attention:mismatch',
    ],
    [
      'paid without any id: flagged at once',
      facts('awaiting_payer', { invoiceId: null }),
      record('succeeded'),
      'apply:succeeded +missing_invoice_id',
    ],
    [
      'held without any id: flagged at once',
      facts('created', { invoiceId: null }),
      record('held'),
      'apply:held +missing_invoice_id',
    ],
    [
      'a paid invoice still without an id stays flagged',
      facts('succeeded', { invoiceId: null }),
      record('succeeded'),
      'ignore +missing_invoice_id',
    ],
    [
      'rejected without an id needs none',
      facts('awaiting_payer', { invoiceId: null }),
      record('rejected'),
      'apply:rejected',
    ],
    [
      'waiting without an id needs none yet',
      facts('created', { invoiceId: null }),
      record('awaiting_payer'),
      'apply:awaiting_payer',
    ],
  ])('%s', (_name, inv, ev, expected) => {
    expect(summary(judgeInvoice(inv, ev, policy))).toBe(expected);
  });
});

describe('judgeInvoice: an unhold is judged by its record', () => {
  const sent = { invoiceId: '5', unholdRequestedAt: new Date('2026-01-01T00:00:00Z') };
  const known = { invoiceId: '5' };
  it.each<[string, InvoiceRuleFacts, InvoiceEvidence, string]>([
    [
      '6 answering our unhold is the released hold',
      facts('held', sent),
      record('rejected'),
      'apply:unheld',
    ],
    [
      '6 from a check or a notification after our unhold: released',
      facts('held', sent),
      record('rejected', { invoiceId: '5' }),
      'apply:unheld',
    ],
    [
      '6 on a hold we never asked to release stays a rejection',
      facts('held', known),
      record('rejected'),
      'apply:rejected',
    ],
    [
      '8 answering our unhold: still held, settled later',
      facts('held', sent),
      record('held'),
      'ignore',
    ],
    [
      '4 answering our unhold: charged, flagged, never unheld',
      facts('held', sent),
      record('succeeded'),
      'apply:succeeded +charge_on_unhold',
    ],
    [
      '6 for an invoice already unheld is the same outcome, no contradiction',
      facts('unheld', sent),
      record('rejected'),
      'ignore',
    ],
    [
      '6 for an unheld invoice even without the request time (older rows)',
      facts('unheld', known),
      record('rejected'),
      'ignore',
    ],
    [
      '4 after unheld remains a contradiction',
      facts('unheld', sent),
      record('succeeded'),
      'attention:contradiction',
    ],
    [
      '6 after succeeded remains a contradiction',
      facts('succeeded', sent),
      record('rejected'),
      'attention:contradiction',
    ],
  ])('%s', (_name, inv, ev, expected) => {
    expect(summary(judgeInvoice(inv, ev, policy))).toBe(expected);
  });
});

describe('judgeInvoice: a hold that lapses at the gateway', () => {
  const before = new Date(now.getTime() - 1000);
  const after = new Date(now.getTime() + 1000);
  const verdict = (f: InvoiceRuleFacts, status: InvoiceStatus | null): string => {
    const v = judgeInvoice(f, record(status, { invoiceId: '55' }), policy);
    return v.kind === 'apply' ? `apply:${v.to}` : v.kind;
  };
  it.each<[string, InvoiceRuleFacts, InvoiceStatus | null, string]>([
    ['a 6 past the known expiry, no unhold of ours: expired', facts('held', { invoiceId: '55', holdExpiresAt: before }), 'rejected', 'apply:expired'],
    ['a 6 at the very expiry: expired', facts('held', { invoiceId: '55', holdExpiresAt: now }), 'rejected', 'apply:expired'],
    ['a 6 before the expiry: not a lapse (rejected)', facts('held', { invoiceId: '55', holdExpiresAt: after }), 'rejected', 'apply:rejected'],
    ['a 6 with the expiry unknown: never taken as a lapse', facts('held', { invoiceId: '55', holdExpiresAt: null }), 'rejected', 'apply:rejected'],
    ['a 6 after our unhold, past the expiry: the release (unheld)', facts('held', { invoiceId: '55', holdExpiresAt: before, unholdRequestedAt: before }), 'rejected', 'apply:unheld'],
    ['a 6 again for an expired invoice: the same outcome', facts('expired', { invoiceId: '55', holdExpiresAt: before }), 'rejected', 'ignore'],
    ['a 4 for an expired invoice contradicts it', facts('expired', { invoiceId: '55', holdExpiresAt: before }), 'succeeded', 'attention'],
  ])('%s', (_name, f, status, expected) => {
    expect(verdict(f, status)).toBe(expected);
  });
});

describe('holdReading: a gateway 6 read against a hold (reconciliation uses it)', () => {
  it('names unheld, expired, or passes the status on', () => {
    const past = new Date(now.getTime() - 1);
    expect(holdReading({ status: 'unheld' }, 'rejected', now)).toBe('unheld');
    expect(holdReading({ status: 'expired', holdExpiresAt: past }, 'rejected', now)).toBe('expired');
    expect(holdReading({ status: 'held', holdExpiresAt: past }, 'rejected', now)).toBe('expired');
    expect(holdReading({ status: 'held', holdExpiresAt: null }, 'rejected', now)).toBe('rejected');
    expect(holdReading({ status: 'held', holdExpiresAt: past }, 'held', now)).toBe('held');
  });
});
