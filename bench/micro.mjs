// Micro-benchmarks of the hot pure paths (run: npm run bench:micro). Targets are printed next to results;
// a result under its target exits non-zero. Uses the compiled build (npm run build).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const { sign } = require('../dist/src/gateway/signature.js');
const { verifyNotification, signNotificationFields } = require('../dist/src/gateway/notification-signature.js');
const { parseExactJson } = require('../dist/src/gateway/lossless.js');
const { Amount } = require('../dist/src/common/money.js');

const SECRET = 'bench-secret-key';

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
const amounts = Array.from({ length: 1000 }, (_, i) => Amount.parse(`${i}.${String(i % 100).padStart(2, '0')}`));

const results = [
  bench('request signature (sha256, 5 fields)', 50_000, 100_000, () => sign(body, keys, SECRET)),
  bench('notification verification (JSON, 15 fields)', 10_000, 50_000, () => {
    if (!verifyNotification(notification, 'application/json', SECRET).valid) throw new Error('invalid');
  }),
  bench('lossless response parse', 20_000, 50_000, () => parseExactJson(response)),
  bench('Amount: sum of 1000 amounts', 500, 2_000, () => Amount.sum(amounts)),
];
process.exit(results.every(Boolean) ? 0 : 1);
