import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { ApiProblems, PROBLEM_JSON, PROBLEMS } from '../common/openapi';
import { PublicPerAddressLimited } from '../common/public.decorator';
import type { PayForm } from './operations/pay-by-link';
import { renderLinkPage } from './pay-link-page';
import { PaymentLinksService } from './payment-links.service';

/**
 * Nothing loads, no script runs; only the page's own style (this response's nonce); no framing.
 * No form-action: the form's answer redirects the payer on to the gateway, and browsers apply
 * form-action to those redirects too (as on /pay).
 */
const linkPageCsp = (nonce: string): string =>
  `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`;

/** Add-on fields a payer's form may send at most (each `extras.<name>`). */
const MAX_FIELDS = 40;

const LINK_ID = { name: 'id', example: 'plink_0b6f6a523c1e4a8f9a7e2d5c1f0e9b11' };
const HTML = {
  'text/html': { schema: { type: 'string' }, example: '<!doctype html><h1>Pay</h1>…' },
};

const PROBLEMS_400 = {
  [PROBLEM_JSON]: { schema: { $ref: '#/components/schemas/ProblemDetails' }, example: PROBLEMS[400].example },
};

/** The payer's page of a payment link (outside /api/v1, no key, the `/pay` address budget). */
@ApiTags('payer')
@PublicPerAddressLimited('pay')
@Controller()
export class PayLinkController {
  constructor(private readonly links: PaymentLinksService) {}

  @Get('pay/l/:id')
  @ApiOperation({
    summary: "A payment link's payer page",
    description:
      'HTML: what is paid for and the payways to choose from (`?payway=` chooses one), then the payway\'s add-on fields. ' +
      'A paid single-use link shows its receipt; an expired or deactivated one says so (410); one with a payment in ' +
      'progress says so (409). Rate-limited per address like /pay.',
  })
  @ApiParam(LINK_ID)
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'The page', content: HTML })
  @ApiResponse({ status: 404, description: 'No such link (an HTML page)', content: HTML })
  @ApiResponse({ status: 409, description: 'A payment of this single-use link is in progress (an HTML page)', content: HTML })
  @ApiResponse({ status: 410, description: 'The link expired or was deactivated (an HTML page)', content: HTML })
  @ApiProblems(429)
  async show(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const q = req.query as Record<string, unknown>;
    const payway = typeof q.payway === 'string' && q.payway.length <= 150 ? q.payway : undefined;
    send(res, await this.links.show(id, payway));
  }

  @Post('pay/l/:id')
  @ApiOperation({
    summary: "A payment link's form: makes the attempt's invoice and sends the payer on",
    description:
      'Form fields: `payway`, `attempt` (the token the page gave: a double submit is one invoice), and ' +
      '`extras.<name>` per add-on field, checked as `extras` are on POST /invoices (a 400 page names each field). ' +
      'On success, 303 to the invoice\'s payer redirect (payUrl).',
  })
  @ApiParam(LINK_ID)
  @ApiProduces('text/html')
  @ApiResponse({ status: 303, description: 'Location: the invoice payer page, or the link page (a payer-less payway)' })
  @ApiResponse({ status: 200, description: 'The receipt of a link already paid', content: HTML })
  @ApiResponse({
    status: 400,
    description:
      'The form refused, each field named (an HTML page); a body the edge refuses before (a NUL, a reserved key) is problem+json',
    content: { ...HTML, ...PROBLEMS_400 },
  })
  @ApiResponse({ status: 404, description: 'No such link (an HTML page)', content: HTML })
  @ApiResponse({ status: 409, description: 'A payment of this single-use link is in progress (an HTML page)', content: HTML })
  @ApiResponse({ status: 410, description: 'The link expired or was deactivated (an HTML page)', content: HTML })
  @ApiResponse({ status: 502, description: 'The gateway refused to start the payment (an HTML page)', content: HTML })
  @ApiProblems(429)
  async pay(@Param('id') id: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    send(res, await this.links.pay(id, formOf(req.body)));
  }
}

/** The form's fields, each a bounded string; anything else is left out (then refused by name). */
function formOf(body: unknown): PayForm {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const text = (v: unknown, max: number): string => (typeof v === 'string' && v.length <= max ? v : '');
  const extras: Record<string, string> = {};
  let n = 0;
  for (const [k, v] of Object.entries(b)) {
    if (!k.startsWith('extras.') || typeof v !== 'string') continue;
    if (++n > MAX_FIELDS) break;
    extras[k.slice('extras.'.length)] = v;
  }
  return { payway: text(b.payway, 150), token: text(b.attempt, 64), extras };
}

function send(res: FastifyReply, page: Parameters<typeof renderLinkPage>[0]): void {
  const nonce = randomBytes(16).toString('base64');
  const out = renderLinkPage(page, nonce);
  res.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
  if (out.location !== undefined) {
    void res.redirect(out.location, 303);
    return;
  }
  void res
    .header('Content-Security-Policy', linkPageCsp(nonce))
    .status(out.status)
    .type('text/html; charset=utf-8')
    .send(out.html);
}
