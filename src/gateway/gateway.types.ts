/**
 * Request and response shapes of every gateway call (gateway-interface.md; the shapes it leaves
 * out follow gateway-facts.md and the sandbox). Responses keep unknown fields (index signature):
 * the gateway may add fields at any time. Money is `string`: the exact decimal text received.
 */

/** A decimal amount as text, sent and received digit for digit (for example "100.10"). */
export type DecimalString = string;

/** Any field the gateway adds later; never an error. */
interface Open {
  [field: string]: unknown;
}

// ---------------------------------------------------------------- requests

export interface InvoiceTryRequest {
  shop_order_id: string;
  amount: DecimalString;
  currency: number;
  payway: string;
  description?: string;
}

export interface CardData {
  number: string;
  cardholder: string;
  expiry_month: string;
  expiry_year: string;
  cvv: string;
}

export interface ClientInfo {
  browser_accept_header?: string;
  browser_java_enabled?: boolean;
  browser_javascript_enabled?: boolean;
  browser_language?: string;
  browser_color_depth?: string;
  browser_screen_height?: string;
  browser_screen_width?: string;
  browser_tz?: string;
  browser_user_agent?: string;
  challenge_window_size?: string;
}

/** Body of `invoice/create` and `invoice/hold`. */
export interface InvoiceCreateRequest extends InvoiceTryRequest {
  client_ip?: string;
  failed_url?: string;
  success_url?: string;
  callback_url?: string;
  callback_rejected_url?: string;
  card?: CardData;
  issue_payment_token?: boolean;
  payment_token?: string;
  client_info?: ClientInfo;
  /** Payway-specific fields from `add_ons_config`, sent as top-level string fields. */
  extras?: Record<string, string>;
}

export interface RefundCreateRequest {
  invoice_id: number;
  amount: DecimalString;
  shop_refund_id: string;
  callback_url?: string;
}

export type AmountType = 'ps_amount' | 'shop_amount';

export interface WithdrawTryRequest {
  amount: DecimalString;
  amount_type: AmountType;
  payway: string;
  shop_currency: number;
  account?: string;
  account_details?: Record<string, string>;
}

export interface CheckAccountRequest {
  account: string;
  amount: DecimalString;
  payway: string;
  account_details?: Record<string, string>;
}

export interface WithdrawCreateRequest {
  shop_payment_id: string;
  amount: DecimalString;
  amount_type: AmountType;
  shop_currency: number;
  payway: string;
  account: string;
  account_details?: Record<string, string>;
  description?: string;
}

// ---------------------------------------------------------------- responses

export interface AddOnField extends Open {
  comment?: Record<string, string>;
  label?: Record<string, string>;
  example?: string;
  regex?: string;
  prefix?: string;
}

/** `data` of `invoice/try`. */
export interface InvoiceTryResult extends Open {
  add_ons_config: Record<string, AddOnField>;
  payer_price: DecimalString;
  paymethod_id: number;
  paymethod_name: string;
  ps_currency: number;
  info: Record<string, unknown>;
  manual: Record<string, string>;
  warning: Record<string, string>;
}

/** `data` of `invoice/create` and `invoice/hold`. */
export interface InvoiceCreateResult extends Open {
  id: number;
  method: 'POST' | 'GET' | null;
  url: string | null;
  data: Record<string, unknown>;
}

export interface CardInfo extends Open {
  issuing_country?: string;
  issuing_bank?: string;
  payment_system?: string;
  funding_source?: string;
  payment_system_product?: string;
}

export interface PaymentToken extends Open {
  token: string;
  status: string;
  expires_at: string;
  account: string;
  card_info: CardInfo;
}

/** `data` of `invoice/charge` and `invoice/unhold`. */
export interface InvoiceRecord extends Open {
  shop_order_id: string;
  shop_id: number;
  status: number;
  payment_id: number;
  /** JSON text from the payment system. */
  ps_data: string;
  ps_currency: number;
  payway: string;
  description: string;
  created: string;
  updated: string;
  processed: string;
  shop_currency: number;
  shop_amount: DecimalString;
  client_price: DecimalString;
  error_code: number;
  shop_refund: DecimalString;
  settlement_currency: number;
  settlement_rate: DecimalString | null;
}

/** `data` of `invoice/check`. */
export interface InvoiceCheckRecord extends InvoiceRecord {
  expires_at: string;
  is_unique: boolean;
  payment_token?: PaymentToken;
}

export type RefundStatus = 'WAITING' | 'SUCCESS' | 'FAILED';

/** `data` of refund creation; elements of `invoice/get-refunds`. */
export interface RefundRecord extends Open {
  shop_refund_id: string;
  status: RefundStatus;
  invoice_id: number;
  amount: DecimalString;
  /** Alphabetic currency code. */
  currency: string;
  error_code: number;
  created_at: string;
  processed_at: string;
  settlement_amount: DecimalString;
  /** Alphabetic currency code. */
  settlement_currency: string;
  settlement_rate: DecimalString | null;
}

export interface FeeConfig extends Open {
  percent: DecimalString;
  fix: DecimalString;
}

export interface FeePartConfig extends Open {
  percent_part: DecimalString;
  fix_part: DecimalString;
}

export interface InputPayway extends Open {
  id: number;
  alias: string;
  currency: number;
  min_amount: DecimalString;
  max_amount: DecimalString;
  fee_config: FeeConfig;
  fee_part_config: FeePartConfig;
  /** Textual boolean, for example "true". */
  is_active: string;
  add_ons_config: Record<string, AddOnField>;
}

export interface AccountInfoField extends Open {
  regex: string;
  title: string;
}

export interface OutputPayway extends Open {
  alias: string;
  currency: number;
  min_amount: DecimalString;
  max_amount: DecimalString;
  fee_config: FeeConfig;
  account_info_config: Record<string, AccountInfoField>;
  paysystem_data: Record<string, unknown>;
}

export interface PaywayGroup<P> extends Open {
  id: number;
  name: string;
  payways: P[];
  rating: number;
}

export interface BalanceEntry extends Open {
  currency: number;
  available: DecimalString;
  hold: DecimalString;
  frozen: DecimalString;
}

/** `data` of `shop_balance`. */
export interface ShopBalance extends Open {
  shop_id: number;
  balances: BalanceEntry[];
}

/** `data` of `withdraw/try`. */
export interface WithdrawTryResult extends Open {
  payee_receive: DecimalString;
  shop_write_off: DecimalString;
  ps_currency: number;
  shop_currency: number;
  account_info_config: Record<string, AccountInfoField>;
}

/** `data` of `check_account`. */
export interface CheckAccountResult extends Open {
  result: boolean;
  account_info?: Record<string, unknown>;
}

/** `data` of `withdraw/create`. */
export interface WithdrawCreateResult extends Open {
  id: number;
  balance: DecimalString;
  payee_receive: DecimalString;
  ps_currency: number;
  shop_currency: number;
  shop_payment_id: string;
  shop_write_off: DecimalString;
  status: number;
  redirect_info?: { data: Record<string, string>; method: string; url: string };
}

/** `data` of `withdraw/status` and `withdraw/shop_payment_status`. */
export interface PayoutRecord extends Open {
  id: number;
  status: number;
  ps_currency: number;
  shop_currency: number;
  payee_receive: DecimalString;
  shop_write_off: DecimalString;
  shop_payment_id: string;
  error_code: number;
  rrn: string;
  bank_transaction_id: string;
}
