import { Inject, Injectable } from '@nestjs/common';
import { transactionFor, type By } from '../common/actor';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Coalescer } from '../common/coalesce';
import { KeyRing } from '../common/key-ring';
import { logger } from '../common/logger';
import { Amount } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { GatewayService } from '../gateway';
import { PayoutEntity, type AmountType } from './payout.entity';
import { CapExceeded, InsufficientBalance, unquotedFailure, type CapName } from './payout.errors';
import {
  CAP_SHARE_SQL,
  capDayLockKey,
  capShare,
  controlWriteOff,
  COUNTS_ON_TODAY_SQL,
  IN_FLIGHT_SQL,
} from './payout.rules';
import { clock } from '../common/clock';

/**
 * Daily caps that hold under concurrency, and the agent shop's balance checked before a payout is
 * sent: at a create that sends at once, and at the approval that sends one. Pure figures first
 * (table-driven specs in payout-controls.spec.ts), then the injectable that runs them. Which day
 * a payout counts on and what is in flight are the rules of payout.rules.ts.
 *
 * One figure for every control (payout.rules.ts `controlWriteOff`): what leaves the shop's
 * balance, in the shop currency. `amount` for a `shop_amount` payout (it is the write-off); for a
 * `ps_amount` payout the write-off withdraw/try quotes, asked whenever the amount type does not
 * fix it and any control of its currency weighs it (approval thresholds, caps, balance check),
 * never the amount in its place: without a quote such a create is refused (unquotedFailure). A
 * payout counts on the UTC day it is sent unless it ended `rejected`, `failed` or `cancelled`
 * (those free their share); a payout waiting for approval holds no share (payout.rules.ts
 * `holdsShare`).
 */

/** Separates the recipient's blind index from any other HMAC made with the key ring. */
export const RECIPIENT_INDEX = 'payout-recipient';

/**
 * One recipient, however it is spelled: Unicode compatibility forms folded (full-width digits),
 * case folded, and spaces, invisible format characters, dashes, brackets and a leading `+`
 * dropped ("4111 1111-1111 1111", "+7 (999) 123-45-67" and "７９９９１２３４５６７" match their
 * plain forms). Dots and other characters stay: they can tell two e-mail wallets apart.
 */
export function normalizedAccount(account: string): string {
  return account
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{Cf}\-\u2010-\u2015\u2212()]/gu, '')
    .replace(/^\+/, '');
}

export { capShare };

/** withdraw/try's figures for one payout. */
export interface WriteOffQuote {
  shopWriteOff: Amount;
  psCurrency: number;
  payeeReceive: Amount;
}

/** Null when `wanted` fits under `limit` after `used`; else what is left (never negative). */
export function capRemaining(limit: Amount, used: Amount, wanted: Amount): Amount | null {
  if (used.plus(wanted).lte(limit)) return null;
  const left = limit.minus(used);
  return left.isNegative() ? Amount.zero(limit.scale) : left.withScale(limit.scale);
}

/** True when the available balance, less what is in flight, covers the write-off. */
export function balanceCovers(available: Amount, inFlight: Amount, needed: Amount): boolean {
  return available.minus(inFlight).gte(needed);
}

/** A balance figure and when its read began (the cut between seen and not yet seen payouts). */
export interface BalanceRead {
  startedAt: Date;
  /** Available balance per currency; a currency the gateway does not list has none. */
  available: ReadonlyMap<number, Amount>;
  /** False for a read made for this very check (bypassing the cache). */
  cached: boolean;
}

/** What create learned before its transaction: the write-off and the balance figure to hold it against. */
export interface Admission {
  shopId: number;
  currency: number;
  /** What this payout counts toward the caps. */
  share: Amount;
  /** Blind indexes of the recipient under every ring key; the first (the ring's first key) is stored. */
  recipientIndexes: string[];
  /** Null when the balance check is off, or its figures could not be had (the gateway judges). */
  balance: { writeOff: Amount; read: BalanceRead } | null;
}

/** The check failed on a cached figure: read again (outside the transaction) and retry once. */
export class StaleBalance extends Error {}

@Injectable()
export class PayoutControls {
  private readonly log = logger.child({ component: 'payout-controls' });
  private cache: BalanceRead | null = null;
  private readonly reads = new Coalescer<BalanceRead>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly gateway: GatewayService,
    private readonly keys: KeyRing,
  ) {}

  private get balanceOn(): boolean {
    return this.config.payoutControls.balanceCacheS > 0;
  }

  /** The recipient's blind index under the ring's first key (stored as `account_index`). */
  recipientIndex(account: string): string {
    return this.keys.blindIndex(normalizedAccount(account), RECIPIENT_INDEX);
  }

  /**
   * Whether any control of `currency` weighs a payout's write-off: an approval threshold (single
   * or dual), a daily cap, or (unless `balance` is false: a dry run does not preview it) the
   * balance check.
   */
  weighsWriteOff(currency: number, balance = true): boolean {
    const { dailyCap, recipientDailyCap } = this.config.payoutControls;
    const { single, dual } = this.config.payoutApproval;
    return (
      (balance && this.balanceOn) ||
      dailyCap.has(currency) ||
      recipientDailyCap.has(currency) ||
      single.has(currency) ||
      dual.has(currency)
    );
  }

  /**
   * The one figure the controls weigh a payout by (payout.rules.ts `controlWriteOff`): the amount
   * of a `shop_amount`; for a `ps_amount`, `known` (priced by withdraw/try before, or recorded on
   * the row), else withdraw/try asked now whenever a control of its currency weighs it (an
   * approval threshold or a cap as much as the balance check). When it cannot be quoted, the
   * payout is refused (503 `write-off-unquoted`, retryable, or the gateway's fatal refusal):
   * never the amount in its place. When no control weighs it, nothing is asked and the amount
   * stands in (nothing is judged on it; the create answer records the write-off).
   */
  async writeOffOf(
    p: {
      shopPaymentId: string;
      amount: Amount;
      amountType: AmountType;
      shopCurrency: number;
      payway: string;
    },
    known: WriteOffQuote | null,
  ): Promise<{ writeOff: Amount; quoted: WriteOffQuote | null }> {
    const fixed = controlWriteOff({ ...p, shopWriteOff: known?.shopWriteOff ?? null });
    if (fixed !== null) return { writeOff: fixed, quoted: known };
    // Nothing is judged on it: no call (the create answer records the write-off).
    if (!this.weighsWriteOff(p.shopCurrency)) return { writeOff: p.amount, quoted: null };
    const quote = await this.quote(p);
    if (!quote.ok) throw unquotedFailure(p.shopPaymentId, quote.err);
    return { writeOff: quote.value.shopWriteOff, quoted: quote.value };
  }

  /**
   * Before create's transaction, with nothing held: the write-off (writeOffOf; `priced` from
   * withdraw/try for another currency) and the balance figure (cached up to BALANCE_CACHE_S). A
   * failed balance read leaves the check to the gateway, which refuses a payout the balance
   * cannot cover anyway. A repeat (its row exists) is answered from its row: nothing is asked.
   */
  async prepare(
    shopId: number,
    p: {
      shopPaymentId: string;
      amount: Amount;
      amountType: AmountType;
      shopCurrency: number;
      payway: string;
      account: string;
    },
    priced: WriteOffQuote | null,
  ): Promise<{ admission: Admission; writeOff: Amount; quoted: WriteOffQuote | null }> {
    const recipientIndexes = this.keys.blindIndexes(normalizedAccount(p.account), RECIPIENT_INDEX);
    const fresh = priced !== null || !(await this.exists(shopId, p.shopPaymentId));
    const { writeOff, quoted } = fresh
      ? await this.writeOffOf(p, priced)
      : { writeOff: capShare({ ...p, shopWriteOff: null }), quoted: null };
    let balance: Admission['balance'] = null;
    if (this.balanceOn && fresh) {
      const read = await this.readBalance(false);
      if (read !== null) balance = { writeOff, read };
    }
    return {
      admission: { shopId, currency: p.shopCurrency, share: writeOff, recipientIndexes, balance },
      writeOff,
      quoted,
    };
  }

  /**
   * The row's insert, admitted: in one short transaction, a transaction-scoped advisory lock per
   * (shop, currency, UTC day) and, with a recipient cap, per recipient too; the day's sums; the
   * balance less what is in flight; then `insert`. Concurrent creates queue on the lock, so each
   * sees the rows of those before it: exactly as many as fit get in. A repeat of an existing id
   * is never counted again (`insert` finds it). A balance that fails on a cached figure is read
   * again once, outside the transaction, before the create is refused.
   */
  async admit<T>(
    a: Admission,
    shopPaymentId: string,
    by: By,
    insert: (m: EntityManager | null) => Promise<T>,
  ): Promise<T> {
    if (!this.applies(a)) return insert(null);
    return this.retryStale(a, (adm) =>
      transactionFor(this.dataSource, by, async (m) => {
        const repeat = (await m.query(
          `SELECT 1 FROM payouts WHERE shop_id = $1 AND shop_payment_id = $2`,
          [adm.shopId, shopPaymentId],
        )) as unknown[];
        // A repeat of an existing id is never counted again (`insert` finds it).
        if (repeat.length === 0) await this.holdSend(m, adm, '');
        return insert(m);
      }),
    );
  }

  /** Whether any cap or the balance check applies to this admission. */
  applies(a: Admission): boolean {
    const { dailyCap, recipientDailyCap } = this.config.payoutControls;
    return dailyCap.has(a.currency) || recipientDailyCap.has(a.currency) || a.balance !== null;
  }

  /**
   * Runs `attempt` (a transaction that calls holdSend); a balance that fails on a cached figure
   * is read again once, outside the transaction, and the transaction run again with it.
   */
  async retryStale<T>(a: Admission, attempt: (a: Admission) => Promise<T>): Promise<T> {
    try {
      return await attempt(a);
    } catch (err) {
      if (!(err instanceof StaleBalance) || a.balance === null) throw err;
      const fresh = await this.readBalance(true);
      return attempt({ ...a, balance: fresh === null ? null : { ...a.balance, read: fresh } });
    }
  }

  /**
   * The send of one payout, admitted inside the caller's transaction `m` (a create's insert, or
   * the approval that sends it): an advisory lock per (shop, currency, UTC day the send counts
   * on) and, with a recipient cap, per recipient too; the day's sums; the balance less what is
   * in flight (`excludeId`: the payout itself when it is stored already). Concurrent sends queue
   * on the lock, so each sees those before it: exactly as many as fit get in. Throws
   * CapExceeded, InsufficientBalance, or StaleBalance (see retryStale).
   */
  async holdSend(m: EntityManager, a: Admission, excludeId: string): Promise<void> {
    const { dailyCap, recipientDailyCap } = this.config.payoutControls;
    const daily = dailyCap.get(a.currency);
    const perRecipient = recipientDailyCap.get(a.currency);
    if (daily !== undefined || perRecipient !== undefined || a.balance !== null)
      await m.query(`SELECT pg_advisory_xact_lock(hashtext(${capDayLockKey(false)}))`, [
        a.shopId,
        a.currency,
      ]);
    if (perRecipient !== undefined)
      await m.query(`SELECT pg_advisory_xact_lock(hashtext(${capDayLockKey(true)}))`, [
        a.shopId,
        a.currency,
        a.recipientIndexes[0],
      ]);
    if (daily !== undefined || perRecipient !== undefined)
      await this.holdCaps(m, a, daily, perRecipient);
    if (a.balance !== null) await this.holdBalance(m, a.currency, a.balance, excludeId);
  }

  /**
   * The day's sums so far (rule "which day a payout counts on"): all of the shop's payouts in
   * `currency`, and those of one recipient (any of its blind indexes). The one query the
   * admission and the dry run's preview both read.
   */
  private async usedToday(
    m: EntityManager | DataSource,
    shopId: number,
    currency: number,
    recipientIndexes: readonly string[],
  ): Promise<Record<CapName, Amount>> {
    const rows = (await m.query(
      `SELECT COALESCE(SUM(${CAP_SHARE_SQL}), 0)::text AS day,
              COALESCE(SUM(${CAP_SHARE_SQL}) FILTER (WHERE account_index = ANY($3)), 0)::text AS recipient
         FROM payouts
        WHERE shop_id = $1 AND shop_currency = $2 AND ${COUNTS_ON_TODAY_SQL}`,
      [shopId, currency, recipientIndexes],
    )) as Array<{ day: string; recipient: string }>;
    return {
      daily: Amount.fromText(rows[0].day),
      'recipient-daily': Amount.fromText(rows[0].recipient),
    };
  }

  /**
   * A dry run's view of the caps: what each of `rows` would count, in order, against
   * today's sums as they stand (the batch's earlier rows included), without a lock or a write.
   * Null for a row that fits; otherwise the cap it would pass and what would be left.
   */
  async previewCaps(
    shopId: number,
    rows: Array<{ amount: Amount; amountType: AmountType; shopCurrency: number; account: string }>,
  ): Promise<Array<{ cap: CapName; remaining: Amount } | null>> {
    const { dailyCap, recipientDailyCap } = this.config.payoutControls;
    const used = new Map<string, Amount>();
    const usedOf = async (currency: number, recipient: string | null): Promise<Amount> => {
      const key = `${currency}:${recipient ?? ''}`;
      const known = used.get(key);
      if (known !== undefined) return known;
      const sums = await this.usedToday(
        this.dataSource,
        shopId,
        currency,
        recipient === null
          ? []
          : this.keys.blindIndexes(normalizedAccount(recipient), RECIPIENT_INDEX),
      );
      const sum = recipient === null ? sums.daily : sums['recipient-daily'];
      used.set(key, sum);
      return sum;
    };
    const out: Array<{ cap: CapName; remaining: Amount } | null> = [];
    for (const r of rows) {
      const share = capShare({ ...r, shopWriteOff: null });
      let verdict: { cap: CapName; remaining: Amount } | null = null;
      for (const [cap, limit, recipient] of [
        ['daily', dailyCap.get(r.shopCurrency), null],
        ['recipient-daily', recipientDailyCap.get(r.shopCurrency), r.account],
      ] as const) {
        if (limit === undefined || verdict !== null) continue;
        const left = capRemaining(limit, await usedOf(r.shopCurrency, recipient), share);
        if (left !== null) verdict = { cap, remaining: left };
      }
      if (verdict === null) {
        // Admitted in the preview: later rows count it.
        for (const recipient of [null, r.account]) {
          const key = `${r.shopCurrency}:${recipient ?? ''}`;
          used.set(key, (await usedOf(r.shopCurrency, recipient)).plus(share));
        }
      }
      out.push(verdict);
    }
    return out;
  }

  private async holdCaps(
    m: EntityManager,
    a: Admission,
    daily: Amount | undefined,
    perRecipient: Amount | undefined,
  ): Promise<void> {
    const used = await this.usedToday(m, a.shopId, a.currency, a.recipientIndexes);
    for (const [cap, limit] of [
      ['daily', daily],
      ['recipient-daily', perRecipient],
    ] as const) {
      if (limit === undefined) continue;
      const remaining = capRemaining(limit, used[cap], a.share);
      if (remaining !== null)
        throw new CapExceeded(cap, a.currency, {
          limit,
          used: used[cap].withScale(limit.scale),
          remaining,
          requested: a.share,
        });
    }
  }

  /** Throws StaleBalance on a cached figure that does not cover, InsufficientBalance on a fresh one. */
  private async holdBalance(
    m: EntityManager | DataSource,
    currency: number,
    b: NonNullable<Admission['balance']>,
    excludeId: string,
  ): Promise<void> {
    const rows = (await m.query(IN_FLIGHT_SQL, [
      this.gateway.shopId('payout'),
      currency,
      excludeId === '' ? '00000000-0000-0000-0000-000000000000' : excludeId,
      b.read.startedAt,
    ])) as Array<{ sum: string }>;
    const inFlight = Amount.fromText(rows[0].sum).withScale(b.writeOff.scale);
    const available = b.read.available.get(currency) ?? Amount.zero(b.writeOff.scale);
    if (balanceCovers(available, inFlight, b.writeOff)) return;
    if (b.read.cached) throw new StaleBalance();
    throw new InsufficientBalance(currency, { available, inFlight, needed: b.writeOff });
  }

  /**
   * Before the approval that sends a stored payout, with nothing held: its write-off (writeOffOf:
   * the one quoted at its create, else withdraw/try now), the recipient's blind indexes and the
   * balance figure to hold it against (as prepare does for a create). The approval's
   * transaction then admits it with holdSend.
   */
  async prepareSend(p: PayoutEntity, account: string): Promise<Admission> {
    const known =
      p.shopWriteOff === null
        ? null
        : {
            shopWriteOff: p.shopWriteOff,
            psCurrency: p.psCurrency ?? p.shopCurrency,
            payeeReceive: p.payeeReceive ?? p.amount,
          };
    const { writeOff } = await this.writeOffOf(p, known);
    let balance: Admission['balance'] = null;
    if (this.balanceOn) {
      const read = await this.readBalance(false);
      if (read !== null) balance = { writeOff, read };
    }
    return {
      shopId: p.shopId,
      currency: p.shopCurrency,
      share: writeOff,
      recipientIndexes: this.keys.blindIndexes(normalizedAccount(account), RECIPIENT_INDEX),
      balance,
    };
  }

  private exists(shopId: number, shopPaymentId: string): Promise<boolean> {
    return this.dataSource.getRepository(PayoutEntity).existsBy({ shopId, shopPaymentId });
  }

  /** withdraw/try for the write-off, or why it could not be had. */
  private async quote(p: {
    amount: Amount;
    amountType: AmountType;
    shopCurrency: number;
    payway: string;
  }): Promise<{ ok: true; value: WriteOffQuote } | { ok: false; err: unknown }> {
    try {
      const r = await this.gateway.tryWithdraw({
        amount: p.amount.toString(),
        amount_type: p.amountType,
        payway: p.payway,
        shop_currency: p.shopCurrency,
      });
      return {
        ok: true,
        value: {
          shopWriteOff: Amount.fromText(String(r.shop_write_off)),
          psCurrency: Number(r.ps_currency),
          payeeReceive: Amount.fromText(String(r.payee_receive)),
        },
      };
    } catch (err) {
      this.log.warn({ err: String(err) }, 'withdraw/try for the write-off failed');
      return { ok: false, err };
    }
  }

  /** The agent shop's balance: the cached figure while younger than BALANCE_CACHE_S, unless `fresh`. */
  private async readBalance(fresh: boolean): Promise<BalanceRead | null> {
    const maxAgeMs = this.config.payoutControls.balanceCacheS * 1000;
    const c = this.cache;
    if (!fresh && c !== null && clock.now() - c.startedAt.getTime() < maxAgeMs)
      return { ...c, cached: true };
    try {
      const read = await this.reads.run(fresh ? 'fresh' : 'any', async () => {
        const startedAt = clock.date();
        const b = await this.gateway.shopBalance();
        const available = new Map<number, Amount>();
        for (const line of b.balances)
          available.set(Number(line.currency), Amount.fromText(String(line.available)));
        const r: BalanceRead = { startedAt, available, cached: false };
        if (this.cache === null || this.cache.startedAt < startedAt) this.cache = r;
        return r;
      });
      return read;
    } catch (err) {
      this.log.warn({ err: String(err) }, 'shop_balance for the balance check failed; not checked');
      return null;
    }
  }
}
