import { holdActionBodyErrors, PARTIAL_CAPTURE_MESSAGE } from './hold-action-body';

describe('holdActionBodyErrors: charge and unhold take no body fields', () => {
  it.each<[string, unknown, Array<{ field: string; message: string }>]>([
    ['no body', undefined, []],
    ['an empty object', {}, []],
    [
      'a partial amount',
      { amount: '50.00' },
      [{ field: 'amount', message: PARTIAL_CAPTURE_MESSAGE }],
    ],
    ['another spelling', { Amount: '1' }, [{ field: 'Amount', message: PARTIAL_CAPTURE_MESSAGE }]],
    ['a null amount', { amount: null }, [{ field: 'amount', message: PARTIAL_CAPTURE_MESSAGE }]],
    [
      'any other field',
      { reason: 'x' },
      [{ field: 'reason', message: 'is not accepted: charge and unhold take no fields' }],
    ],
    [
      'a JSON array',
      [{ amount: '1' }],
      [{ field: 'body', message: 'must be empty or {}: charge and unhold take no fields' }],
    ],
    [
      'an empty JSON array',
      [],
      [{ field: 'body', message: 'must be empty or {}: charge and unhold take no fields' }],
    ],
    [
      'a bare value',
      'amount=1',
      [{ field: 'body', message: 'must be empty or {}: charge and unhold take no fields' }],
    ],
  ])('%s', (_name, body, expected) => {
    expect(holdActionBodyErrors(body)).toEqual(expected);
  });

  it('names every field sent', () => {
    expect(holdActionBodyErrors({ amount: '1', currency: 643 }).map((e) => e.field)).toEqual([
      'amount',
      'currency',
    ]);
  });
});
