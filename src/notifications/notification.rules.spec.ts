import { outcomeText, statusEffectOf } from './notification.rules';

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
