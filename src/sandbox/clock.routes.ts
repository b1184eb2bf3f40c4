import express, { Request, Response, Router } from 'express';
import { toJsonText, type JsonOut } from './json-text';

/**
 * What the service gives the in-process sandbox in sandbox mode (src/clock/sandbox-clock.ts):
 * the clock is the service's, the sandbox only exposes it beside its other control routes.
 * `advance` rejects with a `refused` error (status 400) for a move it does not make.
 */
export interface ClockControl {
  read(): JsonOut;
  advance(seconds: number): Promise<JsonOut>;
  refused(e: unknown): boolean;
}

/**
 * `GET /sandbox/clock` and `POST /sandbox/clock/advance {seconds}`. Only mounted when the
 * service started the sandbox in sandbox mode and handed it the clock; a standalone sandbox
 * (or a sandbox a test starts) has no such route: a 404 like any other unknown path.
 */
export function clockRouter(control: () => ClockControl | undefined): Router {
  const router = express.Router();
  const json = express.json({ limit: '4kb' });
  const reply = (res: Response, status: number, data: JsonOut): void => {
    res.status(status).type('application/json').send(toJsonText(status === 200 ? { result: true, data } : { result: false, message: data }));
  };
  router.get('/clock', (_req: Request, res: Response) => {
    const c = control();
    if (c === undefined) return reply(res, 503, 'the service is still starting');
    reply(res, 200, c.read());
  });
  router.post('/clock/advance', json, (req: Request, res: Response) => {
    const c = control();
    if (c === undefined) return reply(res, 503, 'the service is still starting');
    const body = req.body as { seconds?: unknown } | undefined;
    const seconds = body?.seconds;
    if (typeof seconds !== 'number') return reply(res, 400, 'seconds must be a number above 0');
    c.advance(seconds).then(
      (report) => reply(res, 200, report),
      (e: unknown) => reply(res, c.refused(e) ? 400 : 500, e instanceof Error ? e.message : String(e)),
    );
  });
  return router;
}
