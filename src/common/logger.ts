import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { V } from '../config/schema';
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
  options: {
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    sync: true,
  },
};

/**
 * The level every logger of the process writes at: LOG_LEVEL as the configuration reads it
 * (config/schema.ts), except that unset under the tests it is `warn`. The loggers exist before
 * the configuration is loaded, so they read the one declaration themselves.
 */
export function logLevelOf(env: NodeJS.ProcessEnv): string {
  if (env.LOG_LEVEL === undefined && env.NODE_ENV === 'test') return 'warn';
  return V.LOG_LEVEL.read(env);
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
  const log = (obj: Record<string, unknown>): Record<string, unknown> =>
    redact(obj) as Record<string, unknown>;
  const options: pino.LoggerOptions = {
    level: level ?? logLevelOf(process.env),
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
      transport: {
        ...PRETTY_TRANSPORT,
        options: {
          ...PRETTY_TRANSPORT.options,
          ...(to ? { destination: to, colorize: false } : {}),
        },
      },
    });
  }
  // pino-pretty reads numeric levels; JSON lines carry the level's name.
  return pino({ ...options, formatters: { log, level: (label) => ({ level: label }) } }, dest);
}

const pretty = wantsPrettyLogs(process.env, process.stdout.isTTY === true);

/**
 * Every JSON line of the process goes out through one destination, in the order it was logged,
 * to LOG_FILE or else stdout, written in blocks: lines at info level and below wait in a buffer
 * of about 15 kB (some sixty lines) that is written when full, at least every 200 ms however
 * quiet the service, and at exit; a warning, an error or a fatal line is written at once, with
 * every line before it. Written one by one, each line was its own write(2), the largest single
 * cost of a create or a notification at the default level. What a kill -9 can lose is at most
 * the last 200 ms of info lines (access lines, gateway calls, notifications received), never a
 * warning or an error.
 */
export const LOG_BLOCK_BYTES = 15 * 1024;
export const LOG_FLUSH_MS = 200;

function blockDestination(): pino.DestinationStream & { flush(cb?: () => void): void } {
  // The block is kept here, as the lines themselves, and handed to sonic-boom whole: given the
  // lines one by one with a minLength, sonic-boom measured the UTF-8 length of its whole pending
  // buffer at every line (flattening it), 10-15 µs of each create's two lines under P1's load.
  const sonic = pino.destination({ dest: process.env.LOG_FILE ?? 1, sync: true });
  let lines: string[] = [];
  let size = 0;
  const writeBlock = (): void => {
    if (lines.length === 0) return;
    const block = lines.length === 1 ? lines[0] : lines.join('');
    lines = [];
    size = 0;
    sonic.write(block);
  };
  setInterval(writeBlock, LOG_FLUSH_MS).unref();
  const destination = {
    write(line: string): void {
      lines.push(line);
      // UTF-16 units: the block's size in bytes to within the odd non-ASCII character.
      size += line.length;
      // JSON lines start with their level (the level formatter comes first).
      if (
        size >= LOG_BLOCK_BYTES ||
        !(
          line.startsWith('{"level":"info"') ||
          line.startsWith('{"level":"debug"') ||
          line.startsWith('{"level":"trace"')
        )
      )
        writeBlock();
    },
    flushSync(): void {
      writeBlock();
      sonic.flushSync();
    },
    flush(cb?: () => void): void {
      destination.flushSync();
      cb?.();
    },
  };
  atExit.add(destination);
  return destination;
}

/** One exit hook per process for every block destination (test runners load this module again and again). */
const atExit: Set<{ flushSync(): void }> = ((): Set<{ flushSync(): void }> => {
  const key = Symbol.for('orchestrator.log.flushAtExit');
  const store = globalThis as unknown as Record<symbol, Set<{ flushSync(): void }> | undefined>;
  let set = store[key];
  if (!set) {
    const created = new Set<{ flushSync(): void }>();
    set = created;
    store[key] = created;
    process.on('exit', () => flushAll(created));
  }
  return set;
})();

function flushAll(destinations: Iterable<{ flushSync(): void }>): void {
  for (const d of destinations) {
    try {
      d.flushSync();
    } catch {
      // a closed descriptor: nothing more can be written
    }
  }
}

const mainDestination = pretty ? undefined : blockDestination();

export const logger: Logger = createLogger(mainDestination, undefined, { pretty });

/** A value of a fixed-shape line: made or checked by the service, never a caller's structure. */
export type LineValue = string | number | boolean | undefined;

/**
 * The lines of a fixed shape made of values the service makes or checks: the access line
 * (method, route pattern, status, duration, key id, a safe request id, an address), the gateway
 * call line (path, shop id, duration, result, error code, trace id) and the line of a received
 * notification (its kind, our id, status; the gateway's order id passed through scrubText by the
 * caller, as the main logger would scrub it). No key of theirs is a sensitive name and nothing a
 * caller or the gateway writes reaches them unscrubbed, so they skip the redaction pass's walk,
 * and their text is made here in one pass: the same line the main logger writes (level, time, pid, component, the fields in
 * order, msg; an undefined field left out), through the same destination at the same level,
 * without pino's per-line machinery (about 8 µs a line under P1's profile). Pretty output (a
 * developer's terminal) goes through the main logger.
 */
export class LineLogger {
  private readonly head: string;
  private readonly threshold: number;

  constructor(
    private readonly component: string,
    private readonly dest: pino.DestinationStream | undefined,
    level: string,
  ) {
    this.head = `,"pid":${process.pid},"component":${JSON.stringify(component)}`;
    this.threshold =
      level === 'silent' ? Infinity : (pino.levels.values[level] ?? pino.levels.values.info);
  }

  isLevelEnabled(level: 'info'): boolean {
    return pino.levels.values[level] >= this.threshold;
  }

  info(fields: Readonly<Record<string, LineValue>>, msg: string): void {
    if (!this.isLevelEnabled('info')) return;
    if (this.dest === undefined) {
      logger.info({ component: this.component, ...fields }, msg);
      return;
    }
    let out = `{"level":"info","time":"${isoNow()}"${this.head}`;
    for (const key in fields) {
      const value = fields[key];
      if (value === undefined) continue;
      let name = KEY_TEXTS.get(key);
      if (name === undefined) KEY_TEXTS.set(key, (name = `,${JSON.stringify(key)}:`));
      out += name + jsonOf(value);
    }
    this.dest.write(`${out},"msg":${JSON.stringify(msg)}}\n`);
  }
}

/** `,"key":` for each field name a line has had (a few dozen names, fixed in the code). */
const KEY_TEXTS = new Map<string, string>();

/** Printable ASCII without `"` and `\`: JSON.stringify writes such a string as it is, quoted. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** JSON.stringify(value), without its call for the short plain strings most fields are. */
function jsonOf(value: Exclude<LineValue, undefined>): string {
  return typeof value === 'string' && value.length <= 128 && PLAIN_TEXT.test(value)
    ? `"${value}"`
    : JSON.stringify(value);
}

let isoAt = -1;
let isoText = '';

/**
 * new Date().toISOString(), made once per millisecond: the text has millisecond resolution, so the
 * lines of one millisecond share it. Date.now() is the clock `new Date()` reads.
 */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoAt) {
    isoAt = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

export function lineLogger(component: string): LineLogger {
  return new LineLogger(component, mainDestination, logLevelOf(process.env));
}

export const accessLogger: LineLogger = lineLogger('access');

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
  flushLogLines();
}

/** Writes out the lines buffered so far (see blockDestination). */
export function flushLogLines(): void {
  flushAll(atExit);
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
    this.write(
      context !== undefined && NEST_START_CONTEXTS.has(context) ? 'debug' : 'info',
      message,
      context,
    );
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
