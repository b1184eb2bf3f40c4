import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { retryDelayS, webhookHeaders } from './webhook-signature';

const SECRET = randomBytes(32);
const WHSEC = `whsec_${SECRET.toString('base64')}`;

describe('webhookHeaders (Standard Webhooks)', () => {
  it('verifies with the standardwebhooks package for any id and body', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,12}$/), fc.json(), (id, body) => {
        const headers = webhookHeaders(SECRET, id, body);
        expect(new Webhook(WHSEC).verify(body, headers)).toEqual(JSON.parse(body));
      }),
      { numRuns: 200 },
    );
  });

  it('is v1, base64 HMAC-SHA256 of "id.timestamp.body" under the decoded secret', () => {
    const now = new Date('2026-11-22T05:00:00Z');
    const body = '{"id":"7","type":"invoice.succeeded"}';
    const headers = webhookHeaders(SECRET, '7', body, now);
    expect(headers['webhook-id']).toBe('7');
    expect(headers['webhook-timestamp']).toBe(String(now.getTime() / 1000));
    const expected = createHmac('sha256', SECRET)
      .update(`7.${headers['webhook-timestamp']}.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('fails verification when the body, id or secret differ', () => {
    const body = '{"a":1}';
    const headers = webhookHeaders(SECRET, '1', body);
    expect(() => new Webhook(WHSEC).verify('{"a":2}', headers)).toThrow();
    expect(() => new Webhook(WHSEC).verify(body, { ...headers, 'webhook-id': '2' })).toThrow();
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(body, headers),
    ).toThrow();
  });
});

describe('retryDelayS', () => {
  it('doubles per attempt, with jitter between half and the whole step, capped', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const step = Math.min(3600, 5 * 2 ** (attempt - 1));
          const d = retryDelayS(attempt, 5, 3600, () => r);
          expect(d).toBeGreaterThanOrEqual(step / 2);
          expect(d).toBeLessThanOrEqual(step);
        },
      ),
    );
  });
});
