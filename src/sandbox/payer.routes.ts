import express, { Request, Response, Router } from 'express';
import { completePayment, PayerAction, payerStep, recordBrowserInfo } from './invoices';
import {
  BROWSER_FIELDS,
  browserInfoPage,
  messagePage,
  payerPage,
  resultPage,
  threeDsPage,
} from './pages';
import type { SandboxRuntime } from './runtime';
import { awaitsPayment, Invoice } from './sandbox.state';

/**
 * The payer's side: the checkout URL `/sandbox/checkout?session_id=`, `/sandbox/pay/:invoiceId` (GET or POST, form or query), the 3-D Secure page
 * `/sandbox/3ds/:invoiceId`, the browser-information step `/sandbox/browser-info/:invoiceId`, and
 * the buttons that complete the payment.
 */
export function payerRouter(rt: SandboxRuntime): Router {
  const router = express.Router();
  router.use(express.urlencoded({ extended: false }));

  const page = (req: Request, res: Response, render: (invoice: Invoice) => string): void => {
    const invoice = rt.state.invoices.get(Number(req.params.invoiceId));
    if (invoice === undefined) {
      res
        .status(404)
        .type('html')
        .send(messagePage('Payment not found', 'This payment does not exist.'));
      return;
    }
    res.type('html').send(awaitsPayment(invoice.status) ? render(invoice) : resultPage(invoice));
  };

  /** Completes the payment the payer acted on, unless the pending scenario keeps it waiting. */
  const act = (req: Request, res: Response, action: PayerAction): void =>
    page(req, res, (invoice) => {
      if (!invoice.payway.scenarios.has('pending')) completePayment(rt, invoice, action);
      return resultPage(invoice);
    });

  const form = (req: Request): Record<string, string> => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null) return {};
    return Object.fromEntries(
      Object.entries(body as Record<string, unknown>).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      ),
    );
  };

  // The checkout URL of a card payway's create answer (`GET …/checkout?session_id=`), as on the
  // real server: it forwards the payer to the step the payment is at.
  router.all('/checkout', (req, res) => {
    const session = req.query.session_id ?? form(req).session_id;
    const invoice =
      typeof session === 'string' && session !== ''
        ? [...rt.state.invoices.values()].find((i) => i.sessionId === session)
        : undefined;
    if (invoice === undefined) {
      res
        .status(404)
        .type('html')
        .send(messagePage('Payment not found', 'This payment does not exist.'));
      return;
    }
    res.redirect(303, payerStep(rt, invoice).url);
  });

  router.all('/pay/:invoiceId', (req, res) => page(req, res, payerPage));
  router.post('/pay/:invoiceId/complete', (req, res) =>
    act(req, res, form(req).action === 'pay' ? 'pay' : 'decline'),
  );

  router.all('/3ds/:invoiceId', (req, res) =>
    page(req, res, (invoice) => (invoice.needs3ds ? threeDsPage(invoice) : payerPage(invoice))),
  );
  router.post('/3ds/:invoiceId/complete', (req, res) =>
    act(req, res, form(req).action === 'confirm' ? 'pay' : 'decline'),
  );

  router.all('/browser-info/:invoiceId', (req, res) => page(req, res, browserInfoPage));
  router.post('/browser-info/:invoiceId/submit', (req, res) => {
    const invoice = rt.state.invoices.get(Number(req.params.invoiceId));
    if (invoice === undefined) {
      res
        .status(404)
        .type('html')
        .send(messagePage('Payment not found', 'This payment does not exist.'));
      return;
    }
    const sent = form(req);
    const info: Record<string, string> = { browser_accept_header: req.get('accept') ?? '' };
    for (const field of BROWSER_FIELDS) info[field] = sent[field] ?? '';
    recordBrowserInfo(invoice, info);
    res.redirect(303, payerStep(rt, invoice).url);
  });

  return router;
}
