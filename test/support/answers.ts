import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { minorUnits } from '../../src/common/currency';

/**
 * Every JSON answer an end-to-end suite receives, held against the contract: the OpenAPI
 * document's schema for its route and status (what the document declares required, nullable and
 * typed is what the service sends), and every amount written with exactly its currency's
 * minor-unit digits. The shared HTTP helper (test/support/app.ts) applies it to every answer.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
interface Route {
  pattern: RegExp;
  /** Fewer path parameters wins where two templates match (`/invoices/quote` over `/invoices/{id}`). */
  params: number;
  template: string;
  operations: Record<string, Operation>;
}

/** The suites run from the repository's root (npm test). */
const DOCUMENT = resolve('openapi.json');

/** OpenAPI 3.0's `nullable` as JSON Schema: the schema, or null. Refs point into the document. */
function toJsonSchema(s: Json): Json {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (s === null || typeof s !== 'object') return s;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'example' || k === 'examples' || k === 'discriminator') continue;
    if (k === '$ref' && typeof v === 'string') out.$ref = v.replace(/^#\//, 'doc#/');
    else if (k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, toJsonSchema(ps)]));
    else out[k] = toJsonSchema(v);
  }
  // A discriminated oneOf: the branch its property names, so an error names that branch's fields.
  const d = (s as { discriminator?: { propertyName?: string; mapping?: Record<string, string> } }).discriminator;
  if (d?.propertyName && d.mapping && Array.isArray(out.oneOf)) {
    const prop = d.propertyName;
    delete out.oneOf;
    out.required = [prop];
    out.properties = { [prop]: { enum: Object.keys(d.mapping) } };
    out.allOf = Object.entries(d.mapping).map(([value, ref]) => ({
      if: { properties: { [prop]: { const: value } }, required: [prop] },
      then: { $ref: ref.replace(/^#\//, 'doc#/') },
    }));
  }
  if ((s as { nullable?: unknown }).nullable === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

class AnswerChecker {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction | null>();

  constructor(doc: { paths: Record<string, Record<string, Operation>>; components?: Json }) {
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'doc', components: toJsonSchema(doc.components ?? {}) } as object);
    this.routes = Object.entries(doc.paths)
      .map(([template, operations]) => ({
        template,
        operations,
        params: (template.match(/\{/g) ?? []).length,
        pattern: new RegExp(
          `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`,
        ),
      }))
      .sort((a, b) => a.params - b.params);
  }

  private route(path: string): Route | undefined {
    return this.routes.find((r) => r.pattern.test(path));
  }

  private validator(template: string, method: string, status: string, type: string, schema: Json): ValidateFunction {
    const key = `${method} ${template} ${status} ${type}`;
    let v = this.compiled.get(key);
    if (!v) {
      v = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, v);
    }
    return v;
  }

  /** What is wrong with one answer, or null. */
  check(method: string, path: string, status: number, contentType: string, body: unknown): string | null {
    const mediaType = contentType.split(';')[0].trim().toLowerCase();
    if (!/^application\/([a-z.+-]*\+)?json$/.test(mediaType)) return null;
    const money = moneyProblems(body);
    if (money.length > 0)
      return `${method} ${path} ${status}: amounts not written with their currency's minor-unit digits: ${money.slice(0, 5).join('; ')}`;
    const route = this.route(path);
    if (!route) return null;
    const op = route.operations[method.toLowerCase()];
    if (!op) return null;
    const response = op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`] ?? op.responses?.default;
    const content = response?.content;
    if (!content) {
      return status >= 200 && status < 300
        ? `${method} ${route.template} answered ${status} ${mediaType}, which the OpenAPI document does not declare`
        : null;
    }
    const media = content[mediaType] ?? content['application/json'] ?? content['application/problem+json'];
    if (!media?.schema) return null;
    const validate = this.validator(route.template, method, String(status), mediaType, media.schema);
    if (validate(body)) return null;
    const errors = (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
      .join('; ');
    return `${method} ${route.template} ${status}: the answer does not match the OpenAPI document: ${errors}\n  body: ${JSON.stringify(body).slice(0, 600)}`;
  }
}

let checker: AnswerChecker | undefined;

/** The one checker, over the committed openapi.json (`npm run openapi` writes it). */
export function answerChecker(): AnswerChecker {
  checker ??= new AnswerChecker(JSON.parse(readFileSync(DOCUMENT, 'utf8')));
  return checker;
}

/** Fields that hold an amount, and which currency field of their object names its currency. */
const AMOUNT_KEY =
  /^(amount|[a-z]+Amount|payerPrice|payeeReceive|shopWriteOff|balance|available|frozen|hold|total|fee|fees|[a-z]+Fee|[a-z]+Sum|sum|difference|price)$/;
const SKIP = new Set(['metadata', 'extras', 'fields', 'redirect', 'params', 'label', 'hint']);
const DECIMAL = /^-?\d+(\.\d+)?$/;

function currencyOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** The currency an amount field of this object is in, or the one inherited from its parent. */
function currencyFor(obj: Record<string, unknown>, key: string, inherited: number | null): number | null {
  const own = currencyOf(obj.currency);
  const shop = currencyOf(obj.shopCurrency);
  const ps = currencyOf(obj.psCurrency);
  if (key === 'payerPrice' || key === 'payeeReceive') return ps ?? own ?? inherited;
  if (key === 'shopWriteOff') return shop ?? own ?? inherited;
  if (key === 'amount' && (obj.amountType === 'ps_amount' || obj.amountType === 'shop_amount'))
    return obj.amountType === 'ps_amount' ? (ps ?? shop) : shop;
  return own ?? shop ?? inherited;
}

/** Every amount in a JSON answer whose fraction digits are not its currency's minor unit. */
export function moneyProblems(body: unknown, at = '', inherited: number | null = null): string[] {
  if (Array.isArray(body)) return body.flatMap((v, i) => moneyProblems(v, `${at}/${i}`, inherited));
  if (body === null || typeof body !== 'object') return [];
  const obj = body as Record<string, unknown>;
  const here = currencyOf(obj.currency) ?? currencyOf(obj.shopCurrency) ?? inherited;
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (SKIP.has(k)) continue;
    if (typeof v === 'string' && AMOUNT_KEY.test(k) && DECIMAL.test(v)) {
      const c = currencyFor(obj, k, inherited);
      const digits = c === null ? null : minorUnits(c);
      if (digits === null) continue;
      const frac = v.split('.')[1] ?? '';
      // Finer than its currency is kept as sent (never rounded), without trailing zeros past it.
      const ok = frac.length === digits || (frac.length > digits && !frac.endsWith('0'));
      if (!ok) out.push(`${at}/${k} = "${v}" in ${c}`);
    } else if (v !== null && typeof v === 'object') {
      out.push(...moneyProblems(v, `${at}/${k}`, here));
    }
  }
  return out;
}

/** CSV text: every cell of an amount column checked against the row's currency column. */
export function csvMoneyProblems(csv: string): string[] {
  const lines = csv.split(/\r?\n/).filter((l) => l !== '');
  if (lines.length === 0) return [];
  const split = (l: string): string[] => l.split(',').map((c) => c.replace(/^"|"$/g, ''));
  const head = split(lines[0]);
  const cur = head.findIndex((h) => h === 'currency');
  const amounts = head
    .map((h, i) => ({ h, i }))
    .filter(({ h }) => /amount|price|receive|write_off|balance|sum|fee|total|available|frozen|hold/.test(h) && !/count/.test(h));
  if (cur < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(1)) {
    const cells = split(l);
    const c = Number(cells[cur]);
    const digits = Number.isInteger(c) ? minorUnits(c) : null;
    if (digits === null) continue;
    for (const { h, i } of amounts) {
      const v = cells[i];
      if (v === undefined || !DECIMAL.test(v)) continue;
      const frac = v.split('.')[1] ?? '';
      if (!(frac.length === digits || (frac.length > digits && !frac.endsWith('0'))))
        out.push(`${h} = "${v}" in ${c}`);
    }
  }
  return out;
}
