import { Inject, Injectable, OnModuleDestroy, Optional } from '@nestjs/common';
import { clock as serviceClock } from '../common/clock';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { lineLogger, logger } from '../common/logger';
import { APP_CONFIG } from '../config/config';
import type { AppConfig, GatewayCall, GatewayConfig, GatewayShopRole } from '../config/config';
import { gatewayCallDuration } from '../metrics/metrics';
import { GatewayError, GatewayTransportError, scrubGatewayText } from './gateway.errors';
import { GatewayShops } from './gateway-shops';
import { type PostAnswer, postText } from './http-post';
import { bindingsOf, type TraceBindings, type Tracing, tracingOf } from '../tracing/tracing';
import type { TransportErrorKind } from './gateway.errors';
import type {
  CheckAccountRequest,
  CheckAccountResult,
  InputPayway,
  InvoiceCheckRecord,
  InvoiceCreateRequest,
  InvoiceCreateResult,
  InvoiceRecord,
  InvoiceTryRequest,
  InvoiceTryResult,
  OutputPayway,
  PaywayGroup,
  PayoutRecord,
  RefundCreateRequest,
  RefundRecord,
  ShopBalance,
  WithdrawCreateRequest,
  WithdrawCreateResult,
  WithdrawTryRequest,
  WithdrawTryResult,
} from './gateway.types';
import { parseExactJson } from './lossless';
import { sign } from './signature';

/** Injection token for the clock used for `now`; defaults to the system clock. */
export const GATEWAY_CLOCK = Symbol('GATEWAY_CLOCK');
export type Clock = () => Date;

type Body = Record<string, unknown>;

/** System error codes raised before a request could reach the gateway. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const DECIMAL = /^\d+(\.\d+)?$/;

/** Idle keep-alive sockets are closed before a typical server would close them under us. */
const IDLE_SOCKET_MS = 4000;

/** `now` as ISO 8601 with an explicit offset, seconds precision: 2026-11-21T17:23:41+03:00. */
export function formatNow(date: Date, offset: string): string {
  const sign = offset.startsWith('-') ? -1 : 1;
  const [hours, minutes] = offset.slice(1).split(':');
  const offsetMs = sign * (Number(hours) * 60 + Number(minutes)) * 60_000;
  return new Date(date.getTime() + offsetMs).toISOString().slice(0, 19) + offset;
}

/**
 * The only way to talk to the gateway: one typed method per call. Each builds the body, fills
 * `shop_id` with the call's shop (CALL_SHOP) and `now`, signs it with that shop's secret over
 * the call's configured signed fields, posts it, parses the answer exactly, and returns the
 * envelope's `data` or throws GatewayError / GatewayTransportError. Nothing is retried here.
 */
@Injectable()
export class GatewayService implements OnModuleDestroy {
  private readonly gateway: GatewayConfig;
  readonly shops: GatewayShops;
  /** Each call's address, built once (the base URL joined with the call's path). */
  private readonly urls = new Map<string, URL>();
  private readonly httpAgent = new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  private readonly httpsAgent = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  private readonly log = logger.child({ component: 'gateway' });
  /** The one line per call (below): values made here only, written in blocks (lineLogger). */
  private readonly callLog = lineLogger('gateway');
  /** Undefined unless OTEL_EXPORTER_OTLP_ENDPOINT is set (src/tracing). */
  private readonly tracing: Tracing | undefined;
  private readonly traceBindings: TraceBindings | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(GATEWAY_CLOCK) private readonly clock: Clock = () => serviceClock.date(),
  ) {
    this.gateway = config.gateway;
    this.shops = new GatewayShops(config.gateway.shops);
    this.tracing = tracingOf(config.otel);
    this.traceBindings = this.tracing ? bindingsOf(this.tracing) : undefined;
  }

  onModuleDestroy(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The gateway id of the shop in that role: what rows of that role are stored and found under. */
  shopId(role: GatewayShopRole): number {
    return this.shops.of(role).shopId;
  }

  // ------------------------------------------------------------ payments

  async tryInvoice(req: InvoiceTryRequest): Promise<InvoiceTryResult> {
    const { shop_order_id, amount, currency, payway, description } = req;
    return this.call('invoice/try', { shop_order_id, amount, currency, payway, description });
  }

  async createInvoice(req: InvoiceCreateRequest): Promise<InvoiceCreateResult> {
    return this.call('invoice/create', this.invoiceBody(req), true);
  }

  /** First step of a two-step payment; same body as createInvoice. */
  async holdInvoice(req: InvoiceCreateRequest): Promise<InvoiceCreateResult> {
    return this.call('invoice/hold', this.invoiceBody(req), true);
  }

  async checkInvoice(shop_order_id: string): Promise<InvoiceCheckRecord> {
    return this.call('invoice/check', { shop_order_id, now: this.now() });
  }

  async chargeInvoice(invoice_id: number): Promise<InvoiceRecord> {
    return this.call('invoice/charge', { invoice_id, now: this.now() });
  }

  async unholdInvoice(invoice_id: number): Promise<InvoiceRecord> {
    return this.call('invoice/unhold', { invoice_id, now: this.now() });
  }

  // ------------------------------------------------------------ refunds

  async createRefund(req: RefundCreateRequest): Promise<RefundRecord> {
    const { invoice_id, amount, shop_refund_id, callback_url } = req;
    return this.call('invoice/create-refund', { invoice_id, amount, shop_refund_id, callback_url });
  }

  async getRefunds(invoice_id: number): Promise<RefundRecord[]> {
    return this.call('invoice/get-refunds', { invoice_id, now: this.now() });
  }

  // ------------------------------------------------------------ shop configuration and balance

  async shopInputConfig(): Promise<PaywayGroup<InputPayway>[]> {
    return this.call('shop_input_config/shop', { now: this.now() });
  }

  async shopOutputConfig(): Promise<PaywayGroup<OutputPayway>[]> {
    return this.call('shop_output_config/shop', { now: this.now() });
  }

  async shopBalance(): Promise<ShopBalance> {
    return this.call('shop_balance', { now: this.now() });
  }

  // ------------------------------------------------------------ payouts

  async tryWithdraw(req: WithdrawTryRequest): Promise<WithdrawTryResult> {
    const { amount, amount_type, payway, shop_currency, account, account_details } = req;
    return this.call('withdraw/try', {
      amount,
      amount_type,
      payway,
      shop_currency,
      account,
      account_details,
    });
  }

  async checkAccount(req: CheckAccountRequest): Promise<CheckAccountResult> {
    const { account, amount, payway, account_details } = req;
    return this.call('check_account', { account, amount, payway, account_details });
  }

  async createWithdraw(req: WithdrawCreateRequest): Promise<WithdrawCreateResult> {
    const {
      shop_payment_id,
      amount,
      amount_type,
      shop_currency,
      payway,
      account,
      account_details,
      description,
    } = req;
    return this.call('withdraw/create', {
      shop_payment_id,
      amount,
      amount_type,
      shop_currency,
      payway,
      account,
      account_details,
      description,
    });
  }

  async withdrawStatus(withdraw_id: number): Promise<PayoutRecord> {
    return this.call('withdraw/status', { withdraw_id, now: this.now() });
  }

  async withdrawShopPaymentStatus(shop_payment_id: string): Promise<PayoutRecord> {
    return this.call('withdraw/shop_payment_status', { shop_payment_id, now: this.now() });
  }

  // ------------------------------------------------------------ plumbing

  private now(): string {
    return formatNow(this.clock(), this.gateway.nowOffset);
  }

  private invoiceBody(req: InvoiceCreateRequest): Body {
    const { extras, ...fields } = req;
    const body: Body = { ...fields };
    for (const [key, value] of Object.entries(extras ?? {})) {
      if (key in body || key === 'shop_id' || key === 'sign') {
        throw new TypeError(`invoice extra "${key}" clashes with a field the request sets`);
      }
      body[key] = value;
    }
    return body;
  }

  /** Adds shop_id, drops absent fields, signs, posts and unwraps the envelope. */
  private async call<T>(call: GatewayCall, fields: Body, signHeader = false): Promise<T> {
    const { path, signed } = this.gateway.calls[call];
    if ('amount' in fields && (typeof fields.amount !== 'string' || !DECIMAL.test(fields.amount))) {
      throw new TypeError(`${call}: amount must be a decimal string such as "100.50"`);
    }
    const shop = this.shops.forCall(call);
    const body: Body = { shop_id: shop.shopId };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
    body.sign = sign(body, signed, shop.secretKey);

    const started = process.hrtime.bigint();
    let outcome = 'ok';
    let errorCode: number | undefined;
    // Tracing on: a client span, child of the request the call is made for when one is in flight.
    const span = this.tracing?.startSpan(
      `gateway ${path}`,
      'client',
      this.traceBindings?.parentOf(fields),
      {
        'gateway.call': call,
        'gateway.shop_id': shop.shopId,
      },
    );
    try {
      return this.unwrap<T>(call, await this.post(call, path, body, signHeader, span?.traceparent));
    } catch (err) {
      if (err instanceof GatewayError) {
        outcome = 'gateway_error';
        errorCode = err.errorCode;
      } else if (err instanceof GatewayTransportError) {
        outcome = err.kind === 'connect' ? 'connect_error' : err.kind;
      }
      throw err;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Labels as an object: .labels() makes two closures and checks the names twice per call.
      gatewayCallDuration.observe({ path, outcome }, seconds);
      const line = {
        path,
        shopId: shop.shopId,
        durationMs: Math.round(seconds * 1000),
        result: outcome,
        errorCode,
      };
      // A gateway error is an answer (often an expected one: duplicate, absent); no answer is a warning.
      if (span) {
        span.setAttributes({ 'gateway.result': outcome, 'gateway.error_code': errorCode });
        span.end(outcome === 'ok' ? undefined : outcome);
      }
      const logged = span ? { ...line, traceId: span.traceId } : line;
      if (outcome === 'ok' || outcome === 'gateway_error')
        this.callLog.info(logged, 'gateway call');
      else this.log.warn(logged, 'gateway call');
    }
  }

  private async post(
    call: GatewayCall,
    path: string,
    body: Body,
    signHeader: boolean,
    traceparent?: string,
  ): Promise<PostAnswer> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    if (signHeader) headers.sign = String(body.sign);
    if (traceparent !== undefined) headers.traceparent = traceparent;
    try {
      return await postText(this.urlOf(path), JSON.stringify(body), headers, {
        timeoutMs: this.gateway.timeoutMs,
        httpAgent: this.httpAgent,
        httpsAgent: this.httpsAgent,
      });
    } catch (err) {
      // Only the code and message go on, never the request's body or headers.
      const code = errorCode(err);
      const message = err instanceof Error ? err.message : 'request failed';
      throw new GatewayTransportError(call, transportKind(err, code), message, code);
    }
  }

  private urlOf(path: string): URL {
    let url = this.urls.get(path);
    if (!url) {
      url = new URL(`${this.gateway.baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
      this.urls.set(path, url);
    }
    return url;
  }

  private unwrap<T>(call: GatewayCall, response: PostAnswer): T {
    const status = response.status;
    const badResponse = (why: string) =>
      new GatewayTransportError(call, 'bad_response', `${why} (HTTP ${status})`, undefined, status);
    let envelope: unknown;
    try {
      envelope = parseExactJson(typeof response.data === 'string' ? response.data : '');
    } catch {
      throw badResponse('response is not JSON');
    }
    if (
      typeof envelope !== 'object' ||
      envelope === null ||
      typeof (envelope as Body).result !== 'boolean'
    ) {
      throw badResponse('response has no result envelope');
    }
    const { result, error_code, message, data } = envelope as Body;
    if (result) return data as T;
    if (typeof error_code !== 'number' || !Number.isInteger(error_code)) {
      throw badResponse('error response has no integer error_code');
    }
    const g = this.gateway;
    throw new GatewayError({
      call,
      errorCode: error_code,
      gatewayMessage: this.shops
        .secrets()
        .reduce(
          (text, secret) => scrubGatewayText(text, secret),
          typeof message === 'string' ? message : '',
        ),
      fatal: g.fatalErrorCodes.includes(error_code)
        ? true
        : g.nonFatalErrorCodes.includes(error_code)
          ? false
          : null,
      httpStatus: status,
      isDuplicate: error_code === g.duplicateErrorCode,
      isAbsent: error_code === g.absentErrorCode,
      data,
    });
  }
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The system call that failed, from the error or one it wraps. */
function syscall(err: unknown): string | undefined {
  const e = err as { syscall?: unknown; cause?: { syscall?: unknown } } | null;
  const s = e?.syscall ?? e?.cause?.syscall;
  return typeof s === 'string' ? s : undefined;
}

/**
 * Connect-phase failures (refused, unresolvable, unreachable, TLS rejected) never reached the
 * gateway. Everything else happened after the request may have been sent, so the outcome is
 * unknown: a time-out may come after the gateway acted, a reset or hang-up came after writing.
 */
function transportKind(err: unknown, code: string | undefined): TransportErrorKind {
  if (code !== undefined && NOT_SENT_CODES.has(code)) return 'connect';
  const call = syscall(err);
  if (call === 'connect' || call === 'getaddrinfo') return 'connect';
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') return 'timeout';
  return 'reset';
}
