// AIP-158 paging: the one page-size rule of every listing, and the opaque keyset page tokens of booking lists.
import { bookingStatuses, type BookingStatus } from '../domain/booking';
import { validationFailed } from '../domain/errors';
import { isUuid } from '../domain/validation';

export const defaultPageSize = 20;
export const maximumPageSize = 100;
/** Page tokens are base64url and at most this long on both fronts (the REST contract's PageToken). */
export const maximumPageTokenLength = 512;
const pageTokenPattern = /^[A-Za-z0-9_-]+$/;
const pageTokenVersion = 1;
/** created_at as the listing query writes it into a token, to the microsecond in UTC. */
const cursorTimestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Where the previous page stopped, and which request it belongs to. */
export interface BookingCursor {
  /** created_at of the last row, to the microsecond as PostgreSQL stores it. */
  createdAt: string;
  id: string;
  /** The status filter of the request that issued the token; a token only continues the same listing. */
  status: BookingStatus | null;
}

interface EncodedCursor {
  v: number;
  c: string;
  i: string;
  s: string | null;
}

/**
 * Absent or 0 (proto3's unset) means the default. Anything else must be 1 to the maximum on both fronts: the
 * REST contract refuses more, so gRPC does too rather than quietly answering fewer items than asked for.
 */
export function readPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined || pageSize === 0) return defaultPageSize;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maximumPageSize) {
    throw validationFailed([
      { field: 'page_size', message: `must be a whole number from 1 to ${maximumPageSize}` },
    ]);
  }
  return pageSize;
}

export function readStatusFilter(status: unknown): BookingStatus | null {
  if (status === undefined || status === null || status === '') return null;
  if (typeof status !== 'string' || !(bookingStatuses as readonly string[]).includes(status)) {
    throw validationFailed([{ field: 'status', message: `must be one of ${bookingStatuses.join(', ')}` }]);
  }
  return status as BookingStatus;
}

export function encodeBookingCursor(cursor: BookingCursor): string {
  const encoded: EncodedCursor = { v: pageTokenVersion, c: cursor.createdAt, i: cursor.id, s: cursor.status };
  return Buffer.from(JSON.stringify(encoded), 'utf8').toString('base64url');
}

const invalidToken = () =>
  validationFailed([
    { field: 'page_token', message: 'is not a page token of this listing; start again without it' },
  ]);

/** A token from another listing (another status filter) or one that was tampered with is a 400. */
export function decodeBookingCursor(token: string, status: BookingStatus | null): BookingCursor {
  if (token.length > maximumPageTokenLength || !pageTokenPattern.test(token)) throw invalidToken();
  let candidate: Partial<EncodedCursor>;
  try {
    candidate = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<EncodedCursor>;
  } catch {
    throw invalidToken();
  }
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    candidate.v !== pageTokenVersion ||
    // Date.parse alone lets trailing text through (a NUL among it), which the query would then send to SQL.
    typeof candidate.c !== 'string' ||
    !cursorTimestampPattern.test(candidate.c) ||
    Number.isNaN(Date.parse(candidate.c)) ||
    !isUuid(candidate.i) ||
    candidate.s !== status
  ) {
    throw invalidToken();
  }
  return { createdAt: candidate.c, id: candidate.i, status };
}
