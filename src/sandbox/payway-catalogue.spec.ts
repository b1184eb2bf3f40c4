import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from './decimal';
import {
  findPaymentPayway,
  findPayoutPayway,
  convert,
  loadCatalogue,
  payerPrice,
  payoutAmounts,
} from './payway-catalogue';
import { startTestSandbox, TestShop, uniqueId } from './testing/sandbox-test-kit';
import { PAYMENT, PAYOUT } from '../../test/support/payways';

describe('payway catalogue', () => {
  const catalogue = loadCatalogue();

  it('lists each suffixed alias as a payway of its own, with fees read exactly from JSON numbers', () => {
    expect(findPaymentPayway(catalogue, PAYMENT.card)).toMatchObject({
      id: 1101,
      currency: 643,
      min_amount: '10.0',
      fee_part_config: { percent_part: '1.0', fix_part: '1.0' },
      is_active: true,
      add_ons_config: {},
      two_step: true,
      tokens: true,
      card_data: true,
    });
    expect(findPaymentPayway(catalogue, PAYMENT.cardSuccess)?.id).toBe(1102);
    expect(findPaymentPayway(catalogue, 'card_core_payin_rub')).toBeUndefined();
    expect(findPaymentPayway(catalogue, PAYMENT.cardUsd)?.currency).toBe(840);
    expect(findPaymentPayway(catalogue, PAYMENT.wallet)?.add_ons_config.phone.regex).toBe(
      '^\\+?7\\d{10}$',
    );
    expect(findPaymentPayway(catalogue, PAYMENT.inactive)?.is_active).toBe(false);
    expect(findPayoutPayway(catalogue, PAYOUT.card)?.fee_config).toEqual({
      percent: '1.0',
      fix: '30.0',
    });
    expect(findPayoutPayway(catalogue, PAYOUT.wallet)).toBeDefined();
  });

  it.each([
    [840, 643, '100.00', '9250.00'],
    [643, 840, '100.00', '1.08'],
    [643, 643, '100.10', '100.10'],
  ])('converts %s to %s at the fixed rate: %s → %s', (from, to, amount, converted) => {
    expect(convert(catalogue, Decimal.parse(amount), from, to).toFixed(2)).toBe(converted);
  });

  it.each([
    [PAYMENT.card, '100.10', '102.60'],
    [PAYMENT.card, '0.20', '0.21'], // 0.205 half-up
    [PAYMENT.cardUsd, '1.30', '1.65'],
    [PAYMENT.wallet, '100.00', '104.00'],
    [PAYMENT.wallet, '1.00', '3.52'], // 1 + 0.015 + 2.5 = 3.515
  ])('payer price on %s for %s is %s', (alias, amount, price) => {
    const payway = findPaymentPayway(catalogue, alias);
    if (payway === undefined) throw new Error(alias);
    expect(payerPrice(payway, Decimal.parse(amount)).toFixed(2)).toBe(price);
  });

  it.each([
    ['ps_amount', '1000.00', '1000.00', '1040.00'],
    ['shop_amount', '1000.00', '960.00', '1000.00'],
    ['ps_amount', '150.50', '150.50', '182.01'],
  ] as const)('payout %s %s: payee %s, write-off %s', (type, amount, payee, writeOff) => {
    const payway = findPayoutPayway(catalogue, PAYOUT.card);
    if (payway === undefined) throw new Error(PAYOUT.card);
    const r = payoutAmounts(payway, Decimal.parse(amount), type);
    expect([r.payeeReceive.toFixed(2), r.shopWriteOff.toFixed(2)]).toEqual([payee, writeOff]);
  });

  describe('a replacement catalogue file', () => {
    const raw = JSON.parse(readFileSync(join('src', 'sandbox', 'catalogue.json'), 'utf8')) as {
      payment_groups: { payways: Record<string, unknown>[] }[];
    };
    const rawCard = raw.payment_groups[0].payways[0];
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-catalogue-'));
    const write = (name: string, content: unknown): string => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(content));
      return path;
    };

    it('names the first problem of a bad file', () => {
      const bad = { ...raw, balances: [{ currency: 643, available: 1000 }] };
      expect(() => loadCatalogue(write('bad.json', bad))).toThrow(
        'balances[0].available must be decimal text',
      );
      expect(() => loadCatalogue(join(dir, 'missing.json'))).toThrow('cannot be read as JSON');
    });

    it('is served by a sandbox started with cataloguePath', async () => {
      const custom = {
        ...raw,
        payment_groups: [
          {
            ...raw.payment_groups[0],
            payways: [{ ...rawCard, alias: 'card_eur[mock_server,success]', currency: 978 }],
          },
        ],
        balances: [{ currency: 978, available: '5.00' }],
      };
      const sandbox = await startTestSandbox({ cataloguePath: write('custom.json', custom) });
      try {
        const shop = new TestShop(sandbox);
        const r = await shop.call('invoice/try', {
          shop_order_id: uniqueId('c'),
          amount: '10.00',
          currency: 978,
          payway: 'card_eur[mock_server,success]',
        });
        expect(r.text).toContain('"payer_price":10.25');
        const old = await shop.call('invoice/try', {
          shop_order_id: uniqueId('c'),
          amount: '10.00',
          currency: 643,
          payway: PAYMENT.card,
        });
        expect(old.error_code).toBe(10);
      } finally {
        await sandbox.close();
      }
    });
  });
});
