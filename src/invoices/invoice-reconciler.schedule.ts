/** Longest wait between two checks of one invoice. */
export const MAX_BACKOFF_S = 3600;

export interface NextCheck {
  nextCheckAt: Date | null;
  needsAttention: boolean;
}

/**
 * When to check an open invoice again (pure): grace × 2^(attempts+1), capped at an hour and at
 * the deadline (one last look there); once the deadline has passed, no more checks and the
 * invoice goes to an operator.
 */
export function nextInvoiceCheck(p: {
  now: Date;
  attempts: number;
  deadline: Date | null;
  graceS: number;
}): NextCheck {
  if (p.deadline !== null && p.now.getTime() >= p.deadline.getTime())
    return { nextCheckAt: null, needsAttention: true };
  const waitS = Math.min(p.graceS * 2 ** Math.min(p.attempts + 1, 30), MAX_BACKOFF_S);
  let at = p.now.getTime() + waitS * 1000;
  if (p.deadline !== null) at = Math.min(at, p.deadline.getTime());
  return { nextCheckAt: new Date(at), needsAttention: false };
}
