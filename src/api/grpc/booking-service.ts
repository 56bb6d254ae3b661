// BookingService handlers: each maps its request onto one application call and the result onto its response.
import { randomUUID } from 'node:crypto';
import { status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { BookingApplication } from '../../application/interface';
import type { TicketApplication } from '../../application/tickets';
import type { BoardingApplication } from '../../application/boarding';
import type { RefundQuoteApplication } from '../../application/refund-quotes';
import {
  bookingIdForRequest,
  commandIdForRequest,
  paymentAttemptIdForRequest,
} from '../../application/request-ids';
import type { Actor } from '../../domain/actor';
import { isWellFormedRequestId } from '../../domain/request-correlation';
import { runWithRequestId } from '../../observability/request-context';
import { toDomainError, unauthenticated, validationFailed, type DomainError } from '../../domain/errors';
import {
  BookingServiceService,
  type BookingServiceServer,
  type CancelBookingRequest,
  type CancelPassengersRequest,
  type CancelTripRequest,
  type ConfirmPaymentRequest,
  type CreateBookingRequest,
  type GetBookingRequest,
  type GetTripManifestRequest,
  type GetTripManifestResponse,
  type GetTicketPdfRequest,
  type ListTicketsRequest,
  type ListTripTicketRevocationsRequest,
  type GetTripCancellationRequest,
  type ListBookingsRequest,
  type ListBookingsResponse,
  type PassengerInput,
  type RecordBoardingRequest,
  type UpdateBookingRequest,
} from '../../generated/com/example/bookings/v1/booking_service';
import { toBoardingMessage, toManifestPassengerMessage } from './boarding-mapper';
import type { Logger } from '../../logger';
import {
  assertWellFormedRequest,
  bookingStatusFilter,
  toBookingMessage,
  toTicketMessage,
  toTripCancellationMessage,
} from './booking-mapper';
import type {
  GetRefundQuoteRequest,
  QuoteRefundRequest,
} from '../../generated/com/example/bookings/v1/refund_quote';
import { authorizeCaller, type AccessTokenVerifier } from './caller-authorization';
import { toRefundQuoteMessage } from './refund-quote-mapper';
import { grpcStatusOf } from './status-details';

export interface BookingServiceDependencies {
  readonly application: BookingApplication;
  readonly tickets: TicketApplication;
  readonly boarding: BoardingApplication;
  readonly refundQuotes: RefundQuoteApplication;
  readonly verifyAccessToken: AccessTokenVerifier;
  readonly logger: Logger;
  /** The allow-listed name of the call's client certificate; undefined on a plaintext server. */
  readonly serviceIdentityOf: (call: ServerUnaryCall<unknown, unknown>) => string | undefined;
  /** Hears the error each failed call ends with (the API's metrics count token failures and refusals). */
  readonly onCallFailure?: (error: DomainError) => void;
}

/** Whether a call may leave a change behind; one that outlives its caller is worth a warning to operators. */
type CallKind = 'read' | 'change';

function deadlineMs(call: ServerUnaryCall<unknown, unknown>): number {
  const deadline = call.getDeadline();
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * When a create must have its answer ready: the call's deadline less a fifth of the time it leaves, at most a
 * second, for the answer's way back. Undefined for a call without a deadline.
 */
function answerByFor(call: ServerUnaryCall<unknown, unknown>): number | undefined {
  const deadline = deadlineMs(call);
  if (!Number.isFinite(deadline)) return undefined;
  return deadline - Math.min(1000, Math.max(0, deadline - Date.now()) / 5);
}

function passengerInput(passenger: PassengerInput) {
  return {
    firstName: passenger.firstName,
    lastName: passenger.lastName,
    email: passenger.email,
    phone: passenger.phone,
    seatNumber: passenger.seatNumber,
    fareClass: passenger.fareClass,
    passengerType: passenger.passengerType,
    birthDate: passenger.birthDate,
  };
}

/**
 * The id every log line of the call and the workflow work it starts carry: the request's own request_id, else an
 * `x-request-id` metadata entry as REST takes it, else a new one.
 */
function requestIdOf(call: ServerUnaryCall<unknown, unknown>): string {
  const { requestId } = call.request as { requestId?: unknown };
  const [offered] = call.metadata.get('x-request-id');
  for (const candidate of [requestId, offered]) {
    if (typeof candidate === 'string' && isWellFormedRequestId(candidate)) return candidate;
  }
  return randomUUID();
}

/** When a command must be answered, and its id when the caller named it with a request_id. */
function commandOptions(
  actor: Actor,
  requestId: string,
  answerBy: number | undefined,
  receivedAt: number,
): { answerBy?: number; receivedAt: number; commandId?: string } {
  const named = given(requestId);
  return {
    ...(answerBy === undefined ? {} : { answerBy }),
    receivedAt,
    ...(named === undefined ? {} : { commandId: commandIdForRequest(actor, named) }),
  };
}

/** proto3 has no "unset" for scalars: '' and 0 mean "not given" where the contract says so. */
function given<T extends string | number>(value: T | undefined): T | undefined {
  return value === '' || value === 0 ? undefined : value;
}

export function createBookingServiceHandlers(dependencies: BookingServiceDependencies): BookingServiceServer {
  const { application, logger } = dependencies;

  function unary<Request, Response>(
    method: { readonly path: string },
    kind: CallKind,
    /**
     * `answerBy`: when the call's answer must be ready (epoch milliseconds), undefined without a deadline;
     * `receivedAt`: when the call arrived, so a create's answer time counts from there as REST's does.
     */
    run: (
      actor: Actor,
      request: Request,
      answerBy: number | undefined,
      receivedAt: number,
    ) => Promise<Response>,
  ) {
    const methodName = method.path.slice(method.path.lastIndexOf('/') + 1);
    const handle = (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>): void => {
      const answerBy = answerByFor(call);
      const startedAt = Date.now();
      const serviceIdentity = dependencies.serviceIdentityOf(call);
      let userId: string | undefined;
      const finish = (code: status, error?: unknown) => {
        const line = {
          method: methodName,
          code: status[code],
          durationMs: Date.now() - startedAt,
          serviceIdentity,
          userId,
        };
        if (code === status.INTERNAL) logger.error({ ...line, err: error }, 'gRPC call failed');
        else logger.info(line, 'gRPC call');
      };

      const work = async (): Promise<Response | undefined> => {
        const caller = await authorizeCaller(
          call.metadata,
          serviceIdentity,
          method.path,
          dependencies.verifyAccessToken,
        );
        // Every BookingService operation acts for a user; a service-only call has no customer to act as.
        if (!caller.actor) throw unauthenticated('BookingService operations need a user token');
        userId = caller.actor.userId;
        assertWellFormedRequest(call.request as object);
        // A change once started is seen through (a create answers by `answerBy` with the booking id), so the
        // last moment to honour the deadline by doing nothing is before the call.
        if (call.cancelled || deadlineMs(call) <= Date.now()) {
          return undefined;
        }
        const response = await run(caller.actor, call.request, answerBy, startedAt);
        if (kind === 'change' && call.cancelled) {
          logger.warn(
            { method: methodName, userId },
            'change finished after the caller gave up or its deadline passed',
          );
        }
        return response;
      };

      work().then(
        (response) => {
          if (response === undefined) {
            const expired = deadlineMs(call) <= Date.now();
            finish(expired ? status.DEADLINE_EXCEEDED : status.CANCELLED);
            // grpc-js has usually answered the caller already; this covers a deadline that passed moments ago.
            callback({
              code: expired ? status.DEADLINE_EXCEEDED : status.CANCELLED,
              details: 'The call ended before the operation started; nothing was changed',
            });
            return;
          }
          finish(status.OK);
          callback(null, response);
        },
        (error: unknown) => {
          const domainError = toDomainError(error);
          const grpcStatus = grpcStatusOf(domainError);
          dependencies.onCallFailure?.(domainError);
          finish(grpcStatus.code, domainError.code === 'INTERNAL' ? error : undefined);
          callback(grpcStatus);
        },
      );
    };
    // Everything the call does and logs, its answer included, runs as part of its request.
    return (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>): void =>
      runWithRequestId(requestIdOf(call), () => handle(call, callback));
  }

  return {
    createBooking: unary(
      BookingServiceService.createBooking,
      'change',
      async (actor, request: CreateBookingRequest, answerBy, receivedAt) => {
        // Past answerBy the booking goes on and the caller gets BOOKING_PROCESSING with its id, not a deadline error.
        // gRPC's idempotency: the booking id follows from request_id, so a retry joins the same booking.
        const requestId = given(request.requestId);
        const booking = await application.createBooking(
          actor,
          {
            tripId: request.tripId,
            passengers: request.passengers.map(passengerInput),
            contactEmail: request.contactEmail,
            contactPhone: request.contactPhone,
            boardingStop: request.boardingStop,
            alightingStop: request.alightingStop,
            discountCode: request.discountCode,
            expectedTotal: request.expectedTotal,
          },
          {
            ...(requestId === undefined ? {} : { bookingId: bookingIdForRequest(actor, requestId) }),
            answerBy,
            receivedAt,
          },
        );
        return { booking: toBookingMessage(booking) };
      },
    ),

    getBooking: unary(BookingServiceService.getBooking, 'read', async (actor, request: GetBookingRequest) => {
      return { booking: toBookingMessage(await application.getBooking(actor, request.bookingId)) };
    }),

    updateBooking: unary(
      BookingServiceService.updateBooking,
      'change',
      async (actor, request: UpdateBookingRequest, answerBy, receivedAt) => {
        const booking = await application.updateBooking(
          actor,
          request.bookingId,
          {
            seatChanges: request.seatChanges.map((change) => ({
              passengerId: change.passengerId,
              seatNumber: change.seatNumber,
              fareClass: change.fareClass,
            })),
            addPassengers: request.addPassengers.map(passengerInput),
            passengerUpdates: request.passengerUpdates.map((update) => ({
              passengerId: update.passengerId,
              firstName: update.firstName,
              lastName: update.lastName,
              email: update.email,
              phone: update.phone,
            })),
            boardingStop: request.boardingStop,
            alightingStop: request.alightingStop,
            expectedTotal: request.expectedTotal,
          },
          {
            expectedVersion: given(request.expectedVersion),
            ...commandOptions(actor, request.requestId, answerBy, receivedAt),
          },
        );
        return { booking: toBookingMessage(booking) };
      },
    ),

    cancelBooking: unary(
      BookingServiceService.cancelBooking,
      'change',
      async (actor, request: CancelBookingRequest, answerBy, receivedAt) => {
        const booking = await application.cancelBooking(
          actor,
          request.bookingId,
          { reason: request.reason },
          commandOptions(actor, request.requestId, answerBy, receivedAt),
        );
        return { booking: toBookingMessage(booking) };
      },
    ),

    quoteRefund: unary(
      BookingServiceService.quoteRefund,
      'read',
      async (actor, request: QuoteRefundRequest) => {
        // proto3 has no unset list: an empty one asks for every travelling passenger, as REST's absent field does.
        const quote = await dependencies.refundQuotes.quoteRefund(
          actor,
          request.bookingId,
          request.passengerIds.length === 0 ? {} : { passengerIds: request.passengerIds },
        );
        return { quote: toRefundQuoteMessage(quote) };
      },
    ),

    getRefundQuote: unary(
      BookingServiceService.getRefundQuote,
      'read',
      async (actor, request: GetRefundQuoteRequest) => ({
        quote: toRefundQuoteMessage(
          await dependencies.refundQuotes.getRefundQuote(actor, request.bookingId, request.quoteId),
        ),
      }),
    ),

    cancelPassengers: unary(
      BookingServiceService.cancelPassengers,
      'change',
      async (actor, request: CancelPassengersRequest, answerBy, receivedAt) => {
        const booking = await application.cancelPassengers(
          actor,
          request.bookingId,
          { passengerIds: request.passengerIds, quoteId: request.quoteId, reason: request.reason },
          commandOptions(actor, request.requestId, answerBy, receivedAt),
        );
        return { booking: toBookingMessage(booking) };
      },
    ),

    cancelTrip: unary(
      BookingServiceService.cancelTrip,
      'change',
      async (actor, request: CancelTripRequest, answerBy, receivedAt) => {
        // proto3 has no unset string: an empty reason is a missing one, refused by the same rule as REST's.
        const cancellation = await application.cancelTrip(
          actor,
          request.tripId,
          { reason: given(request.reason) },
          { answerBy, receivedAt },
        );
        return { cancellation: toTripCancellationMessage(cancellation) };
      },
    ),

    getTripCancellation: unary(
      BookingServiceService.getTripCancellation,
      'read',
      async (actor, request: GetTripCancellationRequest) => ({
        cancellation: toTripCancellationMessage(await application.getTripCancellation(actor, request.tripId)),
      }),
    ),

    confirmPayment: unary(
      BookingServiceService.confirmPayment,
      'change',
      async (actor, request: ConfirmPaymentRequest, answerBy, receivedAt) => {
        const requestId = given(request.requestId);
        const booking = await application.confirmPayment(
          actor,
          request.bookingId,
          // proto3 has no presence: an empty payment_method was not given, and then payment_token is the one.
          request.paymentMethod === ''
            ? { paymentToken: request.paymentToken }
            : {
                paymentMethod: request.paymentMethod,
                ...(request.paymentToken === '' ? {} : { paymentToken: request.paymentToken }),
              },
          {
            answerBy,
            receivedAt,
            ...(requestId === undefined ? {} : { attemptId: paymentAttemptIdForRequest(actor, requestId) }),
          },
        );
        return { booking: toBookingMessage(booking) };
      },
    ),

    listBookings: unary(
      BookingServiceService.listBookings,
      'read',
      async (actor, request: ListBookingsRequest): Promise<ListBookingsResponse> => {
        const statusFilter = bookingStatusFilter(request.status);
        if (statusFilter === null) {
          throw validationFailed([{ field: 'status', message: 'must be a BookingStatus value' }]);
        }
        const page = await application.listBookings(actor, {
          status: statusFilter,
          pageSize: given(request.pageSize),
          pageToken: given(request.pageToken),
        });
        return { bookings: page.items.map(toBookingMessage), nextPageToken: page.nextPageToken ?? '' };
      },
    ),

    listTickets: unary(
      BookingServiceService.listTickets,
      'read',
      async (actor, request: ListTicketsRequest) => {
        const tickets = await dependencies.tickets.listTickets(actor, request.bookingId);
        return { tickets: tickets.map(toTicketMessage) };
      },
    ),

    getTicketPdf: unary(
      BookingServiceService.getTicketPdf,
      'read',
      async (actor, request: GetTicketPdfRequest) => {
        const pdf = await dependencies.tickets.ticketPdf(actor, request.bookingId, request.passengerId);
        return { fileName: pdf.fileName, content: pdf.content };
      },
    ),

    listTripTicketRevocations: unary(
      BookingServiceService.listTripTicketRevocations,
      'read',
      async (actor, request: ListTripTicketRevocationsRequest) => {
        const view = await dependencies.tickets.tripRevocations(actor, request.tripId);
        return {
          tripId: view.tripId,
          revocations: view.revocations.map((revocation) => ({
            ticketId: revocation.ticketId,
            revokedAt: revocation.revokedAt,
            reason: revocation.reason,
          })),
        };
      },
    ),

    recordBoarding: unary(
      BookingServiceService.recordBoarding,
      'change',
      async (actor, request: RecordBoardingRequest) => {
        const boarding = await dependencies.boarding.recordBoarding(actor, request.tripId, {
          ticket: request.ticket,
          stop: request.stop,
          ...(request.deviceId === undefined ? {} : { deviceId: request.deviceId }),
        });
        return { boarding: toBoardingMessage(boarding) };
      },
    ),

    getTripManifest: unary(
      BookingServiceService.getTripManifest,
      'read',
      async (actor, request: GetTripManifestRequest): Promise<GetTripManifestResponse> => {
        const page = await dependencies.boarding.tripManifest(actor, request.tripId, {
          pageSize: given(request.pageSize),
          pageToken: given(request.pageToken),
        });
        return {
          passengers: page.items.map(toManifestPassengerMessage),
          nextPageToken: page.nextPageToken ?? '',
        };
      },
    ),
  };
}
