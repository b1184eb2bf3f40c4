import { kindMisfit, notificationKindOf, outcomeText, statusEffectOf } from './notification.rules';

describe('statusEffectOf', () => {
  it.each([
    [{ kind: 'apply' }, true, 'applied'],
    [{ kind: 'apply', changed: true }, true, 'applied'],
    [{ kind: 'apply', changed: false }, true, 'unchanged'],
    [{ kind: 'ignore' }, true, 'unchanged'],
    [{ kind: 'ignore' }, false, 'not_applied'],
    [{ kind: 'attention' }, true, 'not_applied'],
    [{ kind: 'absent' }, true, 'not_applied'],
  ])('%j (status known: %s) is %s', (verdict, known, effect) => {
    expect(statusEffectOf(verdict, known)).toBe(effect);
  });
});

describe('outcomeText', () => {
  it('says what changed, and that the status was not applied when it was not', () => {
    expect(outcomeText(['status a -> b'], null)).toBe('status a -> b');
    expect(outcomeText(['payer price learnt'], 'not applied, needs attention: x')).toBe(
      'payer price learnt; status not applied, needs attention: x',
    );
    expect(outcomeText([], 'not applied: y')).toBe('not applied: y');
  });
});

describe('notificationKindOf: the `type` exactly as sent', () => {
  it.each<[string, string | string[] | undefined, string]>([
    ['invoice', 'invoice', 'invoice'],
    ['refund', 'refund', 'refund'],
    ['the same value twice', ['invoice', 'invoice'], 'invoice'],
    ['missing', undefined, 'problem'],
    ['empty', '', 'problem'],
    ['another case', 'Invoice', 'problem'],
    ['a trailing space', 'invoice ', 'problem'],
    ['an unknown kind', 'chargeback', 'problem'],
    ['two different values', ['refund', 'invoice'], 'problem'],
    ['an empty list', [], 'problem'],
  ])('%s', (_n, raw, expected) => {
    const r = notificationKindOf(raw);
    expect('kind' in r ? r.kind : 'problem').toBe(expected);
  });
});

describe('kindMisfit: does the body fit its kind', () => {
  it.each<['invoice' | 'refund', Record<string, string>, boolean]>([
    ['invoice', { shop_order_id: 'o-1', status: 'success' }, true],
    ['invoice', { shop_order_id: 'o-1', shop_refund_id: 'r-1' }, false],
    ['invoice', { shop_order_id: 'o-1', shop_refund_id: '' }, true],
    ['invoice', { status: 'success' }, false],
    ['refund', { shop_refund_id: 'r-1', shop_order_id: 'o-1' }, true],
    ['refund', { shop_order_id: 'o-1', status: 'success' }, false],
  ])('%s %j fits: %s', (kind, fields, fits) => {
    expect(kindMisfit(kind, fields) === null).toBe(fits);
  });
});
