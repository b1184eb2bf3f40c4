/**
 * The gateway's calls: their paths and signed fields. The interface document leaves some out;
 * the defaults are the ones observed in public clients (docs/gateway-facts.md), and
 * GATEWAY_CALLS overrides any of them.
 */
import { ConfigError, type Env, str } from './parse';

export type GatewayCall =
  | 'invoice/try'
  | 'invoice/create'
  | 'invoice/hold'
  | 'invoice/check'
  | 'invoice/charge'
  | 'invoice/unhold'
  | 'invoice/create-refund'
  | 'invoice/get-refunds'
  | 'shop_input_config/shop'
  | 'shop_output_config/shop'
  | 'shop_balance'
  | 'withdraw/try'
  | 'check_account'
  | 'withdraw/create'
  | 'withdraw/status'
  | 'withdraw/shop_payment_status';

export interface GatewayCallConfig {
  /** Path below the base URL, without a leading slash. */
  path: string;
  /** Body fields that take part in the signature. */
  signed: string[];
}

/** The spec's paths and signed fields, plus gateway-facts.md for the calls the spec leaves out. */
export const DEFAULT_GATEWAY_CALLS: Record<GatewayCall, GatewayCallConfig> = {
  'invoice/try': {
    path: 'invoice/try',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/create': {
    path: 'invoice/create',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/hold': {
    path: 'invoice/hold',
    signed: ['amount', 'currency', 'payway', 'shop_id', 'shop_order_id'],
  },
  'invoice/check': { path: 'invoice/check', signed: ['now', 'shop_id', 'shop_order_id'] },
  'invoice/charge': { path: 'invoice/charge', signed: ['invoice_id', 'now', 'shop_id'] },
  'invoice/unhold': { path: 'invoice/unhold', signed: ['invoice_id', 'now', 'shop_id'] },
  'invoice/create-refund': {
    path: 'invoice/create-refund',
    signed: ['amount', 'invoice_id', 'shop_id', 'shop_refund_id'],
  },
  'invoice/get-refunds': { path: 'invoice/get-refunds', signed: ['invoice_id', 'now', 'shop_id'] },
  'shop_input_config/shop': { path: 'shop_input_config/shop', signed: ['now', 'shop_id'] },
  'shop_output_config/shop': { path: 'shop_output_config/shop', signed: ['now', 'shop_id'] },
  shop_balance: { path: 'shop_balance', signed: ['now', 'shop_id'] },
  'withdraw/try': {
    path: 'withdraw/try',
    signed: ['amount', 'amount_type', 'payway', 'shop_currency', 'shop_id'],
  },
  check_account: { path: 'check_account', signed: ['account', 'amount', 'payway', 'shop_id'] },
  'withdraw/create': {
    path: 'withdraw/create',
    signed: [
      'account',
      'amount',
      'amount_type',
      'payway',
      'shop_currency',
      'shop_id',
      'shop_payment_id',
    ],
  },
  'withdraw/status': { path: 'withdraw/status', signed: ['now', 'shop_id', 'withdraw_id'] },
  'withdraw/shop_payment_status': {
    path: 'withdraw/shop_payment_status',
    signed: ['now', 'shop_id', 'shop_payment_id'],
  },
};

/** DEFAULT_GATEWAY_CALLS with the GATEWAY_CALLS overrides (JSON) laid over them. */
export function gatewayCalls(env: Env): Record<GatewayCall, GatewayCallConfig> {
  const calls: Record<GatewayCall, GatewayCallConfig> = JSON.parse(
    JSON.stringify(DEFAULT_GATEWAY_CALLS),
  );
  const raw = str(env, 'GATEWAY_CALLS');
  if (raw === undefined) return calls;
  let overrides: unknown;
  try {
    overrides = JSON.parse(raw);
  } catch {
    throw new ConfigError(
      'GATEWAY_CALLS',
      'must be JSON: {"invoice/hold": {"path": "...", "signed": ["..."]}}',
    );
  }
  if (typeof overrides !== 'object' || overrides === null)
    throw new ConfigError('GATEWAY_CALLS', 'must be a JSON object');
  for (const [call, value] of Object.entries(overrides as Record<string, unknown>)) {
    if (!(call in calls)) throw new ConfigError('GATEWAY_CALLS', `names an unknown call "${call}"`);
    const v = value as Partial<GatewayCallConfig>;
    if (v.path !== undefined && typeof v.path !== 'string')
      throw new ConfigError('GATEWAY_CALLS', `${call}.path must be a string`);
    if (
      v.signed !== undefined &&
      !(Array.isArray(v.signed) && v.signed.every((s) => typeof s === 'string'))
    ) {
      throw new ConfigError('GATEWAY_CALLS', `${call}.signed must be a list of field names`);
    }
    calls[call as GatewayCall] = { ...calls[call as GatewayCall], ...v };
  }
  return calls;
}
