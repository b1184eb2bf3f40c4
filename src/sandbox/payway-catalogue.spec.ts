import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from './decimal';
import {
  findPaymentPayway,
  findPayoutPayway,
  loadCatalogue,
  payerPrice,
  payoutAmounts,
} from './payway-catalogue';
import { startTestSandbox, TestShop, uniqueId } from './testing/sandbox-test-kit';

describe('payway catalogue', () => {
  const catalogue = loadCatalogue();

  it('has the card, wallet and inactive payment payways and two payout payways', () => {
    expect(findPaymentPayway(catalogue, 'card_rub')).toMatchObject({
      currency: 643,
      two_step: true,
      tokens: true,
      card_data: true,
    });
    expect(findPaymentPayway(catalogue, 'card_usd')?.currency).toBe(840);
    expect(findPaymentPayway(catalogue, 'wallet_rub')?.add_ons_config.phone.regex).toBe(
      '^\\+?7\\d{10}$',
    );
    expect(findPaymentPayway(catalogue, 'old_rub')?.is_active).toBe('false');
    expect(findPayoutPayway(catalogue, 'card_rub')?.fee_config).toEqual({
      percent: '1',
      fix: '30',
    });
    expect(findPayoutPayway(catalogue, 'wallet_rub')).toBeDefined();
  });

  it.each([
    ['card_rub', '100.10', '102.60'],
    ['card_rub', '0.20', '0.21'], // 0.205 half-up
    ['card_usd', '1.30', '1.65'],
    ['wallet_rub', '100.00', '104.00'],
    ['wallet_rub', '1.00', '3.52'], // 1 + 0.015 + 2.5 = 3.515
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
    const payway = findPayoutPayway(catalogue, 'card_rub');
    if (payway === undefined) throw new Error('card_rub');
    const r = payoutAmounts(payway, Decimal.parse(amount), type);
    expect([r.payeeReceive.toFixed(2), r.shopWriteOff.toFixed(2)]).toEqual([payee, writeOff]);
  });

  describe('a replacement catalogue file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-catalogue-'));
    const write = (name: string, content: unknown): string => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(content));
      return path;
    };

    it('names the first problem of a bad file', () => {
      const bad = { ...catalogue, balances: [{ currency: 643, available: 1000 }] };
      expect(() => loadCatalogue(write('bad.json', bad))).toThrow(
        'balances[0].available must be decimal text',
      );
      expect(() => loadCatalogue(join(dir, 'missing.json'))).toThrow('cannot be read as JSON');
    });

    it('is served by a sandbox started with cataloguePath', async () => {
      const custom = {
        ...catalogue,
        payment_groups: [
          {
            ...catalogue.payment_groups[0],
            payways: [
              { ...catalogue.payment_groups[0].payways[0], alias: 'card_eur', currency: 978 },
            ],
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
          payway: 'card_eur',
        });
        expect(r.text).toContain('"payer_price":10.25');
        const old = await shop.call('invoice/try', {
          shop_order_id: uniqueId('c'),
          amount: '10.00',
          currency: 643,
          payway: 'card_rub',
        });
        expect(old.error_code).toBe(10);
      } finally {
        await sandbox.close();
      }
    });
  });
});
