// AIP-158 keyset paging of every listing: the page-size rule, opaque page tokens tied to their listing, the page.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { validationFailed } from '../domain/errors';

export const defaultPageSize = 20;
export const maximumPageSize = 100;
/** Page tokens are base64url and at most this long on both fronts (the REST contract's PageToken). */
export const maximumPageTokenLength = 512;
const pageTokenPattern = /^[A-Za-z0-9_-]+$/;
const pageTokenVersion = 2;

/** A listing paged by a key of its sort order: what a page token records of the last row, and reads back. */
export interface KeysetListing<Row, Position> {
  /** Written into its tokens, so a token of one listing never continues another. */
  readonly name: string;
  /** Where a page ending with `row` stopped. */
  positionOf(row: Row): Position;
  /** The position a token carries, or undefined when it is not one `positionOf` writes (a tampered token). */
  readPosition(value: unknown): Position | undefined;
}

export interface PageRequest {
  /** Absent or 0 (proto3's unset) means the default. */
  pageSize?: number;
  pageToken?: string;
}

/** One page to read: its size, where it starts, and what the next page's token must be tied to. */
export interface PageWindow<Row, Position> {
  readonly listing: KeysetListing<Row, Position>;
  readonly pageSize: number;
  /** The last row of the previous page; undefined on the first page. */
  readonly after?: Position;
  readonly filterDigest: string;
}

export interface RowPage<Row> {
  rows: Row[];
  /** Absent on the last page. */
  nextPageToken?: string;
}

interface PageTokenContent {
  v: number;
  /** Listing name. */
  l: string;
  /** Digest of the filters of the request that issued the token. */
  f: string;
  /** Position of the last row of the page. */
  p: unknown;
}

/**
 * Absent or 0 means the default. Anything else must be 1 to the maximum on both fronts: the REST contract
 * refuses more, so gRPC does too rather than quietly answering fewer items than asked for.
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

/** Digests of the filters seen last: the same searches come again and again, and a fresh hash costs more than a read. */
const recentDigests = new Map<string, string>();
const maximumRecentDigests = 1000;

/** The listing builds its filters object the same way every time, so equal filters give equal JSON. */
function digestOf(filters: unknown): string {
  const text = JSON.stringify(filters) ?? 'null';
  let digest = recentDigests.get(text);
  if (digest === undefined) {
    digest = createHash('sha256').update(text).digest('base64url').slice(0, 16);
    if (recentDigests.size >= maximumRecentDigests) recentDigests.delete(recentDigests.keys().next().value!);
    recentDigests.set(text, digest);
  }
  return digest;
}

function tokenOf(listingName: string, filterDigest: string, position: unknown): string {
  const content: PageTokenContent = { v: pageTokenVersion, l: listingName, f: filterDigest, p: position };
  return Buffer.from(JSON.stringify(content), 'utf8').toString('base64url');
}

const foreignToken = () =>
  validationFailed([
    { field: 'page_token', message: 'is not a page token of this listing; start again without it' },
  ]);

function decodePageToken<Row, Position>(
  listing: KeysetListing<Row, Position>,
  token: string,
  filterDigest: string,
): Position {
  if (token.length > maximumPageTokenLength || !pageTokenPattern.test(token)) throw foreignToken();
  let content: Partial<PageTokenContent> | null;
  try {
    content = JSON.parse(
      Buffer.from(token, 'base64url').toString('utf8'),
    ) as Partial<PageTokenContent> | null;
  } catch {
    throw foreignToken();
  }
  if (
    typeof content !== 'object' ||
    content === null ||
    content.v !== pageTokenVersion ||
    content.l !== listing.name ||
    content.f !== filterDigest
  ) {
    throw foreignToken();
  }
  const position = listing.readPosition(content.p);
  if (position === undefined) throw foreignToken();
  return position;
}

/** The token that continues the listing with these filters after `position`, as a page would issue it. */
export function encodePageToken<Row, Position>(
  listing: KeysetListing<Row, Position>,
  filters: unknown,
  position: Position,
): string {
  return tokenOf(listing.name, digestOf(filters), position);
}

/**
 * The page a request asks for. `filters` are the request's filters as the listing applies them (normalised): a
 * token continues only the listing and filters it was issued for, anything else is a 400 naming page_token.
 */
export function pageWindow<Row, Position>(
  listing: KeysetListing<Row, Position>,
  request: PageRequest,
  filters: unknown,
): PageWindow<Row, Position> {
  const pageSize = readPageSize(request.pageSize);
  const filterDigest = digestOf(filters);
  const after =
    request.pageToken === undefined || request.pageToken === ''
      ? undefined
      : decodePageToken(listing, request.pageToken, filterDigest);
  return { listing, pageSize, filterDigest, ...(after === undefined ? {} : { after }) };
}

/**
 * Reads the window's page from `query` (already filtered, ordered and started after `window.after`): one row
 * more than the page tells whether another page follows, and the token then points after the page's last row.
 */
export async function readPage<Row, Position>(
  window: PageWindow<Row, Position>,
  query: Knex.QueryBuilder,
): Promise<RowPage<Row>> {
  const rows = (await query.limit(window.pageSize + 1)) as Row[];
  const pageRows = rows.slice(0, window.pageSize);
  const last = pageRows.at(-1);
  if (rows.length <= window.pageSize || last === undefined) return { rows: pageRows };
  return {
    rows: pageRows,
    nextPageToken: tokenOf(window.listing.name, window.filterDigest, window.listing.positionOf(last)),
  };
}
