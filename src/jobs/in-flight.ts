/**
 * Waiting for another request's gateway call (atomic phases, phase 2): a repeat of a create
 * whose first copy is still talking to the gateway looks again every `everyMs` until `look`
 * returns an answer or `boundMs` has passed (then undefined: the caller answers 409 "request in
 * progress"). Each look is one short query: no connection is held between looks.
 */
export async function waitForAnswer<T>(
  look: () => Promise<T | undefined>,
  boundMs: number,
  everyMs = 50,
): Promise<T | undefined> {
  const until = Date.now() + boundMs;
  for (;;) {
    const answer = await look();
    if (answer !== undefined) return answer;
    if (Date.now() >= until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(everyMs, until - Date.now() + 1)));
  }
}

/** Lease of a gateway call: the call's own time-out plus a margin for the writes around it. */
export function callLeaseSeconds(gatewayTimeoutMs: number): number {
  return Math.ceil(gatewayTimeoutMs / 1000) + 10;
}
