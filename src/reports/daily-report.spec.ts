import {
  CSV_COLUMNS,
  dailyReportCsv,
  type DailyReport,
  dayBefore,
  reportDayProblem,
  reportFileName,
} from './daily-report';

const base: DailyReport = {
  date: '2026-01-15',
  timeZone: 'Europe/Moscow',
  from: '2026-01-14T21:00:00.000Z',
  to: '2026-01-15T21:00:00.000Z',
  complete: true,
  currencies: [
    {
      currency: 643,
      payments: { count: 2, amount: '300.10' },
      refunds: { count: 0, amount: '0' },
      payouts: { count: 1, amount: '1040.00', withoutAmount: 0 },
      chargebacks: { count: 1, amount: '30.00' },
      fees: {
        payments: { count: 1, amount: '-1.50', notComputed: 1 },
        payouts: { count: 1, amount: '40.00', notComputed: 0 },
      },
    },
  ],
  ledger: [{ account: 'sales', currency: 643, amount: '-100.00' }],
  open: { total: 0, items: [] },
  attention: { total: 0, items: [] },
};

const lines = (csv: string): string[] => csv.split('\r\n');

describe('dailyReportCsv', () => {
  it('writes one flat table: a header, six rows per currency, the totals; CRLF line ends', () => {
    const csv = dailyReportCsv(base);
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(lines(csv)).toEqual([
      CSV_COLUMNS.join(','),
      'payments,643,2,300.10,,,,,,,,,,,',
      'refunds,643,0,0,,,,,,,,,,,',
      'payouts,643,1,1040.00,0,,,,,,,,,,',
      'chargebacks,643,1,30.00,,,,,,,,,,,',
      'payment_fees,643,1,-1.50,1,,,,,,,,,,',
      'payout_fees,643,1,40.00,0,,,,,,,,,,',
      'ledger:sales,643,,-100.00,,,,,,,,,,,',
      'open_total,,0,,,,,,,,,,,,',
      'attention_total,,0,,,,,,,,,,,,',
      '',
    ]);
  });

  it.each([
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\r\nlines', '"two\r\nlines"'],
    ['lf\nonly', '"lf\nonly"'],
    ['=1+2', "'=1+2"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['=HYPERLINK("u","t"),1', `"'=HYPERLINK(""u"",""t""),1"`],
    ['plain-id_1', 'plain-id_1'],
  ])('quotes and guards the text cell %j as %j', (id, cell) => {
    const csv = dailyReportCsv({
      ...base,
      currencies: [],
      open: {
        total: 1,
        items: [
          {
            objectType: 'invoice',
            id,
            amount: '5.00',
            currency: 643,
            status: null,
            currentStatus: 'created',
            createdAt: '2026-01-15T10:00:00.000Z',
            ageSeconds: 39600,
          },
        ],
      },
    });
    expect(csv).toContain(
      `\r\nopen,643,,5.00,,invoice,${cell},,created,2026-01-15T10:00:00.000Z,39600,,,,\r\n`,
    );
  });

  it('never alters an amount, even a negative fee', () => {
    expect(dailyReportCsv(base)).toContain('payment_fees,643,1,-1.50,1,');
  });
});

describe('reportDayProblem', () => {
  it.each(['2026-01-15', '2024-02-29', '2000-01-01'])('accepts %s', (d) => {
    expect(reportDayProblem(d)).toBeNull();
  });
  it.each([
    '2026-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-01-32',
    '1999-12-31',
    '2026-1-15',
    '2026-01-15\n',
    '٢٠٢٦-01-15',
    '',
    20260115,
    ['2026-01-15'],
    null,
  ])('refuses %j', (d) => {
    expect(reportDayProblem(d)).not.toBeNull();
  });
});

describe('dayBefore and reportFileName', () => {
  it('takes the day before in the zone, across month and year ends', () => {
    // 2026-01-01 00:30 in Moscow is still 2025-12-31 in UTC.
    const t = new Date('2025-12-31T21:30:00Z');
    expect(dayBefore(t, 'Europe/Moscow')).toBe('2025-12-31');
    expect(dayBefore(t, 'UTC')).toBe('2025-12-30');
    expect(dayBefore(new Date('2024-03-01T12:00:00Z'), 'UTC')).toBe('2024-02-29');
  });

  it('names the file by day and zone in safe characters', () => {
    expect(reportFileName(base)).toBe('daily-report-2026-01-15-Europe_Moscow.csv');
    expect(reportFileName({ date: '2026-01-15', timeZone: 'Etc/GMT+3' })).toBe(
      'daily-report-2026-01-15-Etc_GMT_3.csv',
    );
  });
});
