// Thin handlers of the /v1 operations (and their /api twins): contract JSON in, one application call, contract JSON out.
import type {
  BookingApplication,
  BookingView,
  CatalogApplication,
  UserApplication,
} from '../../application/interface';
import type { TicketApplication } from '../../application/tickets';
import type { BoardingApplication } from '../../application/boarding';
import type { PartnerWebhookApplication } from '../../application/partner-webhooks';
import type { RefundQuoteApplication } from '../../application/refund-quotes';
import type { FareApplication } from '../../application/fares';
import { currentUserAlias } from '../../application/users';
import type { Actor } from '../../domain/actor';
import type { BookingStatus } from '../../domain/booking';
import type { DomainError } from '../../domain/errors';
import {
  bookingEntityTag,
  bookingJson,
  cancelBookingInput,
  cancelPassengersInput,
  cancelTripInput,
  confirmPaymentInput,
  createBookingInput,
  routeAvailabilityJson,
  routeJson,
  ticketJson,
  tripRevocationsJson,
  tripCancellationJson,
  updateBookingInput,
  userJson,
} from './contract-mapping';
import { boardingJson, manifestPassengerJson, recordBoardingInput } from './boarding-mapping';
import { refundQuoteInput, refundQuoteJson } from './refund-quote-mapping';
import { discountCodeInput, discountCodeJson, passengerTypeJson } from './fare-mapping';
import { serializedOnce, type RestResponse } from './responses';
import {
  rotateSecretInput,
  webhookDeliveryJson,
  webhookEndpointChangesInput,
  webhookEndpointInput,
  webhookEndpointJson,
  webhookEndpointSecretJson,
  webhookPingJson,
} from './webhook-mapping';

/** A request that passed authentication, authorization and validation against the document. */
export interface OperationRequest {
  actor: Actor;
  /** Path, query and header parameters, coerced to their declared types; header names in lower case. */
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  body: unknown;
  /** `/v1` or `/api`: links in the response stay under the prefix the client used. */
  prefix: string;
  /** Epoch milliseconds when the request arrived, when the request-timeout middleware saw it. */
  receivedAt?: number;
  /**
   * With an Idempotency-Key: the id its key reserves for what the request makes (the booking of a create, the
   * payment attempt of a confirmation), the same for every retry with that key.
   */
  reservedId?: string;
}

export type OperationHandler = (request: OperationRequest) => Promise<RestResponse>;

export interface Applications {
  bookings: BookingApplication;
  catalog: CatalogApplication;
  users: UserApplication;
  tickets: TicketApplication;
  boarding: BoardingApplication;
  webhooks: PartnerWebhookApplication;
  refundQuotes: RefundQuoteApplication;
  fares: FareApplication;
}

const jsonType = 'application/json; charset=utf-8';

function ok(body: unknown, headers: Record<string, string> = {}): RestResponse {
  return { status: 200, headers: { 'content-type': jsonType, ...headers }, body };
}

function bookingResponse(
  booking: BookingView,
  status = 200,
  headers: Record<string, string> = {},
): RestResponse {
  return {
    status,
    headers: { 'content-type': jsonType, etag: bookingEntityTag(booking), ...headers },
    body: bookingJson(booking),
  };
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/**
 * `"7"` → 7; `*` matches whatever version is current (RFC 9110), so it asks for none. The document's pattern has
 * already refused anything else.
 */
function versionFromEntityTag(value: unknown): number | undefined {
  const tag = String(value);
  return tag === '*' ? undefined : Number(tag.replace(/"/g, ''));
}

/** A command's id (its Idempotency-Key's reservation) and arrival, as the application takes them. */
function commandOptions(reservedId: string | undefined, receivedAt: number | undefined) {
  return {
    ...(reservedId === undefined ? {} : { commandId: reservedId }),
    ...(receivedAt === undefined ? {} : { receivedAt }),
  };
}

/** Handlers by canonical operationId; an `/api` twin runs its canonical operation's handler. */
export function createOperationHandlers(applications: Applications): Record<string, OperationHandler> {
  const { bookings, catalog, users, tickets, boarding, webhooks, refundQuotes, fares } = applications;
  return {
    async createBooking({ actor, body, prefix, reservedId, receivedAt }) {
      // The key's reserved id is the booking's: a retry whose first answer was lost (the process died, or the
      // answer was 202 still processing) lands on the same booking. X-Request-Id is only a log correlation id.
      const booking = await bookings.createBooking(actor, createBookingInput(body), {
        ...(reservedId === undefined ? {} : { bookingId: reservedId }),
        ...(receivedAt === undefined ? {} : { receivedAt }),
      });
      return bookingResponse(booking, 201, { location: `${prefix}/bookings/${booking.id}` });
    },

    async listBookings({ actor, query }) {
      const page = await bookings.listBookings(actor, {
        status: optionalString(query.status) as BookingStatus | undefined,
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      return ok({ bookings: page.items.map(bookingJson), next_page_token: page.nextPageToken ?? null });
    },

    async getBooking({ actor, path }) {
      return bookingResponse(await bookings.getBooking(actor, String(path.booking_id)));
    },

    async updateBooking({ actor, path, headers, body, reservedId, receivedAt }) {
      const expectedVersion = versionFromEntityTag(headers['if-match']);
      const booking = await bookings.updateBooking(actor, String(path.booking_id), updateBookingInput(body), {
        ...commandOptions(reservedId, receivedAt),
        ...(expectedVersion === undefined ? {} : { expectedVersion }),
      });
      return bookingResponse(booking);
    },

    async cancelBooking({ actor, path, body, reservedId, receivedAt }) {
      return bookingResponse(
        await bookings.cancelBooking(
          actor,
          String(path.booking_id),
          cancelBookingInput(body),
          commandOptions(reservedId, receivedAt),
        ),
      );
    },

    async cancelPassengers({ actor, path, body, reservedId, receivedAt }) {
      return bookingResponse(
        await bookings.cancelPassengers(
          actor,
          String(path.booking_id),
          cancelPassengersInput(body),
          commandOptions(reservedId, receivedAt),
        ),
      );
    },

    async confirmPayment({ actor, path, body, reservedId, receivedAt }) {
      return bookingResponse(
        await bookings.confirmPayment(actor, String(path.booking_id), confirmPaymentInput(body), {
          ...(reservedId === undefined ? {} : { attemptId: reservedId }),
          ...(receivedAt === undefined ? {} : { receivedAt }),
        }),
      );
    },

    async createRefundQuote({ actor, path, body, prefix }) {
      const quote = await refundQuotes.quoteRefund(actor, String(path.booking_id), refundQuoteInput(body));
      return {
        status: 201,
        headers: {
          'content-type': jsonType,
          location: `${prefix}/bookings/${quote.bookingId}/refund-quotes/${quote.id}`,
          'cache-control': 'no-store',
        },
        body: refundQuoteJson(quote),
      };
    },

    async getRefundQuote({ actor, path }) {
      const quote = await refundQuotes.getRefundQuote(actor, String(path.booking_id), String(path.quote_id));
      return ok(refundQuoteJson(quote), { 'cache-control': 'no-store' });
    },

    async cancelTrip({ actor, path, body, prefix, receivedAt }) {
      const tripId = String(path.trip_id);
      const cancellation = await bookings.cancelTrip(
        actor,
        tripId,
        cancelTripInput(body),
        receivedAt === undefined ? {} : { receivedAt },
      );
      return {
        status: 202,
        headers: { 'content-type': jsonType, location: `${prefix}/trips/${tripId}/cancellation` },
        body: tripCancellationJson(cancellation),
      };
    },

    async getTripCancellation({ actor, path }) {
      return ok(tripCancellationJson(await bookings.getTripCancellation(actor, String(path.trip_id))));
    },

    async listRoutes({ query }) {
      const page = await catalog.listRoutes({
        origin: optionalString(query.origin),
        destination: optionalString(query.destination),
        date: optionalString(query.date),
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      // A page answered from the route cache is the same object each time: its JSON is made once.
      return ok(
        serializedOnce(page, () => ({
          routes: page.items.map(routeJson),
          next_page_token: page.nextPageToken ?? null,
        })),
      );
    },

    async getRouteAvailability({ path, query }) {
      const boardingStopCode = optionalString(query.boarding_stop);
      const alightingStopCode = optionalString(query.alighting_stop);
      const availability = await catalog.getRouteAvailability(
        String(path.route_id),
        String(query.date),
        {
          ...(boardingStopCode === undefined ? {} : { boardingStopCode }),
          ...(alightingStopCode === undefined ? {} : { alightingStopCode }),
        },
        optionalString(query.passengers),
      );
      // Identical reads in flight share one answer, and then one serialization.
      return ok(serializedOnce(availability, () => routeAvailabilityJson(availability)));
    },

    async listPassengerTypes({ path }) {
      const types = await fares.listPassengerTypes(String(path.route_id));
      return ok({ passenger_types: types.map(passengerTypeJson) });
    },

    async createDiscountCode({ actor, body, prefix }) {
      const code = await fares.createDiscountCode(actor, discountCodeInput(body));
      return {
        status: 201,
        headers: { 'content-type': jsonType, location: `${prefix}/discount-codes/${code.code}` },
        body: discountCodeJson(code),
      };
    },

    async listDiscountCodes({ actor, query }) {
      const page = await fares.listDiscountCodes(actor, {
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      return ok({
        discount_codes: page.items.map(discountCodeJson),
        next_page_token: page.nextPageToken ?? null,
      });
    },

    async getDiscountCode({ actor, path }) {
      return ok(discountCodeJson(await fares.getDiscountCode(actor, String(path.code))));
    },

    async getCurrentUser({ actor }) {
      return ok(userJson(await users.getUser(actor, currentUserAlias)));
    },

    async getUser({ actor, path }) {
      return ok(userJson(await users.getUser(actor, String(path.user_id))));
    },

    async listBookingTickets({ actor, path }) {
      const list = await tickets.listTickets(actor, String(path.booking_id));
      return ok({ tickets: list.map(ticketJson) }, { 'cache-control': 'no-store' });
    },

    async getTicketPdf({ actor, path }) {
      const pdf = await tickets.ticketPdf(actor, String(path.booking_id), String(path.passenger_id));
      return {
        status: 200,
        headers: {
          'content-type': 'application/pdf',
          'content-disposition': `attachment; filename="${pdf.fileName}"`,
          'cache-control': 'no-store',
        },
        body: pdf.content,
      };
    },

    async getTicketKeySet() {
      return ok(await tickets.ticketKeySet(), { 'cache-control': 'public, max-age=300' });
    },

    async listTripTicketRevocations({ actor, path }) {
      return ok(tripRevocationsJson(await tickets.tripRevocations(actor, String(path.trip_id))), {
        'cache-control': 'no-store',
      });
    },

    async recordBoarding({ actor, path, body }) {
      return ok(
        boardingJson(await boarding.recordBoarding(actor, String(path.trip_id), recordBoardingInput(body))),
      );
    },

    async getTripManifest({ actor, path, query }) {
      const page = await boarding.tripManifest(actor, String(path.trip_id), {
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      return ok(
        { passengers: page.items.map(manifestPassengerJson), next_page_token: page.nextPageToken ?? null },
        { 'cache-control': 'no-store' },
      );
    },

    async createWebhookEndpoint({ actor, body, prefix }) {
      const created = await webhooks.createEndpoint(actor, webhookEndpointInput(body));
      return {
        status: 201,
        headers: {
          'content-type': jsonType,
          location: `${prefix}/webhooks/endpoints/${created.endpoint.id}`,
          'cache-control': 'no-store',
        },
        body: webhookEndpointSecretJson(created),
      };
    },

    async listWebhookEndpoints({ actor, query }) {
      const page = await webhooks.listEndpoints(actor, {
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      return ok({
        endpoints: page.items.map(webhookEndpointJson),
        next_page_token: page.nextPageToken ?? null,
      });
    },

    async getWebhookEndpoint({ actor, path }) {
      return ok(webhookEndpointJson(await webhooks.getEndpoint(actor, String(path.endpoint_id))));
    },

    async updateWebhookEndpoint({ actor, path, body }) {
      const endpoint = await webhooks.updateEndpoint(
        actor,
        String(path.endpoint_id),
        webhookEndpointChangesInput(body),
      );
      return ok(webhookEndpointJson(endpoint));
    },

    async deleteWebhookEndpoint({ actor, path }) {
      await webhooks.deleteEndpoint(actor, String(path.endpoint_id));
      return { status: 204, headers: {}, body: null };
    },

    async rotateWebhookSecret({ actor, path, body }) {
      const rotated = await webhooks.rotateSecret(actor, String(path.endpoint_id), rotateSecretInput(body));
      return ok(webhookEndpointSecretJson(rotated), { 'cache-control': 'no-store' });
    },

    async pingWebhookEndpoint({ actor, path }) {
      return ok(webhookPingJson(await webhooks.pingEndpoint(actor, String(path.endpoint_id))));
    },

    async listWebhookDeliveries({ actor, path, query }) {
      const page = await webhooks.listDeliveries(actor, String(path.endpoint_id), {
        status: optionalString(query.status),
        pageSize: optionalNumber(query.page_size),
        pageToken: optionalString(query.page_token),
      });
      return ok({
        deliveries: page.items.map(webhookDeliveryJson),
        next_page_token: page.nextPageToken ?? null,
      });
    },

    async getWebhookDelivery({ actor, path }) {
      const delivery = await webhooks.getDelivery(actor, String(path.endpoint_id), String(path.delivery_id));
      return ok(webhookDeliveryJson(delivery));
    },

    async redeliverWebhookDelivery({ actor, path }) {
      const delivery = await webhooks.redeliver(actor, String(path.endpoint_id), String(path.delivery_id));
      return { status: 202, headers: { 'content-type': jsonType }, body: webhookDeliveryJson(delivery) };
    },
  };
}

/**
 * BOOKING_PROCESSING as REST says it: 202 Accepted, the booking's URL in Location and its id in the body. A
 * create (or a read) answers it when the booking's seats are still being held; GET on Location tells the outcome.
 */
export function bookingProcessingResponse(error: DomainError, prefix: string): RestResponse {
  const { bookingId } = error.details;
  // bookingProcessing() always names the booking; without an id there is no Location to answer with.
  if (typeof bookingId !== 'string') throw error;
  const retryAfterSeconds = Number(error.details.retryAfterSeconds);
  return {
    status: 202,
    headers: {
      'content-type': jsonType,
      location: `${prefix}/bookings/${bookingId}`,
      'retry-after': String(retryAfterSeconds),
    },
    body: {
      id: bookingId,
      status: 'PROCESSING',
      detail: error.message,
      retry_after_seconds: retryAfterSeconds,
    },
  };
}

/** Operations whose retries are made safe by an Idempotency-Key (REST's one idempotency mechanism). */
export const idempotentOperationIds: ReadonlySet<string> = new Set([
  'createBooking',
  'confirmPayment',
  'updateBooking',
  'cancelBooking',
  'cancelPassengers',
  'cancelTrip',
]);
