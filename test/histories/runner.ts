import { randomBytes } from 'node:crypto';
import { checkInvariants, type InvariantWorld, type Violation } from './invariants';
import { amountOf, describe, minorOf, type ObjectRef, STATUS_PATHS, type Step } from './model';
import { HistoryWorld, PAYOUT_SHOP_ID, SHOP_ID, sleep, type Answer } from './world';

/**
 * Plays a history against a fresh world (its own database, sandbox and service process), lets it
 * settle, and checks the invariants; shortens a failing history by replaying parts of it.
 */

const INVOICE_PAYWAY: Record<string, string> = {
  payer: 'card_core_payin_rub[mock_server,success_with_callback]',
  instant: 'card_core_payin_rub[mock_server,success]',
  rejected: 'card_core_payin_rub[mock_server,rejected_with_callback]',
  dup_notify: 'card_core_payin_rub[sandbox,dup_notify]',
  out_of_order: 'card_core_payin_rub[sandbox,out_of_order]',
  notify_none: 'card_core_payin_rub[sandbox,notify_none]',
  refund_failed: 'card_core_payin_rub[sandbox,refund_failed]',
};
const PAYOUT_PAYWAY: Record<string, string> = {
  success: 'qiwi_topup_rub_to_card[mock_server,success]',
  decline: 'qiwi_topup_rub_to_card[sandbox,decline]',
  reject: 'qiwi_topup_rub_to_card[sandbox,reject]',
};
const ACCOUNT = '4111111111111111';
const RESOLVE_PATH = { invoice: 'invoices', refund: 'refunds', payout: 'payouts' } as const;

export interface RunResult {
  violations: Violation[];
  /** What each step got back, one line each (status codes), for the report. */
  log: string[];
  /** What each step got back (as in `log`, without the step's description). */
  outcomes: string[];
  /** How long each step took, ms: a step left out while shortening keeps its time as a wait. */
  stepMs: number[];
  ledgerCheck: 'checked' | 'absent';
  ms: number;
}

const today = (): string => new Date().toISOString().slice(0, 10);

/** An answer in a few words: its status code and the object's status or the problem's type. */
function brief(a: Answer): string {
  const what = a.body.status ?? a.body.type ?? '';
  return `${a.status} ${String(what).replace(/^https?:\/\/\S*\//, '')}`.trim();
}

class Play {
  /** Every replay gets ids of its own: nothing of an earlier world can be taken for it. */
  private readonly prefix = `h${randomBytes(3).toString('hex')}`;
  readonly invoices = new Set<string>();
  readonly refunds = new Map<string, string>();
  readonly payouts = new Set<string>();
  /**
   * Disputes by logical name: the service's id once recorded, the invoice, and whether the
   * gateway took the chargeback (and did not give it back on a won dispute).
   */
  readonly disputes = new Map<
    string,
    { id: string | null; invoice: string; amount: string; taken: boolean }
  >();
  /** The create bodies, for the shop's conflicting repeats. */
  private readonly bodies = new Map<string, { path: string; body: Record<string, unknown> }>();
  readonly log: string[] = [];

  constructor(readonly world: HistoryWorld) {}

  id(name: string): string {
    return `${this.prefix}-${name}`;
  }

  /** The logical name of a real id, for the shortening pass. */
  nameOf(id: string): string | null {
    for (const [name, d] of this.disputes) if (d.id === id) return name;
    return id.startsWith(`${this.prefix}-`) ? id.slice(this.prefix.length + 1) : null;
  }

  invariantWorld(): InvariantWorld {
    return {
      admin: (m, p, b) => this.world.admin(m, p, b),
      api: (m, p, b) => this.world.api(m, p, b),
      sandbox: this.world.sandbox,
      paymentShopId: SHOP_ID,
      agentShopId: PAYOUT_SHOP_ID,
    };
  }

  private async fault(path: string, fault: string, times = 1): Promise<void> {
    await this.world.control('POST', '/faults', { path, fault, times });
  }

  /** The shop's client: a lost answer, a 5xx or "in progress" is repeated, same id, same body. */
  private async create(path: string, body: Record<string, unknown>): Promise<Answer> {
    let a = await this.world.api('POST', path, body);
    for (let i = 0; i < 2; i++) {
      const inProgress = a.status === 409 && /progress/i.test(JSON.stringify(a.body));
      if (!(a.status === 0 || a.status >= 500 || inProgress)) break;
      await sleep(300);
      a = await this.world.api('POST', path, body);
    }
    return a;
  }

  private async controlQuiet(method: string, path: string, body?: unknown): Promise<string> {
    try {
      await this.world.control(method, path, body);
      return 'ok';
    } catch (e) {
      return (e as Error).message.replace(/^sandbox \S+ \S+: /, '').slice(0, 3);
    }
  }

  /** The object's status as the service holds it now (no gateway call). */
  private async statusOf(o: ObjectRef): Promise<string> {
    const id = encodeURIComponent(this.id(o.name));
    if (o.type === 'invoice')
      return String((await this.world.api('GET', `/api/v1/invoices/${id}`)).body.status);
    if (o.type === 'payout')
      return String((await this.world.api('GET', `/api/v1/payouts/${id}`)).body.status);
    const invoice = this.refunds.get(this.id(o.name));
    if (invoice === undefined) return 'absent';
    const list = await this.world.api(
      'GET',
      `/api/v1/invoices/${encodeURIComponent(invoice)}/refunds?limit=500`,
    );
    const items = (list.body.items ?? []) as Array<Record<string, unknown>>;
    return String(items.find((r) => r.shopRefundId === this.id(o.name))?.status ?? 'absent');
  }

  private objectPath(o: ObjectRef): string {
    return `/api/v1/admin/${RESOLVE_PATH[o.type]}/${encodeURIComponent(this.id(o.name))}/resolve`;
  }

  async step(step: Step): Promise<string> {
    if (!this.world.running) await this.world.start();
    switch (step.do) {
      case 'invoice': {
        const shopOrderId = this.id(step.name);
        const body = {
          shopOrderId,
          amount: step.amount,
          currency: 643,
          payway: INVOICE_PAYWAY[step.kind],
          ...(step.twoStep ? { twoStep: true } : {}),
        };
        this.invoices.add(shopOrderId);
        this.bodies.set(shopOrderId, { path: '/api/v1/invoices', body });
        if (step.fault)
          await this.fault(step.twoStep ? 'invoice/hold' : 'invoice/create', step.fault);
        const a = await this.create('/api/v1/invoices', body);
        return brief(a);
      }
      case 'pay':
      case 'decline':
        return this.controlQuiet(
          'POST',
          `/invoices/${encodeURIComponent(this.id(step.invoice))}/${step.do}`,
        );
      case 'charge':
      case 'unhold': {
        const a = await this.world.api(
          'POST',
          `/api/v1/invoices/${encodeURIComponent(this.id(step.invoice))}/${step.do}`,
        );
        return brief(a);
      }
      case 'refund': {
        const shopRefundId = this.id(step.name);
        const path = `/api/v1/invoices/${encodeURIComponent(this.id(step.invoice))}/refunds`;
        const body = { shopRefundId, amount: step.amount };
        this.refunds.set(shopRefundId, this.id(step.invoice));
        this.bodies.set(shopRefundId, { path, body });
        if (step.fault) await this.fault('invoice/create-refund', step.fault);
        const a = await this.create(path, body);
        return brief(a);
      }
      case 'refunds-concurrent': {
        const path = `/api/v1/invoices/${encodeURIComponent(this.id(step.invoice))}/refunds`;
        const answers = await Promise.all(
          step.names.map((name, i) => {
            const shopRefundId = this.id(name);
            const body = { shopRefundId, amount: step.amounts[i] };
            this.refunds.set(shopRefundId, this.id(step.invoice));
            this.bodies.set(shopRefundId, { path, body });
            return this.create(path, body);
          }),
        );
        return answers.map((a) => a.status).join(',');
      }
      case 'payout': {
        const shopPaymentId = this.id(step.name);
        const body = {
          shopPaymentId,
          amount: step.amount,
          amountType: step.amountType,
          shopCurrency: 643,
          payway: PAYOUT_PAYWAY[step.scenario],
          account: ACCOUNT,
        };
        this.payouts.add(shopPaymentId);
        this.bodies.set(shopPaymentId, { path: '/api/v1/payouts', body });
        if (step.statusCallsFail)
          for (const path of STATUS_PATHS.payout) await this.fault(path, 'http500', 40);
        if (step.fault) await this.fault('withdraw/create', step.fault);
        const a = await this.create('/api/v1/payouts', body);
        return brief(a);
      }
      case 'approve': {
        const a = await this.world.admin(
          'POST',
          `/api/v1/admin/payouts/${encodeURIComponent(this.id(step.payout))}/approve`,
          {},
        );
        return brief(a);
      }
      case 'reject': {
        const a = await this.world.admin(
          'POST',
          `/api/v1/admin/payouts/${encodeURIComponent(this.id(step.payout))}/reject`,
          {
            reason: 'the history rejects it',
          },
        );
        return brief(a);
      }
      case 'batch': {
        const rows = step.rows.map((r) => {
          const shopPaymentId = this.id(r.name);
          this.payouts.add(shopPaymentId);
          return {
            shopPaymentId,
            amount: r.amount,
            amountType: 'ps_amount',
            shopCurrency: 643,
            payway: PAYOUT_PAYWAY[r.scenario],
            account: ACCOUNT,
          };
        });
        for (const r of rows)
          this.bodies.set(r.shopPaymentId, { path: '/api/v1/payouts', body: r });
        const a = await this.world.api('POST', '/api/v1/payouts/batches', {
          batchId: this.id(step.name),
          rows,
        });
        return `${a.status}`;
      }
      case 'cancel-batch': {
        const a = await this.world.api(
          'POST',
          `/api/v1/payouts/batches/${encodeURIComponent(this.id(step.batch))}/cancel`,
        );
        return `${a.status}`;
      }
      case 'resend-notification':
        return this.controlQuiet('POST', '/notifications/resend', {
          shop_order_id: this.id(step.invoice),
          times: step.times,
        });
      case 'lose-notifications':
        return this.controlQuiet('POST', '/settings', { suppressNotifications: step.on });
      case 'fault':
        return this.controlQuiet('POST', '/faults', {
          path: step.path,
          fault: step.fault,
          times: step.times,
        });
      case 'slow-gateway':
        return this.controlQuiet('POST', '/settings', { latencyMs: step.latencyMs });
      case 'restate': {
        const kind = { invoice: 'invoices', refund: 'refunds', payout: 'payouts' }[
          step.object.type
        ];
        return this.controlQuiet(
          'POST',
          `/${kind}/${encodeURIComponent(this.id(step.object.name))}/restate`,
          {
            status: step.object.type === 'refund' ? 'FAILED' : 6,
          },
        );
      }
      case 'recheck': {
        const a = await this.world.admin('POST', this.objectPath(step.object), {
          action: 'recheck',
        });
        return brief(a);
      }
      case 'flag': {
        const made = this.bodies.get(this.id(step.object.name));
        if (!made) return 'nothing to repeat';
        const other = amountOf(minorOf(String(made.body.amount)) + 1);
        const a = await this.world.api('POST', made.path, { ...made.body, amount: other });
        return brief(a);
      }
      case 'accept': {
        const unreachable = step.gateway === 'unreachable';
        if (unreachable)
          for (const path of STATUS_PATHS[step.object.type]) await this.fault(path, 'http500', 8);
        const before = await this.statusOf(step.object);
        const a = await this.world.admin('POST', this.objectPath(step.object), {
          action: 'accept',
          status: step.status,
          note: 'the history accepts it',
        });
        if (unreachable) await this.world.control('DELETE', '/faults');
        return `${brief(a)} (from ${before})`;
      }
      case 'top-up': {
        await this.world.control('POST', '/balances/top-up', {
          currency: 643,
          amount: step.amount,
        });
        const a = await this.world.admin('POST', '/api/v1/admin/ledger/adjustments', {
          account: 'agent_available',
          currency: 643,
          amount: step.amount,
          note: 'agent shop top-up sent to the gateway',
        });
        return `${a.status}`;
      }
      case 'reconcile': {
        const a = await this.world.admin('POST', '/api/v1/admin/reconciliations', {
          date: today(),
        });
        return brief(a);
      }
      case 'restart': {
        if (step.during) {
          const inFlight = this.world.admin('POST', this.objectPath(step.during), {
            action: 'recheck',
          });
          await sleep(15);
          await this.world.kill();
          await inFlight;
        } else await this.world.kill();
        await this.world.start();
        return 'restarted';
      }
      case 'wait':
        await sleep(step.ms);
        return 'ok';
      case 'dispute': {
        const invoice = this.id(step.invoice);
        const d = { id: null as string | null, invoice, amount: step.amount, taken: false };
        this.disputes.set(step.name, d);
        // The operator's repeat of a lost answer is the same request (the gateway's reference).
        const body = {
          amount: step.amount,
          reason: 'chargeback reported by the gateway manager',
          reportedAt: new Date().toISOString(),
          gatewayReference: this.id(step.name),
          note: 'the history records it',
        };
        // The operator looks at the invoice first (the service asks the gateway about it).
        await this.world.api('GET', `/api/v1/invoices/${encodeURIComponent(invoice)}?refresh=true`);
        const path = `/api/v1/admin/invoices/${encodeURIComponent(invoice)}/disputes`;
        let a = await this.world.admin('POST', path, body);
        for (let i = 0; i < 2 && (a.status === 0 || a.status >= 500); i++) {
          await sleep(300);
          a = await this.world.admin('POST', path, body);
        }
        if (a.status !== 201) return brief(a);
        d.id = String(a.body.id);
        const taken = await this.controlQuiet(
          'POST',
          `/invoices/${encodeURIComponent(invoice)}/chargeback`,
          { amount: step.amount },
        );
        d.taken = taken === 'ok';
        return `${brief(a)}, gateway chargeback ${taken}`;
      }
      case 'resolve-dispute': {
        const d = this.disputes.get(step.dispute);
        if (!d || d.id === null) return 'no dispute recorded';
        // The operator records the gateway's decision: one never taken is won.
        const outcome = d.taken ? step.outcome : 'won';
        const a = await this.world.admin(
          'POST',
          `/api/v1/admin/disputes/${encodeURIComponent(d.id)}/resolve`,
          { outcome, note: 'the history resolves it' },
        );
        if (a.status === 200 && outcome === 'won' && d.taken) {
          const back = await this.controlQuiet('POST', '/balances/drift', {
            currency: 643,
            amount: d.amount,
            shopId: SHOP_ID,
          });
          if (back === 'ok') d.taken = false;
          return `${brief(a)}, gateway gives it back ${back}`;
        }
        return `${brief(a)}${outcome !== step.outcome ? ` (as ${outcome}: the gateway never took it)` : ''}`;
      }
    }
  }

  /** Status and flag of every tracked object: the settle loop stops once this stops moving. */
  private async snapshot(): Promise<{ text: string; open: Array<() => Promise<unknown>> }> {
    const parts: string[] = [];
    const open: Array<() => Promise<unknown>> = [];
    const enc = encodeURIComponent;
    for (const id of this.invoices) {
      const a = await this.world.api('GET', `/api/v1/invoices/${enc(id)}`);
      parts.push(`${id}:${String(a.body.status)}:${String(a.body.needsAttention)}`);
      if (
        a.status === 200 &&
        !['succeeded', 'rejected', 'unheld', 'held'].includes(String(a.body.status))
      )
        open.push(() => this.world.api('GET', `/api/v1/invoices/${enc(id)}?refresh=true`));
    }
    const invoicesOfRefunds = new Set(this.refunds.values());
    for (const inv of invoicesOfRefunds) {
      const a = await this.world.api('GET', `/api/v1/invoices/${enc(inv)}/refunds?limit=500`);
      const items = (a.body.items ?? []) as Array<Record<string, unknown>>;
      for (const r of items)
        parts.push(`${String(r.shopRefundId)}:${String(r.status)}:${String(r.needsAttention)}`);
      if (items.some((r) => r.status === 'WAITING'))
        open.push(() => this.world.api('GET', `/api/v1/invoices/${enc(inv)}/refunds?refresh=true`));
    }
    for (const id of this.payouts) {
      const a = await this.world.api('GET', `/api/v1/payouts/${enc(id)}`);
      parts.push(`${id}:${String(a.body.status)}:${String(a.body.needsAttention)}`);
      if (
        a.status === 200 &&
        !['succeeded', 'failed', 'rejected', 'cancelled', 'awaiting_approval'].includes(
          String(a.body.status),
        )
      )
        open.push(() => this.world.admin('POST', `/api/v1/admin/payouts/${enc(id)}/reconcile`, {}));
    }
    return { text: parts.join('|'), open };
  }

  /**
   * The settle phase: the gateway works normally again, every notification it owes arrives, open
   * objects are asked about and a reconciliation runs, until nothing moves (bounded).
   */
  async settle(maxMs: number): Promise<void> {
    if (!this.world.running) await this.world.start();
    await this.world.control('DELETE', '/faults');
    await this.world.control('POST', '/settings', { suppressNotifications: false, latencyMs: 0 });
    for (const id of this.invoices)
      await this.controlQuiet('POST', '/notifications/resend', { shop_order_id: id });
    const until = Date.now() + maxMs;
    let last = '';
    let quiet = 0;
    let reconciled = false;
    while (Date.now() < until) {
      await sleep(700);
      const snap = await this.snapshot();
      for (const ask of snap.open) await ask();
      if (snap.text === last && snap.open.length === 0) quiet += 1;
      else quiet = 0;
      last = snap.text;
      if (quiet >= 2) {
        if (reconciled) break;
        await this.world.admin('POST', '/api/v1/admin/reconciliations', { date: today() });
        reconciled = true;
        quiet = 0;
      }
    }
  }
}

export interface RunOptions {
  settleMs?: number;
  /** Called with each step's line as it is played (progress on a long run). */
  onStep?: (line: string) => void;
}

/** One history in a fresh world: play, settle, check. */
export async function runHistory(steps: Step[], opts: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const world = await HistoryWorld.open();
  try {
    await world.start();
    // The first reconciliation opens the agent shop's books from the gateway's balance.
    await world.admin('POST', '/api/v1/admin/reconciliations', { date: today() });
    const play = new Play(world);
    const outcomes: string[] = [];
    const stepMs: number[] = [];
    for (const [i, step] of steps.entries()) {
      const t0 = Date.now();
      const got = await play.step(step);
      stepMs.push(Date.now() - t0 + 40);
      outcomes.push(got);
      const line = `${String(i + 1).padStart(3)}. ${describe(step)} → ${got}`;
      play.log.push(line);
      opts.onStep?.(line);
      await sleep(40);
    }
    await play.settle(opts.settleMs ?? 40_000);
    const report = await checkInvariants(
      play.invariantWorld(),
      {
        invoices: play.invoices,
        refunds: play.refunds,
        payouts: play.payouts,
        disputes: [...play.disputes.values()].flatMap((d) =>
          d.id === null ? [] : [[d.id, { invoice: d.invoice, taken: d.taken }] as const],
        ),
        corrected: new Set(
          steps.flatMap((s) =>
            s.do === 'accept' && s.object.type === 'refund'
              ? [play.refunds.get(play.id(s.object.name)) ?? '']
              : [],
          ),
        ),
      },
      { settled: true },
    );
    // Name objects by their logical names, so a report reads against the step list.
    const violations = report.violations.map((v) => ({
      ...v,
      object: v.object?.replace(/\S+$/, (id) => play.nameOf(id) ?? id),
      detail: v.detail.split(play.id('')).join(''),
    }));
    return {
      violations,
      log: play.log,
      outcomes,
      stepMs,
      ledgerCheck: report.ledgerCheck,
      ms: Date.now() - started,
    };
  } finally {
    await world.close();
  }
}

/** The logical object names a step touches (a refund's invoice too). */
function namesOf(step: Step): string[] {
  switch (step.do) {
    case 'invoice':
    case 'payout':
      return [step.name];
    case 'pay':
    case 'decline':
    case 'charge':
    case 'unhold':
    case 'resend-notification':
      return [step.invoice];
    case 'refund':
      return [step.name, step.invoice];
    case 'refunds-concurrent':
      return [...step.names, step.invoice];
    case 'approve':
    case 'reject':
      return [step.payout];
    case 'batch':
      return [step.name, ...step.rows.map((r) => r.name)];
    case 'cancel-batch':
      return [step.batch];
    case 'restate':
    case 'recheck':
    case 'flag':
    case 'accept':
      return [step.object.name];
    case 'restart':
      return step.during ? [step.during.name] : [];
    case 'dispute':
      return [step.name, step.invoice];
    case 'resolve-dispute':
      return [step.dispute];
    default:
      return [];
  }
}

/**
 * The steps kept, each run of left-out steps replaced by a wait as long as they took (bounded),
 * so what the service's own jobs did meanwhile (a poll, the reconciler's first question) still
 * has its time. Waits of under 300 ms are not worth a line.
 */
function keepTime(steps: Step[], stepMs: number[], keep: boolean[]): Step[] {
  const out: Step[] = [];
  let gap = 0;
  const flush = (): void => {
    if (gap >= 300) out.push({ do: 'wait', ms: Math.min(gap, 5000) });
    gap = 0;
  };
  steps.forEach((s, i) => {
    if (keep[i]) {
      flush();
      out.push(s);
    } else gap += stepMs[i] ?? 0;
  });
  flush();
  return out;
}

/** Steps that change how the gateway behaves for whatever comes next. */
const CONDITIONS = new Set<Step['do']>(['fault', 'lose-notifications', 'slow-gateway']);

export interface Shortened {
  steps: Step[];
  result: RunResult;
  replays: number;
}

/**
 * What a shortened history must keep: every numbered issue-46 finding the original showed (else
 * every other finding it named), or when it named none, one of the invariants it broke.
 */
function keeps(steps: Step[], failed: RunResult): (steps: Step[], r: RunResult) => boolean {
  const shown = new Set(findingsOf(steps, failed).map((f) => f.split(':')[0]));
  const numbered = [...shown].filter((f) => /^finding \d/.test(f));
  const must = numbered.length > 0 ? numbered : [...shown];
  if (must.length > 0)
    return (s, r) => {
      const now = new Set(findingsOf(s, r).map((f) => f.split(':')[0]));
      return must.every((f) => now.has(f));
    };
  const want = new Set(failed.violations.map((v) => v.invariant));
  return (_s, r) => r.violations.some((v) => want.has(v.invariant));
}

/**
 * A simple shortening pass (delta debugging by hand): first keep only the steps of the objects
 * the violations name (with the refunds' invoices and the gateway conditions), then drop steps
 * one at a time from the end, each candidate replayed in a fresh world; a candidate is kept when
 * it still breaks one of the invariants the original broke. Bounded by `maxReplays`.
 */
export async function shorten(
  steps: Step[],
  failed: RunResult,
  maxReplays: number,
  log: (line: string) => void = () => undefined,
): Promise<Shortened> {
  const stillFails = keeps(steps, failed);
  let best = steps;
  let bestResult = failed;
  let replays = 0;
  const named = new Set(
    failed.violations.map((v) => v.object?.split(' ')[1]).filter((x): x is string => !!x),
  );
  if (named.size > 0) {
    // A refund's invoice comes with it.
    for (const s of steps) if (s.do === 'refund' && named.has(s.name)) named.add(s.invoice);
    for (const s of steps)
      if (s.do === 'refunds-concurrent' && s.names.some((n) => named.has(n))) named.add(s.invoice);
    // A dispute's invoice comes with it, and a disputed invoice's disputes with it.
    for (const s of steps) if (s.do === 'dispute' && named.has(s.name)) named.add(s.invoice);
    for (const s of steps) if (s.do === 'dispute' && named.has(s.invoice)) named.add(s.name);
    const focus = keepTime(
      steps,
      failed.stepMs,
      steps.map((s) => CONDITIONS.has(s.do) || namesOf(s).some((n) => named.has(n))),
    );
    if (focus.length < steps.length) {
      replays += 1;
      const r = await runHistory(focus);
      log(
        `shorten: ${focus.length} steps on ${[...named].join(', ')}: ${r.violations.length > 0 ? 'still fails' : 'passes'}`,
      );
      if (stillFails(focus, r)) {
        best = focus;
        bestResult = r;
      }
    }
  }
  for (let i = best.length - 1; i >= 0 && replays < maxReplays; i--) {
    const candidate = keepTime(
      best,
      bestResult.stepMs,
      best.map((_, j) => j !== i),
    );
    if (candidate.length === best.length && best[i].do === 'wait' && i > 0) {
      // The step was a wait already: leave it out entirely.
      candidate.splice(i, 1);
    }
    replays += 1;
    const r = await runHistory(candidate);
    const keep = stillFails(candidate, r);
    log(
      `shorten: without step ${i + 1} (${describe(best[i])}): ${keep ? 'still fails, dropped' : 'needed'}`,
    );
    if (keep) {
      best = candidate;
      bestResult = r;
    }
  }
  return { steps: best, result: bestResult, replays };
}

const FINAL: Record<ObjectRef['type'], readonly string[]> = {
  invoice: ['succeeded', 'rejected', 'unheld'],
  refund: ['SUCCESS', 'FAILED'],
  payout: ['succeeded', 'failed', 'rejected', 'cancelled'],
};

/**
 * Which of the known findings (docs/histories.md) a failed history shows, read off its steps, their answers and
 * the violations: finding 1, an Accept (answered 200) that moved an object from one final status
 * to another, with that object's books or events then wrong (or the books apart); finding 2, an
 * Accept `failed`/`rejected` of a payout whose create had a fault and whose status calls failed,
 * on a payout the gateway paid. Anything else is named by its invariants only.
 */
export function findingsOf(steps: Step[], result: RunResult): string[] {
  const out: string[] = [];
  const named = new Set(result.violations.map((v) => v.object?.split(' ')[1]));
  const booksApart = result.violations.some((v) => v.invariant === 'books');
  for (const [i, step] of steps.entries()) {
    if (step.do !== 'accept') continue;
    const got = result.outcomes[i] ?? '';
    if (!got.startsWith('200')) continue;
    const from = /\(from (\S+)\)$/.exec(got)?.[1] ?? '?';
    const o = step.object;
    const hit = named.has(o.name);
    if (FINAL[o.type].includes(from) && from !== step.status && (hit || booksApart))
      out.push(
        `finding 1: step ${i + 1} Accept moved ${o.type} ${o.name} from ${from} to ${step.status}${step.gateway === 'unreachable' ? ' (gateway unreachable)' : ''}; its books or events then wrong`,
      );
    const absentThere = result.violations.some(
      (v) => v.object === `${o.type} ${o.name}` && /record \(absent\)/.test(v.detail),
    );
    if (
      hit &&
      !FINAL[o.type].includes(from) &&
      (step.gateway === 'unreachable' || absentThere) &&
      !(o.type === 'payout' && (step.status === 'failed' || step.status === 'rejected'))
    )
      out.push(
        `without the gateway's word: step ${i + 1} Accept ${step.status} of ${o.type} ${o.name} (was ${from}; ${step.gateway === 'unreachable' ? 'status calls failing' : 'the gateway has no record'}); its books or status then wrong`,
      );
    const create = steps.find((s) => s.do === 'payout' && s.name === o.name);
    if (
      o.type === 'payout' &&
      hit &&
      (step.status === 'failed' || step.status === 'rejected') &&
      step.gateway === 'unreachable' &&
      !FINAL.payout.includes(from) &&
      create?.do === 'payout' &&
      create.fault !== undefined &&
      result.violations.some((v) => v.object === `payout ${o.name}` && /paid/.test(v.detail))
    )
      out.push(
        `finding 2: step ${i + 1} Accept ${step.status} of payout ${o.name} (create hit by ${create.fault}, status calls failing, was ${from}) while the gateway paid it`,
      );
  }
  return out;
}
