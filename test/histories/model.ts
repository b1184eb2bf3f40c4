/**
 * The history search's steps and their generator: a history is a plain list of steps naming
 * objects by short logical names (`i3`, `r1`, `p2`, `b1`), drawn from a seeded PRNG, so a seed
 * gives the same list on every machine and a list can be printed, shortened and replayed.
 */

export type InvoiceKind =
  | 'payer' // the payer page; the history presses Pay or Decline; the outcome is notified
  | 'instant' // paid at once without the payer, no notification (the service must ask)
  | 'rejected' // rejected at once, notified
  | 'dup_notify' // every notification delivered twice
  | 'out_of_order' // held-back notifications after the final one
  | 'notify_none' // the payer page, no notifications at all
  | 'refund_failed'; // paid at once; its refunds end FAILED

export type PayoutScenario = 'success' | 'decline' | 'reject';

/** A gateway fault queued for the next call(s) of one path (src/sandbox/faults.ts). */
export type Fault =
  'timeout_done' | 'timeout_not_done' | 'http500' | 'reset' | 'reset_done' | 'nonfatal' | 'fatal';

export type ObjectRef = { type: 'invoice' | 'refund' | 'payout'; name: string };

export type Step =
  | {
      do: 'invoice';
      name: string;
      kind: InvoiceKind;
      twoStep: boolean;
      amount: string;
      /** A fault on the create call itself (its answer lost, refused, …). */
      fault?: Fault;
    }
  | { do: 'pay' | 'decline'; invoice: string }
  | { do: 'charge' | 'unhold'; invoice: string }
  | { do: 'refund'; name: string; invoice: string; amount: string; fault?: Fault }
  | { do: 'refunds-concurrent'; names: string[]; invoice: string; amounts: string[] }
  | {
      do: 'payout';
      name: string;
      amount: string;
      amountType: 'ps_amount' | 'shop_amount';
      scenario: PayoutScenario;
      fault?: Fault;
      /** From its create on, the gateway's payout status calls fail (until an accept or settle). */
      statusCallsFail?: boolean;
    }
  | { do: 'approve'; payout: string }
  | { do: 'reject'; payout: string }
  | {
      do: 'batch';
      name: string;
      rows: Array<{ name: string; amount: string; scenario: PayoutScenario }>;
    }
  | { do: 'cancel-batch'; batch: string }
  | { do: 'resend-notification'; invoice: string; times: number }
  | { do: 'lose-notifications'; on: boolean }
  | { do: 'fault'; path: string; fault: Fault; times: number }
  | { do: 'slow-gateway'; latencyMs: number }
  | { do: 'restate'; object: ObjectRef }
  | { do: 'recheck'; object: ObjectRef }
  | { do: 'flag'; object: ObjectRef }
  | {
      do: 'accept';
      object: ObjectRef;
      status: string;
      /** `unreachable`: the gateway's status calls fail while the operator accepts. */
      gateway: 'asked' | 'unreachable';
    }
  | { do: 'top-up'; amount: string }
  | { do: 'reconcile' }
  | { do: 'restart'; during?: ObjectRef }
  | { do: 'wait'; ms: number }
  /**
   * The gateway's manager reports a chargeback of a paid invoice: the operator records the
   * dispute, and once it is recorded the gateway takes the amount off the payment shop's
   * balance (`POST /sandbox/invoices/…/chargeback`).
   */
  | { do: 'dispute'; name: string; invoice: string; amount: string }
  /**
   * The gateway decides a dispute and the operator records it: lost or accepted, the chargeback
   * stays; won, the gateway gives the amount back (a chargeback the gateway never took is won).
   */
  | { do: 'resolve-dispute'; dispute: string; outcome: 'won' | 'lost' | 'accepted' };

export interface GeneratorFlags {
  /** Operator accepts (with and without the gateway's word). */
  accept: boolean;
  /** The gateway restating a final status (a reversal). */
  restate: boolean;
  /** Gateway faults: lost answers, resets, 5xx, slow answers, failing status calls. */
  faults: boolean;
  /** SIGKILL and restart of the service. */
  restarts: boolean;
  /** Chargebacks: disputes recorded on paid invoices and resolved (interleaved, see withDisputes). */
  disputes: boolean;
}

export const ALL_ON: GeneratorFlags = {
  accept: true,
  restate: true,
  faults: true,
  restarts: true,
  disputes: true,
};

/** mulberry32: a small, fast, seedable PRNG (32-bit state), good enough to draw histories. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  weighted<T>(options: ReadonlyArray<[number, T]>): T {
    const total = options.reduce((s, [w]) => s + w, 0);
    let x = this.next() * total;
    for (const [w, v] of options) {
      x -= w;
      if (x < 0) return v;
    }
    return options[options.length - 1][1];
  }
}

/** Whole minor units (kopecks) as a decimal string: no float ever touches an amount. */
export function amountOf(minor: number): string {
  const m = Math.trunc(minor);
  return `${Math.floor(m / 100)}.${String(m % 100).padStart(2, '0')}`;
}

export const minorOf = (amount: string): number => {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
};

interface GenInvoice {
  name: string;
  kind: InvoiceKind;
  twoStep: boolean;
  minor: number;
  /** Money may be paid at the gateway (paid, held or instant): refunds and restates make sense. */
  paid: boolean;
}

const FINALS = {
  invoice: ['succeeded', 'rejected', 'unheld'],
  refund: ['SUCCESS', 'FAILED'],
  payout: ['succeeded', 'failed', 'rejected'],
} as const;

/** The status a restated object has at the gateway, in the service's words. */
const RESTATED: Record<ObjectRef['type'], string> = {
  invoice: 'rejected',
  refund: 'FAILED',
  payout: 'rejected',
};

/** The paths a fault may hit while the operator asks the gateway about an object. */
export const STATUS_PATHS: Record<ObjectRef['type'], string[]> = {
  invoice: ['invoice/check'],
  refund: ['invoice/get-refunds'],
  payout: ['withdraw/status', 'withdraw/shop_payment_status'],
};

/**
 * A random history of about `length` steps. The weights keep money moving (creates and payer
 * actions are most of it) while every kind of fault and operator act turns up in a few dozen
 * steps; an accept is usually preceded by what puts the object in front of an operator.
 */
export function generate(seed: number, length: number, flags: GeneratorFlags): Step[] {
  const rng = new Rng(seed);
  const steps: Step[] = [];
  const invoices: GenInvoice[] = [];
  const refunds: string[] = [];
  const payouts: Array<{ name: string; big: boolean }> = [];
  const batches: string[] = [];
  let n = { i: 0, r: 0, p: 0, b: 0 };
  let notificationsLost = false;
  /** Objects whose create was hit by a fault: where an operator is most often called. */
  const faulted = new Set<string>();
  const nextName = (k: keyof typeof n): string => {
    n = { ...n, [k]: n[k] + 1 };
    return `${k}${n[k]}`;
  };
  const anyObject = (): ObjectRef | null => {
    const all: ObjectRef[] = [
      ...invoices.map((i) => ({ type: 'invoice' as const, name: i.name })),
      ...refunds.map((r) => ({ type: 'refund' as const, name: r })),
      ...payouts.map((p) => ({ type: 'payout' as const, name: p.name })),
    ];
    return all.length === 0 ? null : rng.pick(all);
  };
  /** An operator's object: a payout or one whose create went wrong is likelier to need one. */
  const operatorObject = (): ObjectRef | null => {
    const all: Array<[number, ObjectRef]> = [
      ...invoices.map((i): [number, ObjectRef] => [1, { type: 'invoice', name: i.name }]),
      ...refunds.map((r): [number, ObjectRef] => [1, { type: 'refund', name: r }]),
      ...payouts.map((p): [number, ObjectRef] => [2, { type: 'payout', name: p.name }]),
    ].map(([w, o]): [number, ObjectRef] => [faulted.has(o.name) ? w * 4 : w, o]);
    return all.length === 0 ? null : rng.weighted(all);
  };
  const acceptStatus = (o: ObjectRef): string =>
    o.type === 'payout'
      ? rng.weighted<string>([
          [2, 'failed'],
          [1, 'succeeded'],
          [1, 'rejected'],
        ])
      : rng.pick(FINALS[o.type]);
  /**
   * An operator called to an object whose create went wrong, now and then right away: the
   * object is flagged and the operator accepts a final status, asking a gateway that may not
   * answer.
   */
  const react = (o: ObjectRef, fault: Fault | undefined): void => {
    if (fault === undefined || !flags.accept || !rng.chance(0.35)) return;
    steps.push({ do: 'flag', object: o });
    steps.push({
      do: 'accept',
      object: o,
      status: acceptStatus(o),
      gateway: rng.chance(0.6) ? 'unreachable' : 'asked',
    });
  };
  const withFault = (name: string, fault: Fault | undefined): Fault | undefined => {
    if (fault !== undefined) faulted.add(name);
    return fault;
  };
  const createFault = (): Fault | undefined =>
    flags.faults && rng.chance(0.15)
      ? rng.pick([
          'timeout_done',
          'timeout_not_done',
          'http500',
          'reset',
          'reset_done',
          'nonfatal',
          'fatal',
        ] as const)
      : undefined;

  while (steps.length < length) {
    const paidInvoices = invoices.filter((i) => i.paid && !i.twoStep);
    const held = invoices.filter((i) => i.twoStep);
    const payer = invoices.filter((i) =>
      ['payer', 'dup_notify', 'out_of_order', 'notify_none'].includes(i.kind),
    );
    const choice = rng.weighted<string>([
      [14, 'invoice'],
      [payer.length > 0 ? 10 : 0, 'payer'],
      [held.length > 0 ? 4 : 0, 'hold-settle'],
      [paidInvoices.length > 0 ? 8 : 0, 'refund'],
      [paidInvoices.length > 0 ? 2 : 0, 'refunds-concurrent'],
      [10, 'payout'],
      [payouts.some((p) => p.big) ? 3 : 0, 'approval'],
      [2, 'batch'],
      [batches.length > 0 ? 1 : 0, 'cancel-batch'],
      [invoices.length > 0 ? 3 : 0, 'resend-notification'],
      [2, 'lose-notifications'],
      [flags.faults ? 4 : 0, 'fault'],
      [flags.faults ? 1 : 0, 'slow-gateway'],
      [flags.restate && (paidInvoices.length > 0 || payouts.length > 0) ? 3 : 0, 'restate'],
      [invoices.length + payouts.length > 0 ? 4 : 0, 'recheck'],
      [flags.accept && invoices.length + payouts.length > 0 ? 7 : 0, 'accept'],
      [1, 'top-up'],
      [2, 'reconcile'],
      [flags.restarts ? 1.5 : 0, 'restart'],
      [2, 'wait'],
    ]);
    switch (choice) {
      case 'invoice': {
        const twoStep = rng.chance(0.2);
        const kind: InvoiceKind = twoStep
          ? 'payer'
          : rng.weighted<InvoiceKind>([
              [5, 'payer'],
              [4, 'instant'],
              [1, 'rejected'],
              [1, 'dup_notify'],
              [1, 'out_of_order'],
              [1, 'notify_none'],
              [1, 'refund_failed'],
            ]);
        const name = nextName('i');
        const minor = rng.int(100_00, 3999_99);
        steps.push({
          do: 'invoice',
          name,
          kind,
          twoStep,
          amount: amountOf(minor),
          fault: withFault(name, createFault()),
        });
        invoices.push({
          name,
          kind,
          twoStep,
          minor,
          paid: kind === 'instant' || kind === 'refund_failed',
        });
        react({ type: 'invoice', name }, (steps[steps.length - 1] as { fault?: Fault }).fault);
        break;
      }
      case 'payer': {
        const inv = rng.pick(payer);
        const action = rng.chance(0.8) ? 'pay' : 'decline';
        steps.push({ do: action, invoice: inv.name });
        if (action === 'pay') inv.paid = true;
        break;
      }
      case 'hold-settle': {
        const inv = rng.pick(held);
        steps.push({ do: rng.chance(0.6) ? 'charge' : 'unhold', invoice: inv.name });
        break;
      }
      case 'refund': {
        const inv = rng.pick(paidInvoices);
        const name = nextName('r');
        const minor = rng.chance(0.2)
          ? inv.minor
          : rng.int(1_00, Math.max(1_00, Math.floor(inv.minor / 2)));
        steps.push({
          do: 'refund',
          name,
          invoice: inv.name,
          amount: amountOf(minor),
          fault: withFault(name, createFault()),
        });
        refunds.push(name);
        react({ type: 'refund', name }, (steps[steps.length - 1] as { fault?: Fault }).fault);
        break;
      }
      case 'refunds-concurrent': {
        const inv = rng.pick(paidInvoices);
        const k = rng.int(2, 4);
        const names = Array.from({ length: k }, () => nextName('r'));
        // Together more than the room (each a third or so): the service must refuse the excess.
        const amounts = names.map(() =>
          amountOf(rng.int(Math.floor(inv.minor / 4), Math.floor(inv.minor / 2))),
        );
        steps.push({ do: 'refunds-concurrent', names, invoice: inv.name, amounts });
        refunds.push(...names);
        break;
      }
      case 'payout': {
        const name = nextName('p');
        const big = rng.chance(0.15);
        const minor = big ? rng.int(5000_00, 6999_99) : rng.int(100_00, 2999_99);
        const scenario = rng.weighted<PayoutScenario>([
          [6, 'success'],
          [1, 'decline'],
          [1, 'reject'],
        ]);
        const fault = withFault(name, createFault());
        const lost = fault === 'timeout_done' || fault === 'reset_done' || fault === 'nonfatal';
        steps.push({
          do: 'payout',
          name,
          amount: amountOf(minor),
          amountType: rng.chance(0.5) ? 'ps_amount' : 'shop_amount',
          scenario,
          fault,
          ...(lost && rng.chance(0.5) ? { statusCallsFail: true } : {}),
        });
        payouts.push({ name, big });
        react({ type: 'payout', name }, fault);
        break;
      }
      case 'approval': {
        const p = rng.pick(payouts.filter((x) => x.big));
        steps.push({ do: rng.chance(0.7) ? 'approve' : 'reject', payout: p.name });
        break;
      }
      case 'batch': {
        const name = nextName('b');
        const rows = Array.from({ length: rng.int(2, 4) }, () => {
          const row = nextName('p');
          payouts.push({ name: row, big: false });
          return {
            name: row,
            amount: amountOf(rng.int(100_00, 999_99)),
            scenario: rng.weighted<PayoutScenario>([
              [5, 'success'],
              [1, 'decline'],
            ]),
          };
        });
        steps.push({ do: 'batch', name, rows });
        batches.push(name);
        break;
      }
      case 'cancel-batch':
        steps.push({ do: 'cancel-batch', batch: rng.pick(batches) });
        break;
      case 'resend-notification':
        steps.push({
          do: 'resend-notification',
          invoice: rng.pick(invoices).name,
          times: rng.int(1, 3),
        });
        break;
      case 'lose-notifications':
        notificationsLost = !notificationsLost;
        steps.push({ do: 'lose-notifications', on: notificationsLost });
        break;
      case 'fault': {
        const path = rng.pick([
          'invoice/check',
          'invoice/get-refunds',
          'withdraw/status',
          'withdraw/shop_payment_status',
          'shop_balance',
          'invoice/create',
          'withdraw/create',
          'invoice/create-refund',
        ]);
        const fault = path.includes('create')
          ? rng.pick(['timeout_done', 'http500', 'reset', 'reset_done', 'nonfatal'] as const)
          : rng.pick(['http500', 'reset', 'timeout_not_done'] as const);
        steps.push({ do: 'fault', path, fault, times: rng.int(1, 3) });
        break;
      }
      case 'slow-gateway':
        steps.push({ do: 'slow-gateway', latencyMs: rng.pick([0, 0, 200, 600]) });
        break;
      case 'restate': {
        const options: ObjectRef[] = [
          ...paidInvoices.map((i) => ({ type: 'invoice' as const, name: i.name })),
          ...refunds.map((r) => ({ type: 'refund' as const, name: r })),
          ...payouts.map((p) => ({ type: 'payout' as const, name: p.name })),
        ];
        const object = rng.pick(options);
        steps.push({ do: 'restate', object });
        // The usual sequel: the operator (or the watch) asks, and the contradiction is flagged;
        // then the operator takes the gateway's word for it.
        if (rng.chance(0.7)) {
          steps.push({ do: 'recheck', object });
          if (flags.accept && rng.chance(0.5))
            steps.push({
              do: 'accept',
              object,
              status: RESTATED[object.type],
              gateway: 'asked',
            });
        }
        break;
      }
      case 'recheck': {
        const o = anyObject();
        if (o) steps.push({ do: 'recheck', object: o });
        break;
      }
      case 'accept': {
        const o = operatorObject();
        if (!o) break;
        // What puts it in front of an operator: a conflicting repeat of its create.
        if (rng.chance(0.8)) steps.push({ do: 'flag', object: o });
        steps.push({
          do: 'accept',
          object: o,
          status: acceptStatus(o),
          gateway: flags.faults && rng.chance(0.5) ? 'unreachable' : 'asked',
        });
        break;
      }
      case 'top-up':
        steps.push({ do: 'top-up', amount: amountOf(rng.int(1000_00, 20000_00)) });
        break;
      case 'reconcile':
        steps.push({ do: 'reconcile' });
        break;
      case 'restart': {
        const o = anyObject();
        steps.push(o && rng.chance(0.5) ? { do: 'restart', during: o } : { do: 'restart' });
        break;
      }
      case 'wait':
        steps.push({ do: 'wait', ms: rng.pick([200, 500, 1500]) });
        break;
    }
  }
  return flags.disputes ? withDisputes(seed, steps) : steps;
}

/**
 * The history with chargebacks interleaved: after a step that leaves an invoice paid (an
 * instant payment, the payer's Pay, a hold charged), now and then a dispute of part of it, and
 * later its resolution. Drawn from a PRNG of its own (seeded from the seed), so the steps the
 * generator drew are the same with and without disputes: a seed that once found a hole still
 * replays it, with chargebacks around it.
 */
export function withDisputes(seed: number, steps: readonly Step[]): Step[] {
  const rng = new Rng((seed ^ 0x5eedd15) >>> 0);
  const amounts = new Map<string, number>();
  const paid: string[] = [];
  const open: string[] = [];
  const out: Step[] = [];
  let n = 0;
  for (const step of steps) {
    out.push(step);
    if (step.do === 'invoice') {
      amounts.set(step.name, minorOf(step.amount));
      if (!step.twoStep && (step.kind === 'instant' || step.kind === 'refund_failed'))
        paid.push(step.name);
    } else if (step.do === 'pay' || step.do === 'charge') {
      if (!paid.includes(step.invoice)) paid.push(step.invoice);
    }
    if (paid.length > 0 && rng.chance(0.12)) {
      const invoice = rng.pick(paid);
      const minor = amounts.get(invoice) ?? 100_00;
      const name = `d${++n}`;
      out.push({
        do: 'dispute',
        name,
        invoice,
        amount: amountOf(rng.chance(0.2) ? minor : rng.int(1_00, Math.max(1_00, Math.floor(minor / 2)))),
      });
      open.push(name);
    } else if (open.length > 0 && rng.chance(0.15)) {
      const dispute = open.splice(rng.int(0, open.length - 1), 1)[0];
      out.push({
        do: 'resolve-dispute',
        dispute,
        outcome: rng.weighted<'won' | 'lost' | 'accepted'>([
          [2, 'lost'],
          [1, 'accepted'],
          [1, 'won'],
        ]),
      });
    }
  }
  return out;
}

const ref = (o: ObjectRef): string => `${o.type} ${o.name}`;

/** One line per step, for a failure's report. */
export function describe(step: Step): string {
  switch (step.do) {
    case 'invoice':
      return `create invoice ${step.name} ${step.amount} RUB (${step.kind}${step.twoStep ? ', two-step hold' : ''})${step.fault ? `, its create answer hit by ${step.fault}` : ''}`;
    case 'pay':
    case 'decline':
      return `payer presses ${step.do === 'pay' ? 'Pay' : 'Decline'} on invoice ${step.invoice}`;
    case 'charge':
    case 'unhold':
      return `shop ${step.do}s held invoice ${step.invoice}`;
    case 'refund':
      return `refund ${step.name} of ${step.amount} on invoice ${step.invoice}${step.fault ? `, its create hit by ${step.fault}` : ''}`;
    case 'refunds-concurrent':
      return `concurrent refunds ${step.names.map((n, i) => `${n} ${step.amounts[i]}`).join(', ')} on invoice ${step.invoice}`;
    case 'payout':
      return `create payout ${step.name} ${step.amount} (${step.amountType}, gateway outcome ${step.scenario})${step.fault ? `, its create answer hit by ${step.fault}` : ''}${step.statusCallsFail ? ', its status calls failing from then on' : ''}`;
    case 'approve':
      return `admin approves payout ${step.payout}`;
    case 'reject':
      return `admin rejects payout ${step.payout}`;
    case 'batch':
      return `payout batch ${step.name}: ${step.rows.map((r) => `${r.name} ${r.amount} (${r.scenario})`).join(', ')}`;
    case 'cancel-batch':
      return `cancel payout batch ${step.batch}`;
    case 'resend-notification':
      return `gateway re-sends invoice ${step.invoice}'s last notification ×${step.times}`;
    case 'lose-notifications':
      return step.on
        ? 'gateway notifications lost from now on'
        : 'gateway notifications delivered again';
    case 'fault':
      return `gateway fault ${step.fault} on the next ${step.times} ${step.path} call(s)`;
    case 'slow-gateway':
      return step.latencyMs === 0
        ? 'gateway answers at full speed'
        : `gateway answers ${step.latencyMs} ms slower`;
    case 'restate':
      return `gateway restates ${ref(step.object)} (paid → ${step.object.type === 'refund' ? 'FAILED' : 'rejected 6'}), no notification`;
    case 'recheck':
      return `operator Recheck on ${ref(step.object)}`;
    case 'flag':
      return `shop repeats the create of ${ref(step.object)} with another amount (conflict: flagged)`;
    case 'accept':
      return `operator Accept ${step.status} on ${ref(step.object)}${step.gateway === 'unreachable' ? " while the gateway's status calls fail" : ''}`;
    case 'top-up':
      return `agent shop topped up ${step.amount} at the gateway, booked by an adjustment`;
    case 'reconcile':
      return 'admin runs a reconciliation';
    case 'restart':
      return step.during
        ? `service SIGKILLed while a call on ${ref(step.during)} is in flight, restarted`
        : 'service SIGKILLed and restarted';
    case 'wait':
      return `wait ${step.ms} ms`;
    case 'dispute':
      return `gateway reports a chargeback ${step.name} of ${step.amount} on invoice ${step.invoice}: the operator records the dispute, the gateway takes the amount`;
    case 'resolve-dispute':
      return `gateway decides dispute ${step.dispute} ${step.outcome}: the operator resolves it${step.outcome === 'won' ? ', the gateway gives the amount back' : ''}`;
  }
}
