import { createHmac } from 'node:crypto';
import type { KeyRing } from '../common/key-ring';
import { Amount } from '../common/money';
import { deriveKey } from '../common/sealed';
import type { CreatePayoutDto } from './dto/payout-requests.dto';

/** Separates the request fingerprint from any other HMAC made with the ring. */
export const PAYOUT_REQUEST_INDEX = 'payout-request';

/**
 * What a payout create asked for, as the row and its sealed recipient keep it: everything the
 * fingerprint covers can be read back from stored data, so `keys:rotate` can recompute it.
 */
export interface PayoutRequestFacts {
  shopPaymentId: string;
  amount: Amount;
  amountType: string;
  shopCurrency: number;
  payway: string;
  account: string;
  accountDetails?: Record<string, string> | null;
  description?: string | null;
}

function sortedDetails(details: Record<string, string> | null | undefined): unknown {
  return details
    ? Object.fromEntries(Object.entries(details).sort(([a], [b]) => a.localeCompare(b)))
    : null;
}

/**
 * The create request in one canonical text (keys of accountDetails sorted, the amount by value:
 * "100.0" and "100.00" are the same request, as the contract compares amounts). `v: 2` keeps it
 * apart from the older form, which had the amount as spelled.
 */
export function canonicalPayoutFacts(f: PayoutRequestFacts): string {
  return JSON.stringify({
    v: 2,
    shopPaymentId: f.shopPaymentId,
    amount: f.amount.canonicalText(),
    amountType: f.amountType,
    shopCurrency: f.shopCurrency,
    payway: f.payway,
    account: f.account,
    accountDetails: sortedDetails(f.accountDetails),
    description: f.description ?? null,
  });
}

/** The canonical text of a create body (see canonicalPayoutFacts). */
export function canonicalPayoutRequest(dto: CreatePayoutDto): string {
  // A body that got this far passed IsDecimalAmount; an odd one still fingerprints (as spelled).
  if (!Amount.isValid(dto.amount)) return legacyCanonicalPayoutRequest(dto);
  return canonicalPayoutFacts({ ...dto, amount: Amount.parse(dto.amount) });
}

/**
 * The form fingerprints had at first: the amount as the shop spelled it. It cannot be
 * recomputed from stored data (the spelling is not kept), so it is only ever compared with.
 */
export function legacyCanonicalPayoutRequest(dto: CreatePayoutDto): string {
  return JSON.stringify({
    shopPaymentId: dto.shopPaymentId,
    amount: dto.amount,
    amountType: dto.amountType,
    shopCurrency: dto.shopCurrency,
    payway: dto.payway,
    account: dto.account,
    accountDetails: sortedDetails(dto.accountDetails),
    description: dto.description ?? null,
  });
}

/**
 * "Is this repeat the same request?" for payout creates. A plain SHA-256 of a body holding a card
 * number could be reversed by trying the few card numbers that fit, so the fingerprint is keyed:
 * an HMAC under the data-encryption key ring (a blind index), not under the gateway secret, so
 * rotating GATEWAY_SECRET_KEY never turns a shop's repeat into a 409.
 *
 * A new fingerprint is made under the ring's first key and stored with that key's id
 * (`request_fingerprint_key`); `keys:rotate` recomputes every fingerprint not made under the
 * first key from the row and its sealed recipient, so dropping an old key afterwards keeps
 * repeats recognised. A stored fingerprint matches under any key of the ring (a rotation in
 * progress), and rows written before (the older form, or before the ring, under the key derived
 * from the gateway secret they were written with) keep matching.
 */
export class PayoutFingerprints {
  private readonly legacyKey: Buffer;

  constructor(
    private readonly keys: KeyRing,
    gatewaySecret: string,
  ) {
    this.legacyKey = deriveKey(gatewaySecret, 'payout-fingerprint');
  }

  /** The fingerprint of a new create, and the id of the key it was made under. */
  of(dto: CreatePayoutDto): { fingerprint: string; keyId: string } {
    return {
      fingerprint: this.keys.blindIndex(canonicalPayoutRequest(dto), PAYOUT_REQUEST_INDEX),
      keyId: this.keys.primaryId,
    };
  }

  matches(stored: string, dto: CreatePayoutDto): boolean {
    for (const text of [canonicalPayoutRequest(dto), legacyCanonicalPayoutRequest(dto)]) {
      if (
        this.keys.blindIndexes(text, PAYOUT_REQUEST_INDEX).includes(stored) ||
        createHmac('sha256', this.legacyKey).update(text).digest('hex') === stored
      )
        return true;
    }
    return false;
  }
}

/** The fingerprint of a stored payout under the ring's first key (keys:rotate). */
export function fingerprintOfStored(keys: KeyRing, facts: PayoutRequestFacts): string {
  return keys.blindIndex(canonicalPayoutFacts(facts), PAYOUT_REQUEST_INDEX);
}
