// The one paging module of every listing: page sizes, tokens tied to their listing and filters, pages read one row past.
import type { Knex } from 'knex';
import { DomainError } from '../../../src/domain/errors';
import {
  defaultPageSize,
  encodePageToken,
  maximumPageSize,
  maximumPageTokenLength,
  pageWindow,
  readPage,
  type KeysetListing,
} from '../../../src/db/paging';
import { bookingListing } from '../../../src/db/booking-read-model';

interface NumberRow {
  value: number;
}

const numbers: KeysetListing<NumberRow, number> = {
  name: 'numbers',
  positionOf: (row) => row.value,
  readPosition: (value) => (Number.isInteger(value) ? (value as number) : undefined),
};

const letters: KeysetListing<NumberRow, number> = { ...numbers, name: 'letters' };

function refusal(work: () => unknown): DomainError {
  try {
    work();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

/** A query that answers `rows` and records the limit it was given, as a knex query builder would. */
function queryOf(rows: NumberRow[]): { query: Knex.QueryBuilder; limits: number[] } {
  const limits: number[] = [];
  const query = {
    limit(count: number) {
      limits.push(count);
      return Promise.resolve(rows.slice(0, count));
    },
  };
  return { query: query as unknown as Knex.QueryBuilder, limits };
}

const rowsUpTo = (count: number): NumberRow[] =>
  Array.from({ length: count }, (_, index) => ({ value: index }));

describe('page size', () => {
  it('is the default when absent or 0 (proto3 unset), and 1 to the maximum otherwise', () => {
    expect(pageWindow(numbers, {}, null).pageSize).toBe(defaultPageSize);
    expect(pageWindow(numbers, { pageSize: 0 }, null).pageSize).toBe(defaultPageSize);
    expect(pageWindow(numbers, { pageSize: 1 }, null).pageSize).toBe(1);
    expect(pageWindow(numbers, { pageSize: maximumPageSize }, null).pageSize).toBe(maximumPageSize);
    for (const pageSize of [-1, maximumPageSize + 1, 2.5]) {
      expect(refusal(() => pageWindow(numbers, { pageSize }, null)).fieldViolations).toEqual([
        { field: 'page_size', message: `must be a whole number from 1 to ${maximumPageSize}` },
      ]);
    }
  });
});

describe('pages and tokens', () => {
  it('reads one row past the page and hands out a token that continues after the last row shown', async () => {
    const first = queryOf(rowsUpTo(5));
    const page = await readPage(pageWindow(numbers, { pageSize: 2 }, { kind: 'all' }), first.query);
    expect(first.limits).toEqual([3]);
    expect(page.rows).toEqual([{ value: 0 }, { value: 1 }]);
    expect(page.nextPageToken).toMatch(/^[A-Za-z0-9_-]+$/);

    const next = pageWindow(numbers, { pageSize: 2, pageToken: page.nextPageToken }, { kind: 'all' });
    expect(next.after).toBe(1);
    expect(page.nextPageToken).toBe(encodePageToken(numbers, { kind: 'all' }, 1));
  });

  it('gives no token on the last page, also when it is exactly full', async () => {
    const window = pageWindow(numbers, { pageSize: 3 }, null);
    expect(await readPage(window, queryOf(rowsUpTo(3)).query)).toEqual({ rows: rowsUpTo(3) });
    expect(await readPage(window, queryOf([]).query)).toEqual({ rows: [] });
  });

  it('refuses a token of another listing, of other filters, tampered with or too long, naming page_token', () => {
    const token = encodePageToken(numbers, { kind: 'all' }, 4);
    const foreign = [
      () => pageWindow(letters, { pageToken: token }, { kind: 'all' }),
      () => pageWindow(numbers, { pageToken: token }, { kind: 'some' }),
      () =>
        pageWindow(
          numbers,
          { pageToken: encodePageToken(numbers, { kind: 'all' }, 'four' as never) },
          { kind: 'all' },
        ),
      () => pageWindow(numbers, { pageToken: 'garbage!' }, { kind: 'all' }),
      () => pageWindow(numbers, { pageToken: 'A'.repeat(maximumPageTokenLength + 1) }, { kind: 'all' }),
      () =>
        pageWindow(numbers, { pageToken: Buffer.from('not json').toString('base64url') }, { kind: 'all' }),
    ];
    for (const attempt of foreign) {
      expect(refusal(attempt).fieldViolations).toEqual([
        { field: 'page_token', message: 'is not a page token of this listing; start again without it' },
      ]);
    }
  });

  it('treats an empty token as none', () => {
    expect(pageWindow(numbers, { pageToken: '' }, null).after).toBeUndefined();
  });
});

describe('the bookings listing', () => {
  it('continues only after a position it could have written: a microsecond UTC time and a UUID', () => {
    const id = '4f1d2c3b-0000-4000-8000-000000000001';
    const good = { createdAt: '2026-11-20T09:00:00.123456Z', id };
    const filters = { status: null };
    expect(
      pageWindow(bookingListing, { pageToken: encodePageToken(bookingListing, filters, good) }, filters)
        .after,
    ).toEqual(good);
    for (const position of [
      { createdAt: '2026-11-20T09:00:00.123456Z\u0000', id },
      { createdAt: '2026-11-20T09:00:00Z', id },
      { createdAt: good.createdAt, id: 'not-a-uuid' },
    ]) {
      const token = encodePageToken(bookingListing, filters, position);
      expect(refusal(() => pageWindow(bookingListing, { pageToken: token }, filters)).code).toBe(
        'VALIDATION_FAILED',
      );
    }
  });
});
