import fc from 'fast-check';
import Decimal from 'decimal.js';
import { Amount, InvalidAmountError, amountTransformer, moneyText, plainMoneyText } from './money';

const decimalText = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 8 }))
  .map(([units, scale]) => {
    const digits = units.toString().padStart(scale + 1, '0');
    return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  });

/** Independent model: scaled BigInt arithmetic. */
function toUnits(text: string, scale: number): bigint {
  const [i, f = ''] = text.split('.');
  return BigInt(i + f.padEnd(scale, '0'));
}

describe('Amount', () => {
  it.each([
    ['100.10', '100.10'],
    ['0', '0'],
    ['0.5', '0.5'],
    ['123456789012345678.12345678', '123456789012345678.12345678'],
  ])('keeps the exact text of %s', (input, out) => {
    expect(Amount.parse(input).toString()).toBe(out);
  });

  it.each([
    ['-1'],
    ['1e3'],
    ['01'],
    ['1.'],
    ['.5'],
    [' 1'],
    ['1,5'],
    ['0.123456789'],
    ['1234567890123456789'],
    [''],
    [100],
    [null],
  ])('rejects %p', (input) => {
    expect(() => Amount.parse(input)).toThrow(InvalidAmountError);
    expect(Amount.isValid(input)).toBe(false);
  });

  it('adds with the larger scale', () => {
    expect(Amount.parse('100.10').plus(Amount.parse('0.5')).toString()).toBe('100.60');
    expect(Amount.parse('0.1').plus(Amount.parse('0.2')).toString()).toBe('0.3');
    expect(Amount.parse('100').minus(Amount.parse('0.01')).toString()).toBe('99.99');
  });

  it('reads gateway and database text, exponents included', () => {
    expect(Amount.fromText('1e-7').toString()).toBe('0.0000001');
    expect(Amount.fromText('100.0').toString()).toBe('100.0');
    expect(Amount.fromText('-5.25').toString()).toBe('-5.25');
    expect(() => Amount.fromText('abc')).toThrow(InvalidAmountError);
  });

  it('round-trips through the numeric column transformer', () => {
    const a = Amount.parse('100.10');
    const stored = amountTransformer.to(a) as string;
    expect(stored).toBe('100.10');
    expect((amountTransformer.from(stored) as Amount).toString()).toBe('100.10');
    expect(amountTransformer.from(null)).toBeNull();
  });

  it('property: parse then print is the identity on valid text', () => {
    fc.assert(fc.property(decimalText, (t) => Amount.parse(t).toString() === t));
  });

  it('property: sum and difference equal the scaled-integer model', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        const scale = Math.max((a.split('.')[1] ?? '').length, (b.split('.')[1] ?? '').length);
        const sum = Amount.parse(a).plus(Amount.parse(b));
        const diff = Amount.parse(a).minus(Amount.parse(b));
        return (
          toUnits(sum.toString(), scale) === toUnits(a, scale) + toUnits(b, scale) &&
          toUnits(diff.toString().replace('-', ''), scale) ===
            (toUnits(a, scale) - toUnits(b, scale) < 0n
              ? toUnits(b, scale) - toUnits(a, scale)
              : toUnits(a, scale) - toUnits(b, scale))
        );
      }),
    );
  });

  it('property: comparison agrees with the model and is antisymmetric', () => {
    fc.assert(
      fc.property(decimalText, decimalText, (a, b) => {
        const model = toUnits(a, 8) < toUnits(b, 8) ? -1 : toUnits(a, 8) > toUnits(b, 8) ? 1 : 0;
        return (
          Amount.parse(a).cmp(Amount.parse(b)) === model &&
          Amount.parse(b).cmp(Amount.parse(a)) === -model
        );
      }),
    );
  });

  it('canonicalText names the value whatever its scale', () => {
    expect(['100', '100.0', '100.00'].map((t) => Amount.parse(t).canonicalText())).toEqual([
      '100',
      '100',
      '100',
    ]);
    expect(Amount.parse('100.10').canonicalText()).toBe('100.1');
    expect(Amount.fromText('0.00000001').canonicalText()).toBe('0.00000001');
  });
});

describe('plainMoneyText (the string steps of moneyText)', () => {
  // decimal.js's own answer, as moneyText computed it for every value before the string steps.
  const byDecimal = (text: string, digits: number): string => {
    let d = new Decimal(text);
    if (d.isZero()) d = d.abs();
    return d.decimalPlaces() > digits ? d.toFixed() : d.toFixed(digits);
  };
  const cases = [
    '0',
    '-0',
    '0.0',
    '-0.000',
    '00',
    '007',
    '007.500',
    '1',
    '10',
    '100.10',
    '150000',
    '1080.22',
    '0.001',
    '-0.001',
    '12.3456789',
    '999999999999999999.99999999',
    '-1000000',
    '5.000000001',
  ];

  it.each(cases.flatMap((c) => [0, 2, 3].map((digits) => [c, digits] as const)))(
    '%s with %i digits as decimal.js writes it',
    (text, digits) => {
      expect(plainMoneyText(text, digits)).toBe(byDecimal(text, digits));
    },
  );

  it('agrees with decimal.js on 5,000 random plain decimals', () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const digitsText = (n: number) => Array.from({ length: n }, () => String(next(10))).join('');
    for (let i = 0; i < 5000; i++) {
      const int = digitsText(1 + next(19));
      const frac = next(3) === 0 ? '' : `.${digitsText(1 + next(9))}`;
      const text = `${next(4) === 0 ? '-' : ''}${int}${frac}`;
      const digits = next(4);
      expect([text, digits, plainMoneyText(text, digits)]).toEqual([
        text,
        digits,
        byDecimal(text, digits),
      ]);
    }
  });

  it('leaves any other text to decimal.js (exponents, signs, spaces)', () => {
    for (const t of ['1e3', '+5', ' 5', '5.', '.5', 'abc', ''])
      expect(plainMoneyText(t, 2)).toBeNull();
    expect(moneyText('1e3', 643)).toBe('1000.00');
  });
});

describe('Amount read as written (no decimal.js until arithmetic)', () => {
  // What decimal.js made of the text before (the service's settings): the reference.
  const D64 = Decimal.clone({
    precision: 64,
    rounding: Decimal.ROUND_HALF_UP,
    toExpNeg: -64,
    toExpPos: 64,
  });
  const eager = (t: string) => {
    const d = new D64(t);
    const plain = /^-?\d+(\.\d+)?$/.test(t.trim()) ? t.trim() : d.toFixed();
    const scale = (plain.split('.')[1] ?? '').length;
    return { d, scale, text: d.toFixed(scale) };
  };
  const signed = fc.tuple(fc.boolean(), decimalText).map(([neg, t]) => (neg ? `-${t}` : t));
  const odd = fc.constantFrom(
    '-0',
    '-0.00',
    '007.50',
    '0.0',
    '1e-7',
    '-1E+3',
    ' 5 ',
    '+4.20',
    '00',
    '-000.000',
  );

  it('writes, signs and compares every text exactly as decimal.js did', () => {
    fc.assert(
      fc.property(fc.oneof(signed, odd), fc.oneof(signed, odd), (a, b) => {
        // Text decimal.js refuses is refused the same.
        for (const t of [a, b]) {
          let refused: boolean;
          try {
            refused = !new D64(t).isFinite();
          } catch {
            refused = true;
          }
          if (refused) {
            expect(() => Amount.fromText(t)).toThrow(InvalidAmountError);
            return;
          }
        }
        const [x, y] = [Amount.fromText(a), Amount.fromText(b)];
        const [ex, ey] = [eager(a), eager(b)];
        expect(x.toString()).toBe(ex.text);
        expect(x.scale).toBe(ex.scale);
        expect(x.isZero()).toBe(ex.d.isZero());
        expect(x.isNegative()).toBe(ex.d.lt(0));
        expect(x.isPositive()).toBe(ex.d.gt(0));
        expect(x.cmp(y)).toBe(ex.d.cmp(ey.d));
        expect(x.plus(y).toString()).toBe(ex.d.plus(ey.d).toFixed(Math.max(ex.scale, ey.scale)));
        expect(x.minus(y).toString()).toBe(ex.d.minus(ey.d).toFixed(Math.max(ex.scale, ey.scale)));
        expect(x.withScale(6).toString()).toBe(ex.d.toFixed(Math.max(ex.scale, 6)));
        expect(x.canonicalText()).toBe(ex.d.toFixed());
      }),
      { numRuns: 3000 },
    );
  });

  it('two amounts are equal (toEqual) exactly when their text and scale are', () => {
    expect(Amount.fromText('100.10')).toEqual(Amount.parse('100.10'));
    expect(Amount.fromText('100.10')).not.toEqual(Amount.parse('100.1'));
    expect(Amount.fromText('100.10')).not.toEqual(Amount.parse('100.20'));
    // One used in arithmetic (its decimal.js form made) is still equal to one that was not.
    const used = Amount.fromText('5.00');
    used.plus(Amount.parse('1'));
    expect(used).toEqual(Amount.fromText('5.00'));
    expect(Amount.zero(2)).toEqual(Amount.parse('0.00'));
    expect(Amount.parse('3').plus(Amount.parse('0.50'))).toEqual(Amount.parse('3.50'));
  });

  it('refuses what is not a finite decimal', () => {
    for (const bad of ['', 'abc', '1.2.3', 'NaN', 'Infinity', '-'])
      expect(() => Amount.fromText(bad)).toThrow(InvalidAmountError);
  });
});
