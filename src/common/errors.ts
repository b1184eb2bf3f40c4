/**
 * Domain errors: plain classes with a stable code and an HTTP status, thrown by services and
 * mapped to problem+json by the one exception filter (problem.filter.ts). Never HttpException.
 */
export interface FieldError {
  field: string;
  message: string;
}

/** Sent with every answer a repeated create gets from the first one (shared/API.md, Idempotency). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

export class DomainError extends Error {
  constructor(
    /** Stable machine-readable code, also the last part of the problem `type`. */
    readonly code: string,
    readonly status: number,
    readonly title: string,
    detail: string,
    /** Extra members of the problem body (e.g. `currentStatus`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }

  /** A stored answer given again to a repeated create: sent with `Idempotent-Replayed: true`. */
  replayed = false;
}

/** Field errors in one answer; past it, one entry says how many more there were. */
export const MAX_FIELD_ERRORS = 20;

/** At most MAX_FIELD_ERRORS errors, then `{field: 'body', message: 'and N more'}`. */
export function capFieldErrors(errors: readonly FieldError[]): FieldError[] {
  if (errors.length <= MAX_FIELD_ERRORS) return [...errors];
  return [
    ...errors.slice(0, MAX_FIELD_ERRORS),
    { field: 'body', message: `and ${errors.length - MAX_FIELD_ERRORS} more` },
  ];
}

/**
 * A request that breaks field rules (`extra`: more members of the problem body, such as the
 * `gatewayErrorCode` of a price the gateway refused). The answer is capped (capFieldErrors) so that it never
 * grows with what a caller can pack into a body.
 */
export class ValidationFailed extends DomainError {
  readonly errors: FieldError[];
  /** Every error, before the cap (for a caller that adds errors of its own); never sent. */
  readonly uncapped: readonly FieldError[];

  constructor(errors: FieldError[], extra: Record<string, unknown> = {}) {
    const capped = capFieldErrors(errors);
    super(
      'validation-failed',
      400,
      'Request validation failed',
      capped.map((e) => `${e.field}: ${e.message}`).join('; '),
      { ...extra, errors: capped },
    );
    this.errors = capped;
    this.uncapped = errors;
  }
}

export class NotFound extends DomainError {
  constructor(what: string, id: string) {
    super('not-found', 404, 'Not found', `${what} ${id} does not exist`);
  }
}

/** What a conflict says of each non-secret field that differs from the first request. */
export const DIFFERS = 'differs from the first request';

/**
 * The same idempotency key with a different request body: `errors` names the fields that
 * differ (amounts compared by value); secret fields only ever as one group entry, whatever
 * they hold (see src/common/idempotency.ts).
 */
export class IdempotencyConflict extends DomainError {
  constructor(key: string, id: string, errors: FieldError[] = []) {
    const named = errors.map((e) => e.field).join(', ');
    super(
      'idempotency-conflict',
      409,
      'Idempotency key reused',
      `${key} ${id} was already used with a different request body` + (named ? ` (${named})` : ''),
      { errors },
    );
  }
}

/**
 * IDEMPOTENCY_CONFLICT_LIMIT conflicting repeats of one id were made: every later repeat of it,
 * whatever its body, is refused, and the object waits for an operator.
 */
export class IdempotencyLocked extends DomainError {
  constructor(key: string, id: string, limit: number, object?: string) {
    // How the lock is lifted: an operator resolves the flag (a batch has no flag: no route lifts it).
    const how =
      object === 'invoice' || object === 'refund' || object === 'payout'
        ? `; an operator lifts the lock by resolving the flag: POST /api/v1/admin/${object}s/${encodeURIComponent(id)}/resolve {"action": "unlock", "note": "…"}, or Unlock in the console's attention queue`
        : '';
    super(
      'idempotency-locked',
      409,
      'Idempotency key locked',
      `${key} ${id} was repeated with a different body ${limit} times; every repeat of it is refused now and an operator has been told${how}`,
    );
  }
}

/** An unlock of an id that is not locked (nor flagged for its conflicting repeats). */
export class NotLocked extends DomainError {
  constructor(what: string, id: string) {
    super(
      'not-locked',
      409,
      'Not locked',
      `${what} ${id} is not locked: its create id takes repeats as usual`,
    );
  }
}

/** A body that is not JSON on a JSON route (curl's `-d` sends a form by default). */
export class UnsupportedMediaType extends DomainError {
  constructor(given: string | undefined) {
    super(
      'unsupported-media-type',
      415,
      'Unsupported Media Type',
      `The request body must be JSON, sent with Content-Type: application/json (got ${given ? given.slice(0, 100) : 'no Content-Type'})`,
      { errors: [{ field: 'Content-Type', message: 'must be application/json' }] },
    );
  }
}

/**
 * An identical create is still waiting for the gateway's answer (atomic phases): the shop
 * repeats after `retryAfterS` and gets the answer then. Sent with a `Retry-After` header.
 */
export class RequestInProgress extends DomainError {
  constructor(
    key: string,
    id: string,
    readonly retryAfterS: number,
    detail = 'an identical request is still waiting for the gateway; repeat it later',
  ) {
    super('request-in-progress', 409, 'Request in progress', `${key} ${id}: ${detail}`);
  }
}

/** An operator's accept on an object that is not flagged: accept settles attention only. */
export class NotFlagged extends DomainError {
  constructor(what: string, id: string) {
    super(
      'not-flagged',
      409,
      'Not flagged for attention',
      `${what} ${id} is not flagged for attention: accept settles flagged objects only`,
    );
  }
}

/**
 * An operator's accept that the gateway's fresh answer contradicts (another final status, or
 * not final yet): nothing is changed; the gateway's answer is named.
 */
/**
 * An operator's correction without the gateway's word for it: nothing changed (the object stays
 * as it is, in the books as it is, watched).
 */
export class GatewayEvidenceRequired extends DomainError {
  constructor(what: string, id: string, chosen: string, gatewaySays: string, missing: string) {
    super(
      'gateway-evidence-required',
      409,
      "The gateway's word is needed",
      `${what} ${id}: ${chosen} is not accepted without ${missing}; nothing was changed`,
      { gatewayAnswer: gatewaySays, missing },
    );
  }
}

/** An operation that the object's current status does not allow. */
export class InvalidState extends DomainError {
  constructor(what: string, id: string, currentStatus: string, action: string) {
    super(
      'invalid-state',
      409,
      'Operation not allowed in the current status',
      `${what} ${id} is ${currentStatus}: cannot ${action}`,
      {
        currentStatus,
      },
    );
  }
}

/**
 * An invoice names a recurrent token (`paymentToken`, or `paymentTokenFrom` its issuing invoice)
 * that was revoked (`DELETE /payment-tokens/{id}`, the customer withdrew consent): nothing is
 * sent to the gateway and no invoice is written.
 */
export class TokenRevoked extends DomainError {
  constructor(field: string) {
    const message = 'names a payment token that was revoked';
    super('token-revoked', 409, 'Payment token revoked', `${field}: ${message}`, {
      errors: [{ field, message }],
    });
  }
}

/**
 * A secret the service keeps sealed at rest (a recurrent token, a payout account) cannot be
 * opened: the stored value was altered or moved to another row, or its key is no longer in
 * DATA_ENCRYPTION_KEYS. Nothing is sent with a value that does not open.
 */
export class SealedValueUnreadable extends DomainError {
  constructor(field: string, what: string) {
    const message = `the ${what} stored for it cannot be opened (altered, moved to another row, or its key is not in DATA_ENCRYPTION_KEYS)`;
    super(
      'sealed-value-unreadable',
      409,
      'Stored secret cannot be opened',
      `${field}: ${message}`,
      {
        errors: [{ field, message }],
      },
    );
  }
}

/** The gateway refused or could not be reached; `fatal` is null when it is not known. */
export class GatewayFailure extends DomainError {
  constructor(
    detail: string,
    gatewayErrorCode: number | null,
    gatewayMessage: string | null,
    fatal: boolean | null,
    status = 502,
  ) {
    super('gateway-error', status, 'Payment gateway error', detail, {
      gatewayErrorCode,
      gatewayMessage,
      fatal,
    });
  }
}
