import {
  consoleList,
  CONSOLE_LISTS,
  exportFileName,
  listFilters,
  listHref,
  writeListCsv,
  type ConsoleList,
  type CsvValue,
  type ListContext,
} from './console-lists';

/** A list of `total` rows read in batches, counting the batches it was asked for. */
function fakeList(
  total: number,
  make: (i: number) => Record<string, CsvValue>,
): {
  list: ConsoleList;
  asked: number[];
} {
  const asked: number[] = [];
  const list: ConsoleList = {
    name: 'fakes',
    path: '/admin/ui/fakes',
    filters: ['status'],
    columns: [{ name: 'id' }, { name: 'note', text: true }, { name: 'amount' }, { name: 'at' }],
    batch(_ctx, _f, after, limit) {
      asked.push(limit);
      const start = after === null ? 0 : (after as number);
      const rows = Array.from({ length: Math.max(0, Math.min(limit, total - start)) }, (_, i) =>
        make(start + i),
      );
      return Promise.resolve({
        rows,
        next: start + rows.length < total ? start + rows.length : null,
      });
    },
  };
  return { list, asked };
}

const ctx = {} as ListContext;

async function collect(list: ConsoleList, cap?: number, batch?: number): Promise<string> {
  let out = '';
  await writeListCsv(list, ctx, {}, (c) => Promise.resolve(void (out += c)), cap, batch);
  return out;
}

describe('console list CSV', () => {
  it('quotes per RFC 4180, keeps amounts exact, writes times in ISO UTC and guards formulas in text only', async () => {
    const notes = ['=1+1', '+x', '-y', '@z', '\tt', 'a,b', 'say "hi"', 'two\r\nlines', 'plain'];
    const { list } = fakeList(notes.length, (i) => ({
      id: i,
      note: notes[i],
      amount: i === 0 ? '-0.01' : '12345678901234567890.12',
      at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
    }));
    const lines = (await collect(list)).split('\r\n');
    expect(lines[0]).toBe('id,note,amount,at');
    expect(lines.slice(1, 10)).toEqual([
      "0,'=1+1,-0.01,2026-01-02T03:04:05.006Z",
      "1,'+x,12345678901234567890.12,2026-01-02T03:04:05.006Z",
      "2,'-y,12345678901234567890.12,2026-01-02T03:04:05.006Z",
      "3,'@z,12345678901234567890.12,2026-01-02T03:04:05.006Z",
      "4,'\tt,12345678901234567890.12,2026-01-02T03:04:05.006Z",
      '5,"a,b",12345678901234567890.12,2026-01-02T03:04:05.006Z',
      '6,"say ""hi""",12345678901234567890.12,2026-01-02T03:04:05.006Z',
      '7,"two',
      'lines",12345678901234567890.12,2026-01-02T03:04:05.006Z',
    ]);
  });

  it('reads batch by batch and stops at the cap with a last line saying the file was cut', async () => {
    const { list, asked } = fakeList(25, (i) => ({ id: i }));
    const all = (await collect(list, 100, 10)).trimEnd().split('\r\n');
    expect(all).toHaveLength(26);
    expect(asked).toEqual([10, 10, 10]);

    const cut = (await collect(list, 12, 10)).trimEnd().split('\r\n');
    expect(cut).toHaveLength(1 + 12 + 1);
    expect(cut.at(-2)).toBe('11,,,');
    expect(cut.at(-1)).toMatch(/^\(cut: more than 12 rows match/);

    // Exactly the cap: nothing is cut.
    const exact = (await collect(fakeList(12, (i) => ({ id: i })).list, 12, 5)).trimEnd();
    expect(exact).not.toContain('cut');
    expect(exact.split('\r\n')).toHaveLength(13);
  });

  it('takes only the filter names a list declares, naming the field it refuses', () => {
    const invoices = consoleList('invoices')!;
    expect(listFilters(invoices, { status: 'paid', from: '2026-01-01', q: '' })).toEqual({
      status: 'paid',
      from: '2026-01-01',
    });
    for (const [given, field] of [
      [{ "status' OR 1=1 --": 'x' }, "status' OR 1=1 --"],
      [{ Status: 'paid' }, 'Status'],
      [{ after: 'x' }, 'after'],
      [{ status: ['a', 'b'] }, 'status'],
      [{ status: 'x'.repeat(256) }, 'status'],
      [{ from: '2026-02-30' }, 'from'],
      [{ to: "1' OR '1'='1" }, 'to'],
    ] as Array<[Record<string, unknown>, string]>) {
      const got = listFilters(invoices, given);
      expect(got).toHaveProperty('error');
      expect((got as { error: string }).error.startsWith(`${field}:`)).toBe(true);
    }
    expect(listFilters(consoleList('refunds')!, { payway: 'x' })).toHaveProperty('error');
    expect(listFilters(consoleList('deliveries')!, { state: 'gone' })).toHaveProperty('error');
    expect(listFilters(invoices, { _csrf: 't', name: 'n' }, ['_csrf', 'name'])).toEqual({});
  });

  it('builds links and file names from the declared filters only, encoded', () => {
    const invoices = consoleList('invoices')!;
    expect(listHref(invoices, { status: 'a&b=c', q: '<x>' })).toBe(
      '/admin/ui/invoices?q=%3Cx%3E&status=a%26b%3Dc',
    );
    expect(exportFileName(invoices, new Date('2026-03-04T23:59:00Z'))).toBe(
      'invoices-2026-03-04.csv',
    );
    expect(CONSOLE_LISTS.map((l) => l.name)).toEqual([
      'invoices',
      'refunds',
      'payouts',
      'notifications',
      'deliveries',
      'attention',
    ]);
  });
});
