import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { redact, scrubText } from './redact';

export { scrubText } from './redact';

/**
 * Pretty, coloured lines for a person at a terminal; JSON lines for everything else (a pipe, a
 * file, a container's log collector) and always in production, where a parser reads them.
 * `LOG_FORMAT=json` or `pretty` decides it instead.
 */
export function wantsPrettyLogs(env: NodeJS.ProcessEnv, stdoutIsTty: boolean): boolean {
  // LOG_FORMAT says so outright (a suite that parses a terminal's lines; a readable pipe).
  if (env.LOG_FORMAT === 'json') return false;
  if (env.LOG_FORMAT === 'pretty') return !env.LOG_FILE;
  return stdoutIsTty && env.NODE_ENV !== 'production' && env.NODE_ENV !== 'test' && !env.LOG_FILE;
}

/** pino-pretty runs as a transport (a worker thread), so formatting never blocks a request. */
export const PRETTY_TRANSPORT = {
  target: 'pino-pretty',
  options: { colorize: true, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', sync: true },
};

function destination(): pino.DestinationStream | undefined {
  return process.env.LOG_FILE
    ? pino.destination({ dest: process.env.LOG_FILE, sync: true })
    : undefined;
}

/**
 * The app's logger options: redaction by shape (./redact.ts), ISO times, level names. With
 * `opts.pretty` the lines go through pino-pretty (redaction still happens first, in pino).
 */
export function createLogger(
  dest?: pino.DestinationStream,
  level?: string,
  opts: { pretty?: { destination?: string } | boolean } = {},
): Logger {
  // Every structured value, at any depth, errors and their causes included.
  const log = (obj: Record<string, unknown>): Record<string, unknown> => redact(obj) as Record<string, unknown>;
  const options: pino.LoggerOptions = {
    level: level ?? process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log },
    hooks: {
      logMethod(args, method) {
        lastLineAt = Date.now();
        // Messages and their interpolated values get the same masking as structured fields.
        if (args[0] instanceof Error) {
          // pino would take the message from the error unscrubbed: hand it over as a field.
          const err = args[0];
          args = [{ err }, ...(args.length > 1 ? args.slice(1) : [err.message])] as typeof args;
        }
        const scrubbed = args.map((a, i) =>
          typeof a === 'string' ? scrubText(a) : i > 0 ? redact(a) : a,
        ) as typeof args;
        method.apply(this, scrubbed);
      },
    },
  };
  if (opts.pretty) {
    const to = typeof opts.pretty === 'object' ? opts.pretty.destination : undefined;
    return pino({
      ...options,
      transport: { ...PRETTY_TRANSPORT, options: { ...PRETTY_TRANSPORT.options, ...(to ? { destination: to, colorize: false } : {}) } },
    });
  }
  // pino-pretty reads numeric levels; JSON lines carry the level's name.
  return pino({ ...options, formatters: { log, level: (label) => ({ level: label }) } }, dest);
}

const mainDestination = destination();
const pretty = wantsPrettyLogs(process.env, process.stdout.isTTY === true);

export const logger: Logger = createLogger(mainDestination, undefined, { pretty });

/**
 * The access lines' logger (src/common/http-edge.ts): the same sink, level and line format, but
 * no redaction pass, which cost about three quarters of a line's 15 µs. Its lines hold only
 * values the edge makes or checks (method, route pattern, status, duration, key id, a safe
 * request id, an address): nothing a caller can put a secret in. Pretty output (a developer's
 * terminal) goes through the main logger.
 */
export const accessLogger: Logger = pretty
  ? logger.child({ component: 'access' })
  : pino(
      {
        level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
        base: { pid: process.pid, component: 'access' },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      mainDestination ?? pino.destination({ dest: 1, sync: true }),
    );

let lastLineAt = 0;

/**
 * Resolves once the log has been quiet for `quietMs` (start-up work such as the first payway
 * refresh logs right after listening) or `maxMs` passed, and every line so far is written (the
 * pretty transport is a worker thread).
 */
export async function settleLogs(quietMs = 300, maxMs = 3000): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end && Date.now() - lastLineAt < quietMs) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
}

/** Nest's LoggerService on top of pino, so framework and app logs share one redacting sink. */
/**
 * Nest's start-up narration (each module loaded, each route mapped: about 120 lines before the
 * ready block) is for debugging the framework, not for reading a start: debug level.
 */
export const NEST_START_CONTEXTS: ReadonlySet<string> = new Set([
  'RouterExplorer',
  'RoutesResolver',
  'InstanceLoader',
  'NestFactory',
  'NestApplication',
]);

export class PinoNestLogger implements LoggerService {
  log(message: unknown, context?: string): void {
    this.write(context !== undefined && NEST_START_CONTEXTS.has(context) ? 'debug' : 'info', message, context);
  }
  error(message: unknown, trace?: string, context?: string): void {
    logger.error({ context, trace: trace ? scrubText(trace) : undefined }, toText(message));
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  private write(
    level: 'info' | 'warn' | 'debug' | 'trace',
    message: unknown,
    context?: string,
  ): void {
    if (typeof message === 'object' && message !== null) logger[level]({ context, ...message });
    else logger[level]({ context }, toText(message));
  }
}

function toText(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}
