import { randomUUID } from 'node:crypto';
import { cardDataProblems, holdsCardNumber, namesCvv } from './card-data';

describe('card data the service never takes', () => {
  it.each([
    'card 4111111111111111 cvv 987',
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    'pan:5555555555554444.',
    '6011000990139424',
    '4222222222222',
    'paid with 4111111111111111 2026',
    'ref 12 4111 1111 1111 1111',
  ])('finds a card number in %p', (text) => {
    expect(holdsCardNumber(text)).toBe(true);
  });

  it.each([
    'order 4111111111111112',
    'order 12345 amount 100.10',
    '41111111111111110000123',
    '2026-12-01T10:00:00Z',
    '+7 900 123-45-67',
    'A-1001',
    '4111  1111 1111 1111 (two spaces)',
  ])('leaves %p alone', (text) => {
    expect(holdsCardNumber(text)).toBe(false);
  });

  it('leaves UUIDs alone, whose dashed digit groups once read as card numbers', () => {
    // Each was refused before: its dashes joined its digit groups into a Luhn-valid run.
    for (const u of [
      'a833759d-8c56-4372-9672-5010fecd17b2',
      'bc401004-2020-4953-9b58-032a598e6986',
      '62d58547-9254-4884-8fdd-27c11d617234',
    ]) {
      expect(
        [u, `ref-${u}`, `order ${u.toUpperCase()} paid`, `${u},${u}`].filter(holdsCardNumber),
      ).toEqual([]);
    }
    for (let i = 0; i < 20000; i++) {
      const u = randomUUID();
      if (holdsCardNumber(`ref-${u}`)) throw new Error(`${u} read as a card number`);
    }
  });

  it('still finds a card number beside a UUID, glued to one, or in groups that end at one', () => {
    const u = 'a833759d-8c56-4372-9672-5010fecd17b2';
    for (const text of [
      `${u} 4111 1111 1111 1111`,
      `4111111111111111 ${u}`,
      `4111-1111-1111-1111-${u}`,
      `${u}4111111111111111`,
      `4111111111111111${u}`,
      `${u}-4111-1111-1111-1111`,
    ])
      expect([text, holdsCardNumber(text)]).toEqual([text, true]);
  });

  it('names a card verification value key in any case', () => {
    for (const k of ['cvv', 'CVC', 'Cvv2', 'cav2', 'CID']) expect(namesCvv(k)).toBe(true);
    for (const k of ['cvvx', 'cid_ref', 'card']) expect(namesCvv(k)).toBe(false);
  });

  it('names the key of an object at fault', () => {
    expect(cardDataProblems({ a: 'x', note: '4111 1111 1111 1111' }, 'extras')).toEqual([
      { field: 'extras.note', message: expect.stringContaining('card number') },
    ]);
    expect(cardDataProblems('fine', 'description')).toEqual([]);
  });
});
