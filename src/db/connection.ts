// Creates the knex instance every PostgreSQL user of the service shares, with JS-friendly type parsing.
import knex, { type Knex } from 'knex';
import { types as pgTypes } from 'pg';

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const DATE_OID = 1082;
const MAXIMUM_EXACT_SIGNIFICANT_DIGITS = 15;

export interface DatabaseOptions {
  /** Largest number of pooled connections (default 10); idle connections are closed, none are kept open. */
  poolSize?: number;
  /** Shown in pg_stat_activity, so operators can tell the API from the worker. */
  applicationName?: string;
}

export class UnsafeNumberError extends RangeError {
  override readonly name = 'UnsafeNumberError';
}

/**
 * bigint columns hold integer minor units and counts; a value JS cannot hold exactly must fail loudly
 * instead of being rounded into a wrong amount.
 */
export function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw new UnsafeNumberError(`int8 value ${text} is outside the safe integer range of JavaScript numbers`);
  }
  return value;
}

/** numeric arrives from SUM() over bigint and from numeric columns; the same rule applies. */
export function parseNumeric(text: string): number {
  if (text === 'NaN') return Number.NaN;
  if (/^-?\d+$/.test(text)) return parseInt8(text);
  const significantDigits = text.replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '').length;
  if (significantDigits > MAXIMUM_EXACT_SIGNIFICANT_DIGITS) {
    throw new UnsafeNumberError(
      `numeric value ${text} has more digits than a JavaScript number holds exactly`,
    );
  }
  return Number(text);
}

/** Turns one column value, as PostgreSQL sends it, into its JS value. */
type ValueParser = (value: string) => unknown;

export interface TypeParserTable {
  getTypeParser(oid: number, format: string): ValueParser;
}

/** Overrides scoped to our connections only; pg's global parser table stays untouched for other libraries. */
export function createTypeParsers(): TypeParserTable {
  const textOverrides = new Map<number, ValueParser>([
    [INT8_OID, parseInt8],
    [NUMERIC_OID, parseNumeric],
    // A calendar date has no time zone; pg's default turns it into local midnight, which shifts dates.
    [DATE_OID, (value) => value],
  ]);
  return {
    getTypeParser(oid, format) {
      const override = format === 'text' ? textOverrides.get(oid) : undefined;
      if (override !== undefined) return override;
      // pg-types declares its parsers as `any`; each one parses a single text (or binary) value.
      return pgTypes.getTypeParser(oid, format === 'binary' ? 'binary' : 'text') as ValueParser;
    },
  };
}

export function createDatabase(databaseUrl: string, options: DatabaseOptions = {}): Knex {
  const poolSize = options.poolSize ?? 10;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new RangeError(`poolSize must be a positive integer, got ${poolSize}`);
  }
  return knex({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      types: createTypeParsers(),
      ...(options.applicationName ? { application_name: options.applicationName } : {}),
    },
    pool: { min: 0, max: poolSize },
  });
}

/** One trivial statement: answers once PostgreSQL takes statements on a pooled connection, fails otherwise. */
export async function pingDatabase(database: Knex): Promise<void> {
  await database.raw('select 1');
}
