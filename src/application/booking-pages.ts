// AIP-158 paging for booking lists: page sizes with a default and a cap, and opaque keyset page tokens.
import { bookingStatuses, type BookingStatus } from '../domain/booking';
import { validationFailed } from '../domain/errors';
import { isUuid } from '../domain/validation';

export const defaultBookingPageSize = 20;
export const maximumBookingPageSize = 100;
const pageTokenVersion = 1;

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

/** Absent or 0 means the default; more than the maximum is lowered to it (AIP-158); negative is invalid. */
export function readPageSize(pageSize: number | undefined): number {
  if (pageSize === undefined || pageSize === 0) return defaultBookingPageSize;
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw validationFailed([{ field: 'page_size', message: 'must be a whole number from 0 to 100' }]);
  }
  return Math.min(pageSize, maximumBookingPageSize);
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
    typeof candidate.c !== 'string' ||
    Number.isNaN(Date.parse(candidate.c)) ||
    !isUuid(candidate.i) ||
    candidate.s !== status
  ) {
    throw invalidToken();
  }
  return { createdAt: candidate.c, id: candidate.i, status };
}
