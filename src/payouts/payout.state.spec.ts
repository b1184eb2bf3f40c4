import fc from 'fast-check';
import type { PayoutStatusConfig } from '../config/config';
import type { PayoutStatus } from './payout.entity';
import {
  decideTransition,
  isFinal,
  PAYOUT_STATUSES,
  statusFromGatewayNumber,
} from './payout.state';

const CFG: PayoutStatusConfig = { success: [5], rejected: [6], failed: [8] };

describe('payout state machine', () => {
  it.each<[PayoutStatus, PayoutStatus, boolean]>([
    ['pending', 'processing', true],
    ['pending', 'unknown', true],
    ['pending', 'succeeded', true],
    ['pending', 'failed', true],
    ['pending', 'rejected', true],
    ['unknown', 'processing', true],
    ['unknown', 'succeeded', true],
    ['unknown', 'pending', false],
    ['processing', 'succeeded', true],
    ['processing', 'rejected', true],
    ['processing', 'failed', true],
    ['processing', 'unknown', true],
    ['processing', 'needs_attention', true],
    ['processing', 'pending', false],
    ['needs_attention', 'succeeded', true],
    ['needs_attention', 'processing', false],
    ['succeeded', 'failed', false],
    ['rejected', 'processing', false],
    ['failed', 'needs_attention', false],
  ])('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(decideTransition(from, to).allowed).toBe(allowed);
  });

  it('never leaves a final status', () => {
    const status = fc.constantFrom(...PAYOUT_STATUSES);
    fc.assert(
      fc.property(
        status,
        status,
        (from, to) => !isFinal(from) || !decideTransition(from, to).allowed,
      ),
    );
  });

  it('any sequence of transitions that reaches a final status stays there', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PAYOUT_STATUSES), { maxLength: 30 }), (steps) => {
        let current: PayoutStatus = 'pending';
        let finalSeen: PayoutStatus | null = null;
        for (const to of steps) {
          if (decideTransition(current, to).allowed) current = to;
          if (isFinal(current)) finalSeen ??= current;
        }
        return finalSeen === null || current === finalSeen;
      }),
    );
  });

  it.each<[number, PayoutStatus, boolean]>([
    [5, 'succeeded', true],
    [6, 'rejected', true],
    [8, 'failed', true],
    [1, 'processing', true],
    [3, 'processing', true],
    [9, 'processing', true],
    [42, 'processing', false],
  ])('gateway status %d -> %s (known %s)', (n, status, known) => {
    expect(statusFromGatewayNumber(n, CFG)).toEqual({ status, known });
  });

  it('follows the configuration, not constants', () => {
    expect(statusFromGatewayNumber(5, { success: [10], rejected: [6], failed: [5] }).status).toBe(
      'failed',
    );
  });
});
