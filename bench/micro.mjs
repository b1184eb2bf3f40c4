// Micro-benchmarks of the hot pure paths (run: npm run bench:micro). Targets are printed next to results;
// a result under its target exits non-zero. Uses the compiled build (npm run build).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const { sign } = require('../dist/src/gateway/signature.js');
const { verifyNotification, signNotificationFields } = require('../dist/src/gateway/notification-signature.js');
const { parseExactJson } = require('../dist/src/gateway/lossless.js');
const { Amount } = require('../dist/src/common/money.js');

require('reflect-metadata');
const { ValidationPipe } = require('@nestjs/common');
const { createValidationPipe, VALIDATION_PIPE_OPTIONS } = require('../dist/src/common/validation.js');
const { CreateInvoiceDto } = require('../dist/src/invoices/dto/create-invoice.dto.js');

const SECRET = 'bench-secret-key';

/** As bench(), for a function that returns a promise: one at a time, awaited. */
async function benchAsync(name, targetOpsPerSec, iterations, fn) {
  for (let i = 0; i < Math.min(1000, iterations); i++) await fn(i); // warm-up
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn(i);
  const ms = performance.now() - start;
  const ops = Math.round((iterations / ms) * 1000);
  const ok = ops >= targetOpsPerSec;
  console.log(`${ok ? 'ok  ' : 'SLOW'} ${name.padEnd(44)} ${String(ops).padStart(9)} ops/s (target ${targetOpsPerSec})`);
  return { ok, ops };
}

function bench(name, targetOpsPerSec, iterations, fn) {
  for (let i = 0; i < Math.min(1000, iterations); i++) fn(i); // warm-up
  const start = performance.now();
  for (let i = 0; i < iterations; i++) fn(i);
  const ms = performance.now() - start;
  const ops = Math.round((iterations / ms) * 1000);
  const ok = ops >= targetOpsPerSec;
  console.log(`${ok ? 'ok  ' : 'SLOW'} ${name.padEnd(44)} ${String(ops).padStart(9)} ops/s (target ${targetOpsPerSec})`);
  return ok;
}

const body = { shop_id: 1001, shop_order_id: 'order-1', amount: '100.10', currency: 643, payway: 'card_core_payin_rub[mock_server,success_with_callback]' };
const keys = ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'];
const fields = {
  shop_id: '1001', shop_order_id: 'order-1', shop_amount: '100.10', shop_currency: '643', payment_id: '555',
  client_price: '102.60', ps_currency: '643', payway: 'card_core_payin_rub[mock_server,success_with_callback]', status: 'success', ps_data: '{}', addons: '{}',
  created: '2026-11-21T10:00:00', updated: '2026-11-21T10:01:00', description: 'Order 1', shop_refund: '0',
};
const notification = JSON.stringify({ ...fields, sign: signNotificationFields(fields, SECRET) });
const response = JSON.stringify({ result: true, message: 'Ok', error_code: 0, data: { shop_amount: 100.10, client_price: 102.60, payment_id: 555, status: 4, shop_refund: 0 } });
// A create's body as the shop sends it (the bench's load adds nothing more).
const createBody = () => ({
  shopOrderId: 'order-1001',
  amount: '100.10',
  currency: 643,
  payway: 'card_core_payin_rub[mock_server,success_with_callback]',
  description: 'Order 1001',
  metadata: { cartId: 'cart-7' },
});
const bodyMeta = { type: 'body', metatype: CreateInvoiceDto, data: '' };
const servicePipe = createValidationPipe();
const classValidatorPipe = new ValidationPipe(VALIDATION_PIPE_OPTIONS);
const amounts = Array.from({ length: 1000 }, (_, i) => Amount.parse(`${i}.${String(i % 100).padStart(2, '0')}`));

const results = [
  bench('request signature (sha256, 5 fields)', 50_000, 100_000, () => sign(body, keys, SECRET)),
  bench('notification verification (JSON, 15 fields)', 10_000, 50_000, () => {
    if (!verifyNotification(notification, 'application/json', SECRET).valid) throw new Error('invalid');
  }),
  bench('lossless response parse', 20_000, 50_000, () => parseExactJson(response)),
  bench('Amount: sum of 1000 amounts', 500, 2_000, () => Amount.sum(amounts)),
];
// The create's validation: the service's pipe (compiled check first) against class-validator's
// own pipe with the same options, on the same body.
const quick = await benchAsync('create body validation, service pipe', 15_000, 50_000, () => servicePipe.transform(createBody(), bodyMeta));
const full = await benchAsync('  same, class-validator\'s own pipe (information)', 0, 50_000, () => classValidatorPipe.transform(createBody(), bodyMeta));
console.log(`     service pipe ÷ class-validator's pipe: ${(quick.ops / full.ops).toFixed(2)}×`);
results.push(quick.ok);
process.exit(results.every(Boolean) ? 0 : 1);
