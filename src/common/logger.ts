import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/**
 * Field names whose values never reach a log line, wherever they sit in the logged object.
 * Redaction happens here, at the logger, so no caller has to remember it.
 */
export const REDACTED_KEYS = [
  'card',
  'cvv',
  'number',
  'sign',
  'secret',
  'secretKey',
  'secret_key',
  'authorization',
  'Authorization',
  'password',
  'payment_token',
  'paymentToken',
  'token',
  'account',
  'accountDetails',
  'account_details',
];

const paths = REDACTED_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]).concat([
  'req.headers.authorization',
  'req.headers.sign',
  'headers.authorization',
  'headers.sign',
]);

/** Card-number-like digit runs (13-19 digits) are masked in free text too. */
const PAN = /\b\d{13,19}\b/g;
export function scrubText(text: string): string {
  return text.replace(PAN, (m) => `${m.slice(0, 6)}******${m.slice(-4)}`);
}

function destination(): pino.DestinationStream | undefined {
  return process.env.LOG_FILE
    ? pino.destination({ dest: process.env.LOG_FILE, sync: true })
    : undefined;
}

/** The app's logger options: redaction of secrets and card data, ISO times, level names. */
export function createLogger(dest?: pino.DestinationStream, level?: string): Logger {
  return pino(
    {
      level: level ?? process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
      redact: { paths, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        logMethod(args, method) {
          // Free-text messages get the same card-number masking as structured fields.
          const scrubbed = args.map((a) =>
            typeof a === 'string' ? scrubText(a) : a,
          ) as typeof args;
          method.apply(this, scrubbed);
        },
      },
    },
    dest,
  );
}

export const logger: Logger = createLogger(destination());

/** Nest's LoggerService on top of pino, so framework and app logs share one redacting sink. */
export class PinoNestLogger implements LoggerService {
  log(message: unknown, context?: string): void {
    this.write('info', message, context);
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
