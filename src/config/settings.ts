// The kinds of setting a configuration table is made of, and the one reader that applies a table to the environment.
import { readFileSync } from 'node:fs';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export type Environment = Record<string, string | undefined>;

/** One row of a configuration table: how a variable is read and how the reference documentation shows it. */
export interface Setting<T> {
  /** The kind of value, as the reference shows it (`integer 1–1000`, `true/false`, `URL`). */
  readonly type: string;
  /** The default as the reference shows it; `required` when there is none. */
  readonly defaultText: string;
  readonly description: string;
  /** A secret's value never appears in an error message or a log line. */
  readonly secret: boolean;
  /** The value of the variable, or its default when unset or blank; throws a ConfigError naming `variable`. */
  read(raw: string | undefined, variable: string): T;
}

export type SettingTable = Record<string, Setting<unknown>>;
export type SettingValues<Table extends SettingTable> = {
  [Variable in keyof Table]: Table[Variable] extends Setting<infer T> ? T : never;
};

/** Reads every row of `table` from `environment`; the first bad value stops with a message naming its variable. */
export function readSettings<Table extends SettingTable>(
  table: Table,
  environment: Environment,
): SettingValues<Table> {
  const values: Record<string, unknown> = {};
  for (const [variable, setting] of Object.entries(table)) {
    values[variable] = setting.read(environment[variable], variable);
  }
  return values as SettingValues<Table>;
}

interface Described {
  description: string;
  secret?: boolean;
}
/** A default computed by a cross-field rule (rules.ts), shown in the reference as `defaultText`. */
interface RuleDefault {
  defaultText: string;
}

const code = (value: string) => `\`${value}\``;

function setting<T>(
  type: string,
  defaultText: string,
  options: Described,
  parse: (value: string, variable: string) => T,
  fallback: (variable: string) => T,
): Setting<T> {
  return {
    type,
    defaultText,
    description: options.description,
    secret: options.secret ?? false,
    read(raw, variable) {
      const value = raw?.trim();
      return value ? parse(value, variable) : fallback(variable);
    },
  };
}

const required = (variable: string): never => {
  throw new ConfigError(variable, 'is required but not set');
};

export function text(options: Described & { default: string }): Setting<string>;
export function text(options: Described & { required: true; defaultText?: string }): Setting<string>;
export function text(options: Described & Partial<RuleDefault>): Setting<string | undefined>;
export function text(
  options: Described & { default?: string; required?: true; defaultText?: string },
): Setting<string | undefined> {
  const { default: fallback } = options;
  const shownDefault = () => {
    if (fallback === undefined) return options.required ? 'required' : 'unset';
    return fallback === '' ? 'empty' : code(fallback);
  };
  return setting(
    'text',
    options.defaultText ?? shownDefault(),
    options,
    (value) => value,
    (variable) => (fallback !== undefined ? fallback : options.required ? required(variable) : undefined),
  );
}

function wholeNumber(value: string, variable: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value)) throw new ConfigError(variable, `must be a whole number, got "${value}"`);
  const number = Number(value);
  if (number < min || number > max) {
    throw new ConfigError(variable, `must be between ${min} and ${max}, got ${number}`);
  }
  return number;
}

interface Bounds {
  min: number;
  max: number;
}

export function integer(options: Described & Bounds & { default: number }): Setting<number>;
export function integer(options: Described & Bounds & RuleDefault): Setting<number | undefined>;
export function integer(
  options: Described & Bounds & { default?: number; defaultText?: string },
): Setting<number | undefined> {
  const { min, max, default: fallback } = options;
  return setting(
    `integer ${min}–${max}`,
    options.defaultText ?? code(String(fallback)),
    options,
    (value, variable) => wholeNumber(value, variable, min, max),
    () => fallback,
  );
}

export function port(options: Described & { default: number }): Setting<number> {
  return integer({ ...options, min: 0, max: 65535 });
}

export function flag(options: Described & { default: boolean }): Setting<boolean>;
export function flag(options: Described & RuleDefault): Setting<boolean | undefined>;
export function flag(
  options: Described & { default?: boolean; defaultText?: string },
): Setting<boolean | undefined> {
  return setting(
    'true/false',
    options.defaultText ?? code(String(options.default)),
    options,
    (value, variable) => {
      const lower = value.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      throw new ConfigError(variable, `must be true or false, got "${value}"`);
    },
    () => options.default,
  );
}

export function oneOf<const Value extends string>(
  options: Described & { values: readonly Value[]; default: Value },
): Setting<Value>;
export function oneOf<const Value extends string>(
  options: Described & { values: readonly Value[] } & Partial<RuleDefault>,
): Setting<Value | undefined>;
export function oneOf<const Value extends string>(
  options: Described & { values: readonly Value[]; default?: Value; defaultText?: string },
): Setting<Value | undefined> {
  const { values } = options;
  return setting(
    `one of ${values.map(code).join(', ')}`,
    options.defaultText ?? (options.default === undefined ? 'unset' : code(options.default)),
    options,
    (value, variable) => {
      if (!(values as readonly string[]).includes(value)) {
        throw new ConfigError(variable, `must be one of ${values.join(', ')}`);
      }
      return value as Value;
    },
    () => options.default,
  );
}

export function list(
  options: Described & { default: readonly string[]; defaultText?: string; values?: readonly string[] },
): Setting<string[]> {
  return setting(
    options.values ? `comma-separated, of ${options.values.map(code).join(', ')}` : 'comma-separated list',
    options.defaultText ?? (options.default.length === 0 ? 'none' : code(options.default.join(','))),
    options,
    (value, variable) => {
      const items = value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      const unknown = options.values && items.find((item) => !options.values!.includes(item));
      if (unknown !== undefined) {
        throw new ConfigError(
          variable,
          `names unknown value "${unknown}" (known: ${options.values!.join(', ')})`,
        );
      }
      return items;
    },
    () => [...options.default],
  );
}

function httpUrl(value: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(variable, `must be an http(s) URL, got "${value}"`);
  }
  // An issuer is compared as an exact string with the `iss` claim (Auth0's ends in a slash): kept as written.
  return value;
}

export function url(options: Described & Partial<RuleDefault>): Setting<string | undefined> {
  return setting('http(s) URL', options.defaultText ?? 'unset', options, httpUrl, () => undefined);
}

export function postgresUrl(options: Described & { defaultText: string }): Setting<string> {
  return setting(
    '`postgres://` URL',
    options.defaultText,
    options,
    (value, variable) => {
      if (!/^postgres(ql)?:\/\//.test(value)) throw new ConfigError(variable, 'must be a postgres:// URL');
      return value;
    },
    required,
  );
}

export function fraction(options: Described & { default: number }): Setting<number> {
  return setting(
    'number 0–1',
    code(String(options.default)),
    options,
    (value, variable) => {
      if (!/^\d*\.?\d+$/.test(value) || Number(value) > 1) {
        throw new ConfigError(variable, `must be a number from 0 to 1, got "${value}"`);
      }
      return Number(value);
    },
    () => options.default,
  );
}

/** Comma-separated `key=value` pairs with percent-encoded values (the OpenTelemetry variables' format). */
export function keyValuePairs(options: Described): Setting<Record<string, string>> {
  return setting(
    '`key=value,…`',
    'none',
    options,
    (value, variable) => {
      const pairs: Record<string, string> = {};
      for (const item of value.split(',').map((part) => part.trim())) {
        if (item === '') continue;
        const separator = item.indexOf('=');
        const key = item.slice(0, separator).trim();
        if (separator <= 0 || key === '') {
          throw new ConfigError(variable, 'must be comma-separated key=value pairs');
        }
        try {
          pairs[key] = decodeURIComponent(item.slice(separator + 1).trim());
        } catch {
          throw new ConfigError(variable, `has a badly percent-encoded value for "${key}"`);
        }
      }
      return pairs;
    },
    () => ({}),
  );
}

/** A value with a structure of its own, checked by `parse` (which names the variable in its errors). */
export function structured<T>(
  options: Described & {
    type: string;
    defaultText: string;
    default: T;
    parse: (value: string, variable: string) => T;
  },
): Setting<T> {
  return setting(options.type, options.defaultText, options, options.parse, () => options.default);
}

/**
 * A TEMPORAL_* connection variable, read by Temporal's own environment configuration (@temporalio/envconfig) so the
 * processes, the `temporal` CLI and the SDK samples share one set of names; the row documents it.
 */
export function temporalEnvconfig(
  options: Described & { type: string; defaultText: string },
): Setting<undefined> {
  return setting(
    options.type,
    options.defaultText,
    options,
    () => undefined,
    () => undefined,
  );
}

/** Reads a file a setting names, where it is used; a file that cannot be read stops the start naming the variable. */
export function readSettingFile(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(variable, `names a file that cannot be read (${reason}): ${file}`);
  }
}
