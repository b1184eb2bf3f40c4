import { Amount } from '../common/money';
import { judgeInvoice, type InvoiceEvidence, type InvoiceRuleFacts } from './invoice.rules';
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
});
