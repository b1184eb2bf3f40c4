// The load benchmark's settings (env knobs, see bench/run.mjs) and the fixed values of a run.
const env = process.env;
export const num = (name, def) => (env[name] === undefined || env[name] === '' ? def : Number(env[name]));

export const DURATION_S = num('BENCH_DURATION_S', 10);
export const ROUNDS = num('BENCH_ROUNDS', 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`BENCH_ROUNDS must be a whole number ≥ 1, not ${env.BENCH_ROUNDS}`);
export const WARMUP_S = num('BENCH_WARMUP_S', 3);
export const P3_INVOICES = num('BENCH_P3_INVOICES', 40_000);
export const READ_INVOICES = num('BENCH_READ_INVOICES', 20_000);
// Which path BENCH_PROFILE=1 profiles: `create` (POST /invoices), `read` (GET /invoices/{id}) or
// `notify` (P3's notifications).
export const PROFILE_PATH = env.BENCH_PROFILE_PATH ?? 'create';
export const P4_PAYOUTS = num('BENCH_P4_PAYOUTS', 20_000);
// The mission's payout poll interval (spec: 30-second intervals); the window sees one whole
// interval of first polls and the start of the second round, where a double poll would show.
export const P4_INTERVAL_S = 30;
export const P4_S = num('BENCH_P4_S', 50);
export const P4_LATENESS_GOAL_MS = 2000;
// HOSTILE: the connections of both of its loads, and the requests of each kind its amplification
// cases time one after the other. Not P1's 64: a refusal is CPU with no I/O to yield at, so a ping
// waits behind every refusal read before it (about connections ÷ refusals per second), and at 64
// that queue (0.3–0.6 s) hides a request that holds the event loop; at 16 it is under 0.1 s.
export const HOSTILE_CONNECTIONS = num('BENCH_HOSTILE_CONNECTIONS', 16);
export const HOSTILE_SAMPLES = num('BENCH_HOSTILE_SAMPLES', 50);
export const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim().toUpperCase())) : null;
export const wants = (row) => ONLY === null || ONLY.has(row);

// Not the sandbox's default shop id or secret: the service refuses those outside sandbox mode.
export const SHOP_ID = 4242;
export const SECRET = 'bench-secret-key-0123456789';
export const SHOP_KEY = 'bench-shop-key-0123456789';
export const ADMIN_KEY = 'bench-admin-key-0123456789';
// Payway literals of the run, in one place (the sandbox catalogue's listed aliases): payments
// that wait for the payer, payouts that stay `sent` for ever.
export const PAYMENT_PAYWAY = 'card_core_payin_rub[mock_server,success_with_callback]';
export const PAYOUT_PAYWAY = 'qiwi_topup_rub_to_card[sandbox,never_final]';
export const PAYOUT_ACCOUNT = '4111111111111111';
export const PAYOUT_AMOUNT = '100';

/**
 * A create's phase 1 writes the invoice's first check (created + INVOICE_RECONCILE_GRACE_S, 120 s)
 * and its deadline (created + INVOICE_RECONCILE_MAX_S, 2 days): seeded rows carry them too, or the
 * service's reconciler would schedule every seeded row in one UPDATE during the measured load.
 */
export const SEEDED_CHECKS = "now() + interval '120 seconds', now() + interval '172800 seconds'";
