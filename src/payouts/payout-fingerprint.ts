import { createHmac } from 'node:crypto';
import type { KeyRing } from '../common/key-ring';
import { deriveKey } from '../common/sealed';
import type { CreatePayoutDto } from './dto/payout-requests.dto';

/** Separates the request fingerprint from any other HMAC made with the ring. */
export const PAYOUT_REQUEST_INDEX = 'payout-request';

/** The create request in one canonical text (keys of accountDetails sorted). */
export function canonicalPayoutRequest(dto: CreatePayoutDto): string {
  return JSON.stringify({
    shopPaymentId: dto.shopPaymentId,
    amount: dto.amount,
    amountType: dto.amountType,
    shopCurrency: dto.shopCurrency,
    payway: dto.payway,
    account: dto.account,
    accountDetails: dto.accountDetails
      ? Object.fromEntries(
          Object.entries(dto.accountDetails).sort(([a], [b]) => a.localeCompare(b)),
        )
      : null,
    description: dto.description ?? null,
  });
}

/**
 * "Is this repeat the same request?" for payout creates. A plain SHA-256 of a body holding a card
 * number could be reversed by trying the few card numbers that fit, so the fingerprint is keyed:
 * an HMAC under the data-encryption key ring (a blind index), not under the gateway secret, so
 * rotating GATEWAY_SECRET_KEY never turns a shop's repeat into a 409. A stored fingerprint
 * matches under any key of the ring (a rotation in progress), and rows written before the ring
 * keep matching under the key derived from the gateway secret they were written with.
 */
export class PayoutFingerprints {
  private readonly legacyKey: Buffer;

  constructor(
    private readonly keys: KeyRing,
    gatewaySecret: string,
  ) {
    this.legacyKey = deriveKey(gatewaySecret, 'payout-fingerprint');
  }

  of(dto: CreatePayoutDto): string {
    return this.keys.blindIndex(canonicalPayoutRequest(dto), PAYOUT_REQUEST_INDEX);
  }

  matches(stored: string, dto: CreatePayoutDto): boolean {
    const text = canonicalPayoutRequest(dto);
    return (
      this.keys.blindIndexes(text, PAYOUT_REQUEST_INDEX).includes(stored) ||
      createHmac('sha256', this.legacyKey).update(text).digest('hex') === stored
    );
  }
}
