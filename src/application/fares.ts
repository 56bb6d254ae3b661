// Fares: discount codes agents and admins make and read, and the catalogue's passenger types and party prices.
import type { Knex } from 'knex';
import {
  createDiscountCode as storeDiscountCode,
  listDiscountCodes as readDiscountCodePage,
  readDiscountCode,
  type StoredDiscountCode,
} from '../db/discount-codes';
import { existingRouteIds } from '../db/routes';
import type { Actor } from '../domain/actor';
import { validateDiscountCodeInput, type DiscountCodeInputData } from '../domain/discount-codes';
import { notFound, validationFailed } from '../domain/errors';
import type { PassengerType } from '../domain/passenger-types';
import { toTimestamp } from '../domain/time';
import type { SegmentRequest } from '../domain/segments';
import type { CatalogApplication, Page, PageRequest, RouteAvailabilityView } from './interface';

/** A code as agents and admins read it: its terms, usages and what remains of them. */
export interface DiscountCodeView extends StoredDiscountCode {
  readonly remaining: number;
}

export interface FareApplication {
  /** Validated as validateDiscountCodeInput says, its routes existing; stored with no usages. */
  createDiscountCode(actor: Actor, input: DiscountCodeInputData): Promise<DiscountCodeView>;
  listDiscountCodes(actor: Actor, request: PageRequest): Promise<Page<DiscountCodeView>>;
  /** NOT_FOUND when there is no such code (in any letter case). */
  getDiscountCode(actor: Actor, code: string): Promise<DiscountCodeView>;
  listPassengerTypes(routeId: string): Promise<readonly PassengerType[]>;
  getRouteAvailability(
    routeId: string,
    date: string,
    segment?: SegmentRequest,
    passengers?: string,
  ): Promise<RouteAvailabilityView>;
}

export interface FareApplicationDependencies {
  database: Knex;
  /** The catalogue whose caches serve passenger types and availability. */
  catalog: CatalogApplication;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
}

function viewOf(code: StoredDiscountCode): DiscountCodeView {
  return { ...code, remaining: Math.max(0, code.maxUsages - code.usages) };
}

export function createFareApplication(dependencies: FareApplicationDependencies): FareApplication {
  const { database, catalog } = dependencies;
  const now = dependencies.now ?? Date.now;
  return {
    async createDiscountCode(actor, input) {
      const draft = validateDiscountCodeInput(input, toTimestamp(new Date(now())));
      const existing = new Set(await existingRouteIds(database, draft.routeIds));
      const unknown = draft.routeIds.flatMap((routeId, index) =>
        existing.has(routeId) ? [] : [{ field: `route_ids[${index}]`, message: `no route ${routeId}` }],
      );
      if (unknown.length > 0) throw validationFailed(unknown);
      return viewOf(await storeDiscountCode(database, draft, actor.userId));
    },

    async listDiscountCodes(_actor, request) {
      const page = await readDiscountCodePage(database, request);
      return {
        items: page.codes.map(viewOf),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
      };
    },

    async getDiscountCode(_actor, code) {
      const found = await readDiscountCode(database, code);
      if (found === undefined) throw notFound('Discount code', code);
      return viewOf(found);
    },

    listPassengerTypes: (routeId) => catalog.listPassengerTypes(routeId),

    getRouteAvailability: (routeId, date, segment, passengers) =>
      catalog.getRouteAvailability(routeId, date, segment, passengers),
  };
}
