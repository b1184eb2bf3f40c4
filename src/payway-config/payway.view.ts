import { Amount, moneyText } from '../common/money';
import type { InputPayway, OutputPayway, PaywayGroup } from '../gateway/gateway.types';
import type { PaywayList } from './payway-config.service';
import { isActive } from './payway-validation';

/**
 * GET /payways as the shop sees it: the gateway's groups with camelCase, typed fields (like
 * every other answer), amounts as decimal strings. The gateway's own names are in
 * docs/gateway-interface.md (Payment way for payments / for payouts); fields it adds beyond
 * those are not passed on.
 */

export interface FeeConfigView {
  /** Percent of the amount (decimal string). */
  percent: string | null;
  /** Fixed part (decimal string). */
  fix: string | null;
}

export interface FeePartConfigView {
  percentPart: string | null;
  fixPart: string | null;
}

export interface AddOnFieldView {
  label: Record<string, string> | null;
  /** The gateway's `comment`: a hint per language. */
  hint: Record<string, string> | null;
  example: string | null;
  regex: string | null;
  prefix: string | null;
}

export interface AccountInfoFieldView {
  regex: string | null;
  title: string | null;
}

export interface PaymentPaywayView {
  id: number | null;
  alias: string;
  currency: number | null;
  minAmount: string | null;
  maxAmount: string | null;
  feeConfig: FeeConfigView;
  feePartConfig: FeePartConfigView;
  isActive: boolean;
  addOnsConfig: Record<string, AddOnFieldView>;
}

export interface PayoutPaywayView {
  alias: string;
  currency: number | null;
  minAmount: string | null;
  maxAmount: string | null;
  feeConfig: FeeConfigView;
  /** Detail name → what it must look like; the names go into the payout's accountDetails. */
  accountInfoConfig: Record<string, AccountInfoFieldView>;
  paysystemData: Record<string, unknown>;
}

export interface PaywayGroupView<P> {
  id: number | null;
  name: string | null;
  rating: number | null;
  payways: P[];
}

export type PaywayListView =
  | {
      direction: 'payment';
      fetchedAt: string;
      groups: PaywayGroupView<PaymentPaywayView>[];
    }
  | {
      direction: 'payout';
      fetchedAt: string;
      groups: PaywayGroupView<PayoutPaywayView>[];
    };

type Raw = Record<string, unknown>;

const objectOf = (v: unknown): Raw =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {};
const textOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const intOf = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
const textMapOf = (v: unknown): Record<string, string> | null => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  return Object.fromEntries(
    Object.entries(v as Raw).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
};

/**
 * Money as the gateway client parsed it: exact text (lossless JSON), written back as the same
 * digits ("10.0" stays "10.0", "1e-7" becomes "0.0000001"). Never read through a float: a
 * JSON number here did not come through the gateway client and is not shown.
 */
export function decimalOf(v: unknown): string | null {
  if (typeof v !== 'string' || v.trim() === '') return null;
  try {
    return Amount.fromText(v.trim()).toString();
  } catch {
    return null;
  }
}

/** An amount of the payway's currency, written as every amount is (its minor-unit digits). */
function moneyOf(v: unknown, currency: number | null): string | null {
  const d = decimalOf(v);
  return d === null ? null : moneyText(d, currency);
}

const feeOf = (v: unknown, currency: number | null): FeeConfigView => {
  const f = objectOf(v);
  return { percent: decimalOf(f.percent), fix: moneyOf(f.fix, currency) };
};

function paymentPaywayOf(p: InputPayway): PaymentPaywayView {
  const part = objectOf(p.fee_part_config);
  return {
    id: intOf(p.id),
    alias: p.alias,
    currency: intOf(p.currency),
    minAmount: moneyOf(p.min_amount, intOf(p.currency)),
    maxAmount: moneyOf(p.max_amount, intOf(p.currency)),
    feeConfig: feeOf(p.fee_config, intOf(p.currency)),
    // Shares of the fee the payer bears (fractions), not amounts: the gateway's digits.
    feePartConfig: { percentPart: decimalOf(part.percent_part), fixPart: decimalOf(part.fix_part) },
    isActive: isActive(p),
    addOnsConfig: Object.fromEntries(
      Object.entries(objectOf(p.add_ons_config)).map(([name, raw]) => {
        const f = objectOf(raw);
        return [
          name,
          {
            label: textMapOf(f.label),
            hint: textMapOf(f.comment),
            example: textOf(f.example),
            regex: textOf(f.regex),
            prefix: textOf(f.prefix),
          },
        ];
      }),
    ),
  };
}

function payoutPaywayOf(p: OutputPayway): PayoutPaywayView {
  return {
    alias: p.alias,
    currency: intOf(p.currency),
    minAmount: moneyOf(p.min_amount, intOf(p.currency)),
    maxAmount: moneyOf(p.max_amount, intOf(p.currency)),
    feeConfig: feeOf(p.fee_config, intOf(p.currency)),
    accountInfoConfig: Object.fromEntries(
      Object.entries(objectOf(p.account_info_config)).map(([name, raw]) => {
        const f = objectOf(raw);
        return [name, { regex: textOf(f.regex), title: textOf(f.title) }];
      }),
    ),
    paysystemData: objectOf(p.paysystem_data),
  };
}

function groupsOf<P, V>(groups: PaywayGroup<P>[], one: (p: P) => V): PaywayGroupView<V>[] {
  return groups.map((g) => ({
    id: intOf(g.id),
    name: textOf(g.name),
    rating: intOf(g.rating),
    payways: (Array.isArray(g.payways) ? g.payways : [])
      .filter((p) => typeof objectOf(p).alias === 'string')
      .map(one),
  }));
}

/** The service's list (groups as the gateway sent them) as the shop sees it. */
export function toPaywayListView(list: PaywayList): PaywayListView {
  return list.direction === 'payment'
    ? {
        direction: 'payment',
        fetchedAt: list.fetchedAt,
        groups: groupsOf(list.groups as PaywayGroup<InputPayway>[], paymentPaywayOf),
      }
    : {
        direction: 'payout',
        fetchedAt: list.fetchedAt,
        groups: groupsOf(list.groups as PaywayGroup<OutputPayway>[], payoutPaywayOf),
      };
}
