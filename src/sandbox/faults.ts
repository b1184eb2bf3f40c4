/**
 * Scenarios and faults. As on the real test server, a scenario is part of the listed payway's
 * alias (`card_core_payin_rub[mock_server,success_with_callback]`): the real scenario names sit
 * after `mock_server`; the sandbox's own extra scenarios sit after `sandbox`
 * (`card_core_payin_rub[sandbox,timeout_done]`), so they can never collide with a real one. A
 * fault may also be queued for the next calls of a path through the control API.
 */

/** Faults of one gateway call: what happens to the operation and to its answer. */
export const CALL_FAULTS = [
  /** Done, but the answer comes after `delayMs` (past the client's time-out). */
  'timeout_done',
  /** Not done; after `delayMs` a 504 page. */
  'timeout_not_done',
  /** Not done; an HTML 500 page. */
  'http500',
  /** Not done; the connection is destroyed without an answer. */
  'reset',
  /** Done; the connection is destroyed without an answer. */
  'reset_done',
  /** Done (an invoice completes later and notifies); answer `result: false`, code 100. */
  'nonfatal',
  /** Not done; answer `result: false`, a fatal code 10. */
  'fatal',
] as const;
export type CallFault = (typeof CALL_FAULTS)[number];

/** Outcome scenarios remembered on the invoice or payout created with them. */
export const OUTCOME_SCENARIOS = [
  // The test server's own names.
  /** Payment: paid at once, without the payer, no notification. Payout: sent (3), then success (5). */
  'success',
  /** Payment: the payer is sent to the payer page (card: a checkout URL); the outcome is notified. */
  'success_with_callback',
  /** Payment: rejected at once, no notification. */
  'rejected',
  /** Payment: rejected at once, the rejection notified. */
  'rejected_with_callback',
  /** Payment: the creation is refused (code 10); the invoice is rejected and that is notified. */
  'create_declined_with_callback',
  /** Payout: sent (3), then rejected (6), funds returned. */
  'fail',
  /** Payout: check_account finds no such wallet; withdraw/create is refused (code 10). */
  'wallet_does_not_exist',
  /** Payout: withdraw/create is refused (code 10). */
  'payment_forbidden',
  // The sandbox's extras.
  /** Never completes by itself (payout: stays at status 1). */
  'pending',
  /** Each notification is delivered twice. */
  'dup_notify',
  /**
   * Notifications that are not final are held back and delivered after the final one (hold,
   * then charge: `success` arrives first, then `hold`). A lone final notification goes as usual.
   */
  'out_of_order',
  /** No notifications. */
  'notify_none',
  /** Paid at once without the payer; refunds of the invoice end FAILED. */
  'refund_failed',
  /** The payer is sent by a POST form (data as form fields) instead of the checkout URL. */
  'post_redirect',
  /** Payout stays at status 3 (sent) for ever. */
  'never_final',
  /**
   * Payout sent (3), then final between 2 hours and 2 days of sandbox time after its creation
   * (as bank and card payouts often are): success, or cancelled (8) for one in four.
   */
  'slow_final',
  /** Payout rejected in the create answer (status 6), funds returned. */
  'reject',
  /** Payout cancelled (status 8) after being sent, funds returned. */
  'decline',
] as const;
export type OutcomeScenario = (typeof OUTCOME_SCENARIOS)[number];

/** Real scenario names that are call faults in the sandbox's terms. */
const TAG_FAULTS: Record<string, CallFault> = {
  internal_server_error: 'http500',
  timeout_error: 'timeout_not_done',
};

export interface PaywayChoice {
  /** The payway as sent, suffix included. */
  requested: string;
  fault?: CallFault;
  scenarios: ReadonlySet<OutcomeScenario>;
}

function isCallFault(tag: string): tag is CallFault {
  return (CALL_FAULTS as readonly string[]).includes(tag);
}

function isOutcome(tag: string): tag is OutcomeScenario {
  return (OUTCOME_SCENARIOS as readonly string[]).includes(tag);
}

/** The scenario tags of a listed alias; unknown tags (`mock_server`, `sandbox`) are ignored. */
export function parsePayway(requested: string): PaywayChoice {
  const open = requested.indexOf('[');
  const tags =
    open < 0
      ? []
      : requested
          .slice(open + 1)
          .replace(/]$/, '')
          .split(',');
  let fault: CallFault | undefined;
  const scenarios = new Set<OutcomeScenario>();
  for (const raw of tags) {
    const tag = raw.trim();
    const asFault = TAG_FAULTS[tag] ?? (isCallFault(tag) ? tag : undefined);
    if (asFault !== undefined) fault ??= asFault;
    else if (isOutcome(tag)) scenarios.add(tag);
  }
  return { requested, fault, scenarios };
}

export interface QueuedFault {
  path: string;
  fault: CallFault;
  /** Calls of the path still to be hit. */
  remaining: number;
  /** Delay for the time-out faults; the settings' delay when absent. */
  delayMs?: number;
}

/** Faults queued for the next calls of a path, first come first served. */
export class FaultQueue {
  private queue: QueuedFault[] = [];

  add(fault: QueuedFault): void {
    this.queue.push({ ...fault });
  }

  /** The fault for this call of `path`, if one is queued; counts it down. */
  take(path: string): QueuedFault | undefined {
    const entry = this.queue.find((q) => q.path === path);
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.queue = this.queue.filter((q) => q !== entry);
    return { ...entry };
  }

  list(): QueuedFault[] {
    return this.queue.map((q) => ({ ...q }));
  }

  clear(): void {
    this.queue = [];
  }
}

export function isFaultName(name: unknown): name is CallFault {
  return typeof name === 'string' && isCallFault(name);
}
