import { LosslessNumber } from 'lossless-json';
import { Decimal } from './decimal';
import { parsePayway } from './faults';
import { toJsonText } from './json-text';
import { findPaymentPayway, findPayoutPayway, loadCatalogue } from './payway-catalogue';
import {
  parseSnapshot,
  restoreSnapshot,
  snapshotOf,
  snapshotText,
  SNAPSHOT_VERSION,
} from './sandbox.snapshot';
import { INVOICE_STATUS, Notice, PAYOUT_STATUS, SandboxState, Settings } from './sandbox.state';

const SETTINGS: Settings = {
  notifyFormat: 'json',
  suppressNotifications: false,
  shopNotifyUrl: null,
  timeScale: 1,
  timeoutDelayMs: null,
  latencyMs: 0,
  holdLifetimeS: 604800,
};
const CARD = 'card_core_payin_rub[mock_server,success_with_callback]';
const TO_CARD = 'qiwi_topup_rub_to_card[sandbox,slow_final]';

function freshState(settings: Settings = SETTINGS): SandboxState {
  return new SandboxState(settings, [{ currency: 643, available: '1000000.00' }], 1002);
}

/** A state holding one of everything, with amounts and times a float or a second would spoil. */
function filledState(): SandboxState {
  const catalogue = loadCatalogue();
  const state = freshState();
  const at = new Date('2026-03-01T23:59:59.987Z');
  state.invoices.set(41, {
    id: 41,
    shopId: 1001,
    shopOrderId: 'order-ü-41',
    payway: parsePayway(CARD),
    paywayConfig: findPaymentPayway(catalogue, CARD)!,
    amount: Decimal.parse('1250.50'),
    currency: 643,
    clientPrice: Decimal.parse('1281.7625'),
    description: 'with "quotes" and\nnewline',
    twoStep: false,
    status: INVOICE_STATUS.PAID,
    errorCode: 0,
    urls: { callback: 'http://127.0.0.1:1/notify' },
    addons: { phone: '79991234567' },
    cardMask: '411111******1111',
    clientInfo: { browser_screen_width: new LosslessNumber('1920.0'), js: true },
    issueToken: true,
    issuedToken: 'tok_abc',
    sessionId: 'cs_1',
    needs3ds: false,
    created: at,
    updated: new Date(at.getTime() + 1),
    processed: new Date(at.getTime() + 2),
    expiresAt: new Date(at.getTime() + 86_400_000),
    completesAt: new Date(at.getTime() + 3),
  });
  state.refunds.set('r-1', {
    shopRefundId: 'r-1',
    invoiceId: 41,
    amount: Decimal.parse('0.10'),
    currency: 643,
    status: 'WAITING',
    errorCode: 0,
    createdAt: at,
  });
  state.payouts.set(42, {
    id: 42,
    shopId: 1002,
    shopPaymentId: 'p-42',
    payway: parsePayway(TO_CARD),
    paywayConfig: findPayoutPayway(catalogue, TO_CARD)!,
    accountMask: '427638******5678',
    amountType: 'ps_amount',
    amount: Decimal.parse('99999999999999999.99'),
    payeeReceive: Decimal.parse('1000.00'),
    shopWriteOff: Decimal.parse('1040.000'),
    psCurrency: 643,
    shopCurrency: 643,
    status: PAYOUT_STATUS.SENT,
    errorCode: 0,
    rrn: '',
    bankTransactionId: '',
    created: at,
    updated: at,
    finalStatus: PAYOUT_STATUS.CANCELLED,
    finalAt: new Date(at.getTime() + 7_200_000),
  });
  state.tokens.set('tok_abc', {
    token: 'tok_abc',
    shopId: 1001,
    paywayAlias: 'card_core_payin_rub',
    accountMask: '411111******1111',
    expiresAt: new Date('2027-03-01T00:00:00.001Z'),
    cardInfo: { issuing_country: 'RU' },
  });
  const b = state.balance(1002, 643);
  b.available = Decimal.parse('998959.90');
  b.hold = Decimal.parse('0.01');
  b.frozen = Decimal.parse('1040.000');
  state.balance(1001, 840).available = Decimal.parse('-0.50');
  state.lastId = 1_780_000_000_123;
  const notice: Notice = {
    type: 'invoice',
    group: 'invoice:order-ü-41',
    url: 'http://127.0.0.1:1/notify',
    fields: { shop_amount: new LosslessNumber('1250.50'), shop_id: 1001, sign: 'abc' },
  };
  state.notices.push(notice);
  state.outbox.push({ notice, attempt: 3, dueAt: new Date(at.getTime() + 240_000) });
  state.withheld.set('invoice:x', [notice]);
  state.requests.push({
    time: at.toISOString(),
    path: 'invoice/create',
    body: { amount: new LosslessNumber('100.10'), shop_order_id: 'x' },
    signed_by: 1001,
    http_status: 200,
    result: true,
    error_code: null,
    fault: null,
  });
  state.deliveries.push({
    time: at.toISOString(),
    url: 'http://127.0.0.1:1/notify?type=invoice',
    type: 'invoice',
    format: 'form',
    body: notice.fields,
    attempt: 2,
    status: null,
    reply: 'connect ECONNREFUSED',
    ok: false,
  });
  state.faults.add({ path: 'withdraw/create', fault: 'timeout_done', remaining: 2, delayMs: 5 });
  return state;
}

/** Snapshot → text → snapshot → a fresh state. */
function roundTrip(state: SandboxState, settings: Settings = SETTINGS): SandboxState {
  const restored = freshState(settings);
  restoreSnapshot(restored, parseSnapshot(snapshotText(snapshotOf(state))));
  return restored;
}

describe('sandbox state snapshot', () => {
  it('comes back exactly: amounts digit for digit, times to the millisecond, every map', () => {
    const state = filledState();
    const back = roundTrip(state);
    const now = new Date('2026-03-02T00:00:00Z');
    expect(snapshotOf(back, now)).toEqual(snapshotOf(state, now));

    const invoice = back.invoices.get(41)!;
    expect(invoice.amount.toString()).toBe('1250.50');
    expect(invoice.clientPrice.toString()).toBe('1281.7625');
    expect(invoice.created.toISOString()).toBe('2026-03-01T23:59:59.987Z');
    expect(invoice.completesAt?.getTime()).toBe(state.invoices.get(41)!.completesAt!.getTime());
    expect([...invoice.payway.scenarios]).toEqual(['success_with_callback']);
    expect(invoice.paywayConfig).toEqual(state.invoices.get(41)!.paywayConfig);
    expect(toJsonText(invoice.clientInfo!)).toBe('{"browser_screen_width":1920.0,"js":true}');
    expect(back.refunds.get('r-1')!.amount.toString()).toBe('0.10');
    const payout = back.payouts.get(42)!;
    expect(payout.amount.toString()).toBe('99999999999999999.99');
    expect(payout.shopWriteOff.toString()).toBe('1040.000');
    expect(payout.finalStatus).toBe(PAYOUT_STATUS.CANCELLED);
    expect(payout.finalAt?.toISOString()).toBe('2026-03-02T01:59:59.987Z');
    expect(back.tokens.get('tok_abc')!.expiresAt.toISOString()).toBe('2027-03-01T00:00:00.001Z');
    const balance = back.balance(1002, 643);
    expect([balance.available, balance.hold, balance.frozen].map(String)).toEqual([
      '998959.90',
      '0.01',
      '1040.000',
    ]);
    expect(back.balance(1001, 840).available.toString()).toBe('-0.50');
    // Ids go on from where they were, never reused.
    expect(back.newId()).toBe(1_780_000_000_124);
    expect(toJsonText(back.notices[0].fields)).toBe(
      '{"shop_amount":1250.50,"shop_id":1001,"sign":"abc"}',
    );
    expect(back.outbox).toEqual([
      expect.objectContaining({ attempt: 3, dueAt: new Date('2026-03-02T00:03:59.987Z') }),
    ]);
    expect(toJsonText(back.requests[0].body)).toBe('{"amount":100.10,"shop_order_id":"x"}');
    expect(back.faults.list()).toEqual([
      { path: 'withdraw/create', fault: 'timeout_done', remaining: 2, delayMs: 5 },
    ]);
  });

  it('writes amounts as text, never as JSON numbers', () => {
    const text = snapshotText(snapshotOf(filledState()));
    expect(text).toContain('"amount":"99999999999999999.99"');
    expect(text).toContain('"available":"998959.90"');
    expect(text).not.toMatch(/"(amount|available|hold|frozen|shopWriteOff)":\d/);
  });

  it('an empty state comes back with the saved balances, not the seed', () => {
    const state = freshState();
    state.debit(1002, 643, Decimal.parse('0.01'));
    expect(roundTrip(state).balance(1002, 643).available.toString()).toBe('999999.99');
  });

  it('keeps settings changed at run time; the others take this start-up', () => {
    const state = freshState();
    state.settings.shopNotifyUrl = 'http://127.0.0.1:9/n';
    const next = { ...SETTINGS, timeScale: 0.5, notifyFormat: 'form' as const };
    const back = roundTrip(state, next);
    expect(back.settings).toEqual({ ...next, shopNotifyUrl: 'http://127.0.0.1:9/n' });
    // A reset afterwards returns to this start's settings.
    back.reset();
    expect(back.settings).toEqual(next);
  });

  it('refuses a snapshot of another version or not a snapshot at all', () => {
    const snap = { ...snapshotOf(freshState()), version: SNAPSHOT_VERSION + 1 };
    expect(() => restoreSnapshot(freshState(), snap)).toThrow(/version/);
    expect(() => parseSnapshot('[]')).toThrow(/not a sandbox state/);
    expect(() => parseSnapshot('{"version":1')).toThrow();
  });
});
