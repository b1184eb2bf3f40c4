/**
 * Scenarios and faults. A scenario is chosen by a suffix on the payway
 * (`card_rub[mock_server,success]`: base payway `card_rub`, tags `mock_server` and `success`);
 * a fault may also be queued for the next calls of a path through the control API.
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
  /** Completes at once without the payer (payout: status 5 in the create answer). */
  'success',
  /** Declined at once (payout: cancelled, status 8, funds returned). */
  'decline',
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
  /** Refunds of the invoice end FAILED. */
  'refund_failed',
  /** Payout stays at status 3 (sent) for ever. */
  'never_final',
  /** Payout rejected in the create answer (status 6), funds returned. */
  'reject',
] as const;
export type OutcomeScenario = (typeof OUTCOME_SCENARIOS)[number];

/**
 * Payways allow letters, underscore, comma and square brackets only, so the digits of `http500`
 * cannot travel in a payway: there it is spelled `server_error`.
 */
const TAG_FAULTS: Record<string, CallFault> = { server_error: 'http500' };

export interface PaywayChoice {
  /** The payway as sent, suffix included. */
  requested: string;
  /** The part before `[`. */
  base: string;
  fault?: CallFault;
  scenarios: ReadonlySet<OutcomeScenario>;
}

function isCallFault(tag: string): tag is CallFault {
  return (CALL_FAULTS as readonly string[]).includes(tag);
}

function isOutcome(tag: string): tag is OutcomeScenario {
  return (OUTCOME_SCENARIOS as readonly string[]).includes(tag);
}

/** Splits `card_rub[mock_server,success]`; unknown tags (such as `mock_server`) are ignored. */
export function parsePayway(requested: string): PaywayChoice {
  const open = requested.indexOf('[');
  const base = open < 0 ? requested : requested.slice(0, open);
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
  return { requested, base, fault, scenarios };
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
