import fc from 'fast-check';
import { Client } from 'pg';
import { arrayLiteral, byColumn } from '../../src/common/sql';
import { createTestDatabase } from '../support/database';

/**
 * The batch statements' array parameters are written by arrayLiteral (src/common/sql.ts) instead
 * of `pg`'s own arrayString. On the real PostgreSQL, each literal reads back as the same values
 * `pg` sends for the same array: text with quotes, backslashes, commas, braces, spaces, the word
 * NULL, an empty string and characters beyond ASCII; numbers, booleans, instants and JSON.
 */
let db: Client;
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  db = new Client({ connectionString: database.url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await database?.drop();
});

/** The array as PostgreSQL reads it, one element a row, as text (NULL kept apart from 'NULL'). */
async function readBack(type: string, param: unknown): Promise<Array<string | null>> {
  const r = await db.query<{ v: string | null }>(
    `SELECT v::text AS v FROM unnest($1::${type}[]) WITH ORDINALITY AS t(v, i) ORDER BY i`,
    [param],
  );
  return r.rows.map((x) => x.v);
}

const awkward = [
  '',
  'NULL',
  'null',
  ' spaced ',
  'a,b',
  '{braces}',
  'quote " inside',
  'back\\slash',
  '\\"',
  '"',
  '\\',
  'tab\tand\nnewline',
  'кириллица и 😀',
];

describe('arrayLiteral reads back as pg sends the same array', () => {
  it('text: awkward strings and nulls', async () => {
    const values = [...awkward, null, undefined];
    expect(await readBack('text', arrayLiteral(values))).toEqual(
      await readBack(
        'text',
        values.map((v) => v ?? null),
      ),
    );
  });

  it('text: any strings (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.option(
            fc.string({
              unit: fc.oneof(
                fc.constantFrom('\\', '"', ',', '{', '}', ' ', '\t', 'N', 'U', 'L', 'é', '😀'),
                fc.string({ unit: 'binary', maxLength: 1 }),
              ),
            }),
            { nil: null },
          ),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        async (values) => {
          // PostgreSQL text holds no NUL character.
          const clean = values.map((v) => (v === null ? null : v.replace(/\0/g, '')));
          expect(await readBack('text', arrayLiteral(clean))).toEqual(
            await readBack('text', clean),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it('numbers, booleans, numeric text, jsonb text and instants', async () => {
    const cases: Array<[string, unknown[]]> = [
      ['int', [1, -2, 0, 2147483647, null]],
      ['float8', [0.1, 1e21, -3.5, 30, null]],
      ['numeric', ['100.00', '0.01', '-12345678901234567890.123456789', null]],
      ['bool', [true, false, null]],
      ['uuid', ['2c3412fc-f682-4207-8525-382cd3b19b82', null]],
      ['jsonb', ['{"a":"quote \\" and \\\\ back","b":[1,2.50,{"c":null}]}', 'null', '"x"', null]],
    ];
    for (const [type, values] of cases)
      expect([type, await readBack(type, arrayLiteral(values))]).toEqual([
        type,
        await readBack(type, values),
      ]);
    // An instant: the same one, whatever offset either side wrote it in.
    const instants = [new Date('2026-12-03T13:54:56.531Z'), new Date(0), null];
    expect(await readBack('timestamptz', arrayLiteral(instants))).toEqual(
      await readBack('timestamptz', instants),
    );
  });

  it('byColumn: row i of each column is element i of its array', async () => {
    const literals = byColumn([
      ['a"1', 1, new Date('2026-01-01T00:00:00.000Z')],
      [null, 2, null],
    ]);
    expect(await readBack('text', literals[0])).toEqual(['a"1', null]);
    expect(await readBack('int', literals[1])).toEqual(['1', '2']);
    expect(await readBack('timestamptz', literals[2])).toHaveLength(2);
  });

  it('refuses what no batch statement sends rather than guess its text', () => {
    expect(() => arrayLiteral([{ a: 1 }])).toThrow(/no array element of type/);
    expect(() => arrayLiteral([[1]])).toThrow(/no array element of type/);
    expect(() => arrayLiteral([Buffer.from('x')])).toThrow(/no array element of type/);
    expect(() => arrayLiteral([new Date(Number.NaN)])).toThrow(/invalid Date/);
  });
});
