import { Injectable } from '@nestjs/common';
import { AttentionService } from '../attention/attention.service';
import { SCOPES, type Actor } from '../common/actor';
import { isLockReason } from '../common/idempotency';
import { createValidationPipe } from '../common/validation';
import { PayoutsService } from '../payouts/payouts.service';
import type { PayoutApprovalView } from '../payouts/dto/payout-approval.view';
import { DomainError } from '../common/errors';
import { CreateRefundDto } from '../refunds/dto/create-refund.dto';
import { RefundsService, type CreateResult } from '../refunds/refunds.service';
import type { ObjectType } from './console.service';
import type { ConsoleSession } from './console-sessions';

/** The final statuses an operator may accept for each kind (shared/API.md's resolve route). */
export const FINAL_STATUSES: Record<ObjectType, string[]> = {
  invoice: ['succeeded', 'rejected', 'unheld'],
  refund: ['SUCCESS', 'FAILED'],
  payout: ['succeeded', 'failed', 'rejected'],
};

/**
 * What the attention queue offers for one item: only the actions that exist for its kind. An
 * invoice, refund or payout: recheck and accept (and charge/unhold for a held invoice); a
 * reconciliation's balance item: open the run, and post the adjustment that explains it.
 */
export interface AttentionActions {
  recheck: boolean;
  unlock: boolean;
  hold: boolean;
  accept: string[] | null;
  openRun: string | null;
  adjust: string | null;
}

export function attentionActions(item: {
  objectType: string;
  id: string;
  status: string;
  attentionReason?: string | null;
}): AttentionActions {
  if (item.objectType === 'reconciliation') {
    const run = `/admin/ui/reconciliations/${encodeURIComponent(item.id)}`;
    return {
      recheck: false,
      unlock: false,
      hold: false,
      accept: null,
      openRun: run,
      adjust: `/admin/ui/ledger?reconciliation=${encodeURIComponent(item.id)}#adjust`,
    };
  }
  const finals = (FINAL_STATUSES as Record<string, string[] | undefined>)[item.objectType];
  if (finals === undefined)
    return { recheck: false, unlock: false, hold: false, accept: null, openRun: null, adjust: null };
  return {
    recheck: true,
    unlock: isLockReason(item.attentionReason),
    hold: item.objectType === 'invoice' && item.status === 'held',
    accept: finals,
    openRun: null,
    adjust: null,
  };
}

export type ResolveCommand =
  | { action: 'recheck' }
  | { action: 'accept'; status: string; note: string }
  /** A held invoice: the real gateway call. */
  | { action: 'charge' }
  | { action: 'unhold' }
  /** An id locked by conflicting repeats of its create: lifted, with the operator's note. */
  | { action: 'unlock'; note: string };

/**
 * What the console's forms do, through the same services as the admin API routes, acting as the
 * signed-in operator (its key id is what the audit trail records).
 */
@Injectable()
export class ConsoleActions {
  constructor(
    private readonly attention: AttentionService,
    private readonly payouts: PayoutsService,
    private readonly refunds: RefundsService,
  ) {}

  /** The API's own validation of a body (the same pipe, the same 400 naming the field). */
  private readonly pipe = createValidationPipe();

  /**
   * A refund from the invoice's page: the admin API's create, after the API's own validation of
   * the body. The form's `shopRefundId` is made when the page is shown, so a form sent twice is
   * one refund (the repeat replays it). The operator's reason is kept in the refund's metadata.
   */
  async refund(
    shopOrderId: string,
    form: { shopRefundId: string; amount: string; reason: string },
    by: Actor,
  ): Promise<CreateResult> {
    const dto = (await this.pipe.transform(
      { shopRefundId: form.shopRefundId, amount: form.amount, metadata: { reason: form.reason } },
      { type: 'body', metatype: CreateRefundDto, data: '' },
    )) as CreateRefundDto;
    return this.refunds.create(shopOrderId, dto, 'admin', by);
  }

  /** The approvals queue: payouts awaiting approval, oldest first. */
  approvals(): ReturnType<PayoutsService['awaitingApproval']> {
    return this.payouts.awaitingApproval(500);
  }

  /**
   * The approval view of a payout (payee-check.ts): the check and the quote asked now when it
   * awaits approval, and what each decision was shown; null when its account cannot be opened.
   */
  async approvalOf(id: string): Promise<PayoutApprovalView | null> {
    try {
      return await this.payouts.approvalView(id);
    } catch (e) {
      if (e instanceof DomainError) return null;
      throw e;
    }
  }

  /** The same service methods as the admin routes: the rules (admin key, two distinct keys) hold here too. */
  decide(
    id: string,
    decision: { action: 'approve'; note?: string } | { action: 'reject'; reason: string },
    by: Actor,
  ): Promise<unknown> {
    return decision.action === 'approve'
      ? this.payouts.approve(id, by, decision.note)
      : this.payouts.rejectPayout(id, decision.reason, by);
  }

  /** The signed-in admin key a form acts as: the audit trail records its key id. */
  operator(session: ConsoleSession): Actor {
    return { keyId: session.keyId, role: 'admin', scopes: SCOPES };
  }

  /** The same guarded service method as the admin route: the console cannot bypass accept's guard. */
  resolve(type: ObjectType, id: string, command: ResolveCommand, by: Actor): Promise<unknown> {
    return this.attention.resolve(type, id, command, by);
  }

  queue(): ReturnType<AttentionService['list']> {
    return this.attention.list(500);
  }
}
