// FareService handlers: each maps its request onto one FareApplication call and the result onto its response.
import type { ServerUnaryCall } from '@grpc/grpc-js';
import type { DiscountCodeView, FareApplication } from '../../application/fares';
import type { RouteAvailabilityView } from '../../application/interface';
import type { DomainError } from '../../domain/errors';
import type { DiscountKind as DomainDiscountKind } from '../../domain/discount-codes';
import type { PassengerType as DomainPassengerType } from '../../domain/passenger-types';
import {
  DiscountKind,
  FareServiceService,
  type DiscountCode,
  type FareServiceServer,
  type PassengerType,
} from '../../generated/com/example/bookings/v1/fare_service';
import { SeatStatus, type RouteAvailability } from '../../generated/com/example/bookings/v1/route';
import type { Logger } from '../../logger';
import type { AccessTokenVerifier } from './caller-authorization';
import { given, userUnaryHandlers } from './user-unary';

export interface FareServiceDependencies {
  readonly fares: FareApplication;
  readonly verifyAccessToken: AccessTokenVerifier;
  readonly logger: Logger;
  readonly serviceIdentityOf: (call: ServerUnaryCall<unknown, unknown>) => string | undefined;
  readonly onCallFailure?: (error: DomainError) => void;
}

const discountKinds: Readonly<Record<DomainDiscountKind, DiscountKind>> = {
  amount: DiscountKind.DISCOUNT_KIND_AMOUNT,
  percent: DiscountKind.DISCOUNT_KIND_PERCENT,
};

/** The domain's kind of a request's enum value; undefined (refused by the domain) for UNSPECIFIED or unknown. */
function domainKind(value: DiscountKind): DomainDiscountKind | undefined {
  const found = Object.entries(discountKinds).find(([, number]) => number === value);
  return found === undefined ? undefined : (found[0] as DomainDiscountKind);
}

export function toDiscountCodeMessage(view: DiscountCodeView): DiscountCode {
  return {
    code: view.code,
    kind: discountKinds[view.kind],
    value: view.value,
    currency: view.currency ?? '',
    validFrom: new Date(view.validFrom),
    validUntil: new Date(view.validUntil),
    routeIds: [...view.routeIds],
    maxUsages: view.maxUsages,
    usages: view.usages,
    remaining: view.remaining,
    createdAt: new Date(view.createdAt),
  };
}

export function toPassengerTypeMessage(type: DomainPassengerType): PassengerType {
  const rule = type.priceRule;
  return {
    code: type.code,
    name: type.name,
    minAge: type.minAge,
    maxAge: type.maxAge,
    priceRule: rule.kind === 'share' ? { sharePercent: rule.percent } : { perSegment: rule.amount },
    takesSeat: type.takesSeat,
    birthDateRequired: type.birthDateRequired,
    requiresCompanion: [...(type.requiresCompanion ?? [])],
  };
}

export function toRouteAvailabilityMessage(view: RouteAvailabilityView): RouteAvailability {
  return {
    routeId: view.routeId,
    date: view.date,
    trips: view.trips.map((trip) => ({
      tripId: trip.tripId,
      departureTime: new Date(trip.departureTime),
      arrivalTime: new Date(trip.arrivalTime),
      seatsTotal: trip.seatsTotal,
      seatsFree: trip.seatsFree,
      lowestPrice: trip.lowestPrice,
      seatMap: trip.seatMap.map((seat) => ({
        seatNumber: seat.seatNumber,
        fareClass: seat.fareClass,
        status: seat.status === 'FREE' ? SeatStatus.SEAT_STATUS_FREE : SeatStatus.SEAT_STATUS_TAKEN,
      })),
      partyFares: (trip.partyFares ?? []).map((fare) => ({
        fareClass: fare.fareClass,
        seatsFree: fare.seatsFree,
        total: fare.total,
        lines: fare.lines.map((line) => ({ ...line })),
      })),
    })),
  };
}

export function createFareServiceHandlers(dependencies: FareServiceDependencies): FareServiceServer {
  const { fares } = dependencies;
  const unary = userUnaryHandlers(dependencies, 'FareService');
  return {
    createDiscountCode: unary(FareServiceService.createDiscountCode, async (actor, request) => {
      const created = await fares.createDiscountCode(actor, {
        code: request.code,
        kind: domainKind(request.kind),
        value: request.value,
        currency: request.currency,
        validFrom: request.validFrom?.toISOString(),
        validUntil: request.validUntil?.toISOString(),
        routeIds: request.routeIds,
        maxUsages: request.maxUsages,
      });
      return { discountCode: toDiscountCodeMessage(created) };
    }),

    listDiscountCodes: unary(FareServiceService.listDiscountCodes, async (actor, request) => {
      const page = await fares.listDiscountCodes(actor, {
        pageSize: given(request.pageSize),
        pageToken: given(request.pageToken),
      });
      return {
        discountCodes: page.items.map(toDiscountCodeMessage),
        nextPageToken: page.nextPageToken ?? '',
      };
    }),

    getDiscountCode: unary(FareServiceService.getDiscountCode, async (actor, request) => ({
      discountCode: toDiscountCodeMessage(await fares.getDiscountCode(actor, request.code)),
    })),

    listPassengerTypes: unary(FareServiceService.listPassengerTypes, async (_actor, request) => ({
      passengerTypes: (await fares.listPassengerTypes(request.routeId)).map(toPassengerTypeMessage),
    })),

    getRouteAvailability: unary(FareServiceService.getRouteAvailability, async (_actor, request) => {
      const boardingStopCode = given(request.boardingStop);
      const alightingStopCode = given(request.alightingStop);
      const availability = await fares.getRouteAvailability(
        request.routeId,
        request.date,
        {
          ...(boardingStopCode === undefined ? {} : { boardingStopCode }),
          ...(alightingStopCode === undefined ? {} : { alightingStopCode }),
        },
        given(request.passengers),
      );
      return { availability: toRouteAvailabilityMessage(availability) };
    }),
  };
}
