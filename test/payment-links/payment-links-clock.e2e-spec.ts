import request from 'supertest';
import { PAYMENT } from '../support/payways';
import { SANDBOX_SHOP_KEY as SHOP_KEY, startSandboxModeService, type SandboxModeService } from '../support/sandbox-mode';

/**
 * A payment link's expiry reads the service's one clock: in sandbox mode, moving the sandbox
 * clock past `expiresAt` expires the link during the advance (its event in the advance's report),
 * and its page says so; a link whose time has not come stays active.
 */
let sm: SandboxModeService;

beforeAll(async () => {
  sm = await startSandboxModeService();
}, 120_000);

afterAll(async () => {
  await sm?.close();
});

const http = (): ReturnType<typeof request> => request(sm.service.url);
const auth = { Authorization: `Bearer ${SHOP_KEY}` };

async function advance(seconds: number): Promise<{ jobs: Array<{ job: string }>; events: Array<{ type: string; objectId: string }> }> {
  const res = await fetch(`${sm.sandboxOrigin}/sandbox/clock/advance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seconds }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { jobs: Array<{ job: string }>; events: Array<{ type: string; objectId: string }> } }).data;
}

it('moving the sandbox clock past expiresAt expires the link in the advance; a later expiry is not touched', async () => {
  const now = Date.now();
  const make = async (inSeconds: number): Promise<string> =>
    String(
      (
        await http()
          .post('/api/v1/payment-links')
          .set(auth)
          .send({
            amount: '50.00',
            currency: 643,
            description: 'Clock',
            payways: [PAYMENT.card],
            expiresAt: new Date(now + inSeconds * 1000).toISOString(),
          })
          .expect(201)
      ).body.id,
    );
  const soon = await make(3600);
  const later = await make(3 * 86_400);
  const report = await advance(7200);
  expect(report.events).toContainEqual(expect.objectContaining({ type: 'payment_link.expired', objectId: soon }));
  expect(report.events.some((e) => e.objectId === later)).toBe(false);
  expect(report.jobs.map((j) => j.job)).toContain('payment-link-expiry');
  expect((await http().get(`/api/v1/payment-links/${soon}`).set(auth).expect(200)).body.status).toBe('expired');
  expect((await http().get(`/api/v1/payment-links/${later}`).set(auth).expect(200)).body.status).toBe('active');
  const page = await http().get(`/pay/l/${soon}`).expect(410);
  expect(page.text).toContain('expired');
  await http().get(`/pay/l/${later}`).expect(200);
}, 60_000);
