import { Injectable } from '@nestjs/common';
import { Amount, moneyText } from '../common/money';
import { GatewayService } from '../gateway';
import type { ShopBalance } from '../gateway/gateway.types';
import { gatewayFailure } from '../payouts/payout.errors';

export interface BalanceLine {
  currency: number;
  available: string;
  hold: string;
  frozen: string;
  total: string;
}

export interface BalanceView {
  shopId: number;
  balances: BalanceLine[];
}

/** shop_balance, with total = available + hold + frozen computed exactly. */
export function toBalanceView(b: ShopBalance, shopId: number): BalanceView {
  return {
    shopId,
    balances: b.balances.map((line) => {
      const available = Amount.fromText(String(line.available));
      const hold = Amount.fromText(String(line.hold));
      const frozen = Amount.fromText(String(line.frozen));
      return {
        currency: line.currency,
        available: moneyText(available, line.currency),
        hold: moneyText(hold, line.currency),
        frozen: moneyText(frozen, line.currency),
        total: moneyText(available.plus(hold).plus(frozen), line.currency),
      };
    }),
  };
}

@Injectable()
export class BalanceService {
  constructor(private readonly gateway: GatewayService) {}

  /** The agent shop's balance: the gateway keeps balances only for agent shops. */
  async get(): Promise<BalanceView> {
    try {
      return toBalanceView(await this.gateway.shopBalance(), this.gateway.shopId('payout'));
    } catch (err) {
      throw gatewayFailure('shop_balance', err);
    }
  }
}
