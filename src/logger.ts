// The process-wide structured logger (pino); sensitive fields are redacted before any line is written.
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';

export type { Logger };

/** Field names whose values never reach a log line, wherever they appear in the logged object. */
export const redactedFieldNames = [
  'password',
  'authorization',
  'access_token',
  'refresh_token',
  'payment_token',
  'first_name',
  'last_name',
  'email',
  'phone',
  'contact_email',
  'contact_phone',
  'display_name',
];

function redactionPaths(fieldNames: string[]): string[] {
  // pino matches paths, not names; cover the field at the top level and a few levels down.
  return fieldNames.flatMap((name) => [name, `*.${name}`, `*.*.${name}`, `*.*.*.${name}`, `*.*.*.*.${name}`]);
}

export function createLogger(options: { level: LogLevel; name: string }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: { paths: redactionPaths(redactedFieldNames), censor: '[redacted]' },
  });
}
