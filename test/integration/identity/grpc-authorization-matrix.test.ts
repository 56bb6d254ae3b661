// Authorization matrix over every BookingService and WebhookService RPC × token cases, against the real gRPC server.
import { randomUUID } from 'node:crypto';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import {
  BookingServiceCallError,
  createBookingClient,
  type BookingClient,
} from '../../../src/api/grpc/client';
import type { RunningGrpcServer } from '../../../src/api/grpc/server';
import type { BookingView } from '../../../src/application/interface';
import { errorCodeMappings } from '../../../src/domain/errors';
import type { Booking } from '../../../src/generated/com/example/bookings/v1/booking';
import {
  BookingServiceService,
  CancelBookingRequest,
  CancelPassengersRequest,
  CancelTripRequest,
  ConfirmPaymentRequest,
  CreateBookingRequest,
  GetBookingRequest,
  GetTicketPdfRequest,
  GetTripManifestRequest,
  GetTripCancellationRequest,
  ListBookingsRequest,
  ListTicketsRequest,
  ListTripTicketRevocationsRequest,
  RecordBoardingRequest,
  UpdateBookingRequest,
} from '../../../src/generated/com/example/bookings/v1/booking_service';
import {
  GetRefundQuoteRequest,
  QuoteRefundRequest,
} from '../../../src/generated/com/example/bookings/v1/refund_quote';
import {
  WebhookDeliveryStatus,
  WebhookServiceService,
  type WebhookEndpoint,
} from '../../../src/generated/com/example/bookings/v1/webhook_service';
import {
  bookingServiceHttpBindings,
  grpcMethodAuthorization,
  webhookServiceHttpBindings,
} from '../../../src/security/policy';
import {
  createTestCertificates,
  removeTestCertificates,
  startTestServer,
  type TestCertificates,
} from '../../support/grpc-server';
import {
  authorizationCells,
  partyOf,
  type Cell,
  type Outcome,
  type Requirement,
} from '../../support/authorization-cells';
import { startMatrixEnvironment, type MatrixEnvironment } from '../../support/authorization-matrix';

type MethodKey = keyof typeof BookingServiceService;

interface RequestContext {
  world: MatrixEnvironment;
  /** The owner's booking this cell acts on: a fresh one when the cell is expected to change it. */
  booking: () => Promise<BookingView>;
}

/** A valid request of each RPC, so a cell that gets through is served. */
const methodRequests: Record<MethodKey, (context: RequestContext) => Promise<unknown>> = {
  createBooking: ({ world }) =>
    Promise.resolve(
      CreateBookingRequest.fromPartial({
        requestId: randomUUID(),
        tripId: world.trip.tripId,
        passengers: [
          {
            firstName: 'Ana',
            lastName: 'Silva',
            email: 'ana.silva@example.com',
            seatNumber: world.nextSeat(),
            fareClass: 'STANDARD',
          },
        ],
        contactEmail: 'ana.silva@example.com',
      }),
    ),
  getBooking: async ({ booking }) => GetBookingRequest.fromPartial({ bookingId: (await booking()).id }),
  updateBooking: async ({ booking }) => {
    const target = await booking();
    return UpdateBookingRequest.fromPartial({
      bookingId: target.id,
      expectedVersion: target.version,
      passengerUpdates: [{ passengerId: target.passengers[0].id, lastName: 'Silva Santos' }],
    });
  },
  cancelBooking: async ({ booking }) =>
    CancelBookingRequest.fromPartial({ bookingId: (await booking()).id, reason: 'Plans changed' }),
  cancelPassengers: async ({ booking }) => {
    const target = await booking();
    return CancelPassengersRequest.fromPartial({
      bookingId: target.id,
      passengerIds: [target.passengers[0].id],
      reason: 'Plans changed',
    });
  },
  confirmPayment: async ({ booking }) =>
    ConfirmPaymentRequest.fromPartial({
      bookingId: (await booking()).id,
      paymentToken: 'tok_visa',
      requestId: randomUUID(),
    }),
  listBookings: () => Promise.resolve(ListBookingsRequest.fromPartial({})),
  listTickets: async ({ booking }) => ListTicketsRequest.fromPartial({ bookingId: (await booking()).id }),
  getTicketPdf: async ({ booking }) => {
    const target = await booking();
    return GetTicketPdfRequest.fromPartial({ bookingId: target.id, passengerId: target.passengers[0].id });
  },
  listTripTicketRevocations: ({ world }) =>
    Promise.resolve(ListTripTicketRevocationsRequest.fromPartial({ tripId: world.trip.tripId })),
  // A cell that is served boards a fresh confirmed booking's passenger: a second scan would be ALREADY_BOARDED.
  recordBoarding: async ({ world, booking }) => {
    const target = await booking();
    const confirmed = target.status === 'CONFIRMED' ? target : await world.confirmOwnerBooking(target);
    return RecordBoardingRequest.fromPartial({
      tripId: world.trip.tripId,
      ticket: await world.ticketOf(confirmed),
      stop: world.trip.stopCodes[0],
    });
  },
  getTripManifest: ({ world }) =>
    Promise.resolve(GetTripManifestRequest.fromPartial({ tripId: world.trip.tripId })),
  cancelTrip: async ({ world }) =>
    CancelTripRequest.fromPartial({ tripId: await world.createSpareTrip(), reason: 'The bus broke down' }),
  getTripCancellation: async ({ world }) =>
    GetTripCancellationRequest.fromPartial({ tripId: await world.createCancelledTrip() }),
  quoteRefund: async ({ booking }) => QuoteRefundRequest.fromPartial({ bookingId: (await booking()).id }),
  getRefundQuote: async ({ world, booking }) => {
    const target = await booking();
    const quote = await world.quoteOf(target);
    return GetRefundQuoteRequest.fromPartial({ bookingId: target.id, quoteId: quote.id });
  },
};

type WebhookMethodKey = keyof typeof WebhookServiceService;

/** A valid request of each WebhookService RPC on the owner's endpoint; a served delete gets an endpoint of its own. */
const webhookRequests: Record<
  WebhookMethodKey,
  (context: { world: MatrixEnvironment; fresh: boolean }) => Promise<unknown>
> = {
  createWebhookEndpoint: ({ world }) =>
    Promise.resolve({ url: world.receiverUrl, eventTypes: ['booking.confirmed'], description: '' }),
  listWebhookEndpoints: () => Promise.resolve({ pageSize: 0, pageToken: '' }),
  getWebhookEndpoint: async ({ world }) => ({ endpointId: (await world.ownerEndpoint()).endpointId }),
  updateWebhookEndpoint: async ({ world }) => ({
    endpointId: (await world.ownerEndpoint()).endpointId,
    eventTypes: [],
    description: 'authorization matrix',
  }),
  deleteWebhookEndpoint: async ({ world, fresh }) => ({
    endpointId: (await world.ownerEndpoint(fresh)).endpointId,
  }),
  rotateWebhookSecret: async ({ world }) => ({
    endpointId: (await world.ownerEndpoint()).endpointId,
    overlapSeconds: 0,
  }),
  pingWebhookEndpoint: async ({ world }) => ({ endpointId: (await world.ownerEndpoint()).endpointId }),
  listWebhookDeliveries: async ({ world }) => ({
    endpointId: (await world.ownerEndpoint()).endpointId,
    status: WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED,
    pageSize: 0,
    pageToken: '',
  }),
  getWebhookDelivery: async ({ world }) => await world.ownerEndpoint(),
  redeliverWebhookDelivery: async ({ world }) => await world.ownerEndpoint(),
};

const webhookMethodKeys = Object.keys(WebhookServiceService) as WebhookMethodKey[];
const webhookBindings = new Map(
  webhookServiceHttpBindings().map((binding) => [binding.methodName, binding] as const),
);

function webhookMethodNameOf(key: WebhookMethodKey): string {
  const { path } = WebhookServiceService[key];
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The RPC's proto option; whether it names one endpoint (another partner's answers NOT_FOUND). */
function webhookRequirementOf(key: WebhookMethodKey): Requirement & { changesState: boolean } {
  const binding = webhookBindings.get(webhookMethodNameOf(key))!;
  const { scopes, roles } = grpcMethodAuthorization(WebhookServiceService[key].path);
  return {
    scopes,
    roles,
    namesOwnedResource: binding.path.includes('{endpoint_id}'),
    changesState: binding.httpMethod !== 'GET',
  };
}

/** Whose endpoints a served answer shows, when that is wrong for the caller; undefined when it is right. */
function wrongWebhookParty(
  key: WebhookMethodKey,
  parties: { callerId: string; ownerId: string },
  response: unknown,
): string | undefined {
  const { endpoint, endpoints } = response as { endpoint?: WebhookEndpoint; endpoints?: WebhookEndpoint[] };
  if (key === 'listWebhookEndpoints') {
    const foreign = (endpoints ?? []).find((item) => item.partnerId !== parties.callerId);
    return foreign === undefined ? undefined : `an endpoint of ${foreign.partnerId}`;
  }
  if (key === 'createWebhookEndpoint') {
    return endpoint?.partnerId === parties.callerId ? undefined : `an endpoint for ${endpoint?.partnerId}`;
  }
  if (key === 'getWebhookEndpoint') {
    return endpoint?.partnerId === parties.ownerId ? undefined : `an endpoint of ${endpoint?.partnerId}`;
  }
  return undefined;
}

const methodKeys = Object.keys(BookingServiceService) as MethodKey[];
const httpBindings = new Map(
  bookingServiceHttpBindings().map((binding) => [binding.methodName, binding] as const),
);

function methodNameOf(key: MethodKey): string {
  const { path } = BookingServiceService[key];
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The RPC's scopes from its proto option; whether it names one booking from its `google.api.http` path. */
function requirementOf(key: MethodKey): Requirement & { changesState: boolean } {
  const binding = httpBindings.get(methodNameOf(key))!;
  const { scopes, roles } = grpcMethodAuthorization(BookingServiceService[key].path);
  return {
    scopes,
    roles,
    namesOwnedResource: binding.path.includes('{booking_id}'),
    changesState: binding.httpMethod !== 'GET',
  };
}

/** Whose bookings a served answer shows, when that is wrong for the caller; undefined when it is right. */
function wrongParty(
  key: MethodKey,
  parties: { callerId: string; ownerId: string; staff: boolean },
  response: unknown,
  ownerBookingIds: ReadonlySet<string>,
): string | undefined {
  const { booking, bookings } = response as { booking?: Booking; bookings?: Booking[] };
  // The owner's booking is confirmed: served, its tickets (and PDF) are the owner's, the trip's list the trip's.
  if (key === 'listTickets') {
    const { tickets } = response as { tickets: { bookingId: string }[] };
    return tickets.length > 0 && tickets.every((ticket) => ticket.bookingId === sharedBooking.id)
      ? undefined
      : 'tickets of another booking';
  }
  if (key === 'getTicketPdf') {
    const { content } = response as { content: Buffer };
    return content.subarray(0, 5).toString() === '%PDF-' ? undefined : 'no PDF';
  }
  if (key === 'recordBoarding') {
    return (response as { boarding?: { stop: string } }).boarding?.stop === world.trip.stopCodes[0]
      ? undefined
      : 'no boarding';
  }
  if (key === 'getTripManifest') {
    const { passengers } = response as { passengers: { bookingId: string }[] };
    return passengers.some((passenger) => passenger.bookingId === sharedBooking.id)
      ? undefined
      : 'a manifest without the trip’s passengers';
  }
  if (key === 'listTripTicketRevocations') {
    return (response as { tripId: string }).tripId === world.trip.tripId ? undefined : 'another trip';
  }
  if (key === 'quoteRefund' || key === 'getRefundQuote') {
    // A quote is served only to whoever may read its booking, which is always the owner's.
    const { quote } = response as { quote?: { bookingId: string } };
    return quote === undefined
      ? 'no quote'
      : ownerBookingIds.has(quote.bookingId)
        ? undefined
        : 'a quote of another booking';
  }
  // A trip's cancellation shows no customer's booking.
  if (key === 'cancelTrip' || key === 'getTripCancellation') return undefined;
  if (key === 'listBookings') {
    // Every customer of the matrix has a booking of their own to list.
    if (parties.staff) return undefined;
    if (!bookings?.length) return 'no booking at all';
    const foreign = bookings.find((item) => item.customerId !== parties.callerId);
    return foreign === undefined ? undefined : `a booking of ${foreign.customerId}`;
  }
  const rightOwner = key === 'createBooking' ? parties.callerId : parties.ownerId;
  return booking?.customerId === rightOwner ? undefined : `booking of ${booking?.customerId}`;
}

let world: MatrixEnvironment;
let certificates: TestCertificates;
let server: RunningGrpcServer;
let client: BookingClient;
let cells: Cell[];
let sharedBooking: BookingView;

beforeAll(async () => {
  world = await startMatrixEnvironment();
  certificates = createTestCertificates();
  server = await startTestServer({
    certificates,
    application: world.saga.application,
    tickets: world.tickets,
    boarding: world.boarding,
    refundQuotes: world.refundQuotes,
    webhooks: world.webhooks,
    verifyAccessToken: (token) => world.verifier.verifyAccessToken(token),
  });
  // The allow-listed client certificate: only the user token in the metadata varies from cell to cell.
  client = createBookingClient({
    address: `127.0.0.1:${server.port}`,
    ca: certificates.ca,
    cert: certificates.allowedClient.cert,
    key: certificates.allowedClient.key,
  });
  cells = await authorizationCells(world.identityProvider, world.parties);
  sharedBooking = await world.confirmOwnerBooking(await world.createOwnerBooking());
});

afterAll(async () => {
  client?.close();
  await server?.stop();
  await world?.close();
  if (certificates) removeTestCertificates(certificates);
});

/** Sends the request with exactly this `authorization` metadata (or none); `code/reason` of a failure. */
function invoke(
  definition: {
    readonly path: string;
    readonly requestSerialize: unknown;
    readonly responseDeserialize: unknown;
  },
  request: unknown,
  authorization: string | undefined,
): Promise<{ outcome: string; response?: unknown }> {
  const metadata = new Metadata();
  if (authorization !== undefined) metadata.set('authorization', authorization);
  return new Promise((resolve) => {
    client.raw.makeUnaryRequest(
      definition.path,
      definition.requestSerialize as (value: unknown) => Buffer,
      definition.responseDeserialize as (value: Buffer) => unknown,
      request,
      metadata,
      { deadline: Date.now() + 30_000 },
      (error: ServiceError | null, response?: unknown) => {
        if (!error) return resolve({ outcome: 'OK', response });
        const failure = new BookingServiceCallError(error);
        resolve({ outcome: `${status[failure.code]}/${failure.reason}` });
      },
    );
  });
}

function expectedOutcome(outcome: Outcome): string {
  return outcome === 'OK' ? 'OK' : `${errorCodeMappings[outcome].grpcStatus}/${outcome}`;
}

describe('gRPC authorization matrix against the real server', () => {
  it('has a request for exactly the RPCs of BookingService, each bound to a REST operation', () => {
    expect(Object.keys(methodRequests).sort()).toEqual([...methodKeys].sort());
    expect([...httpBindings.keys()].sort()).toEqual(methodKeys.map(methodNameOf).sort());
  });

  it.each(methodKeys.map((key) => [methodNameOf(key), key] as const))(
    '%s answers each token case as the proto option says',
    async (_methodName, key) => {
      const requirement = requirementOf(key);
      const prepared = await Promise.all(
        cells.map(async (cell) => {
          const outcome = cell.expected(requirement);
          const changesBooking = outcome === 'OK' && requirement.changesState;
          const request = await methodRequests[key]({
            world,
            booking: () => (changesBooking ? world.createOwnerBooking() : Promise.resolve(sharedBooking)),
          });
          return { cell, outcome, request, authorization: await cell.authorization(requirement) };
        }),
      );
      const observed: Record<string, string> = {};
      const expected: Record<string, string> = {};
      const ownerBookingIds = new Set(
        await world.saga
          .database('bookings')
          .where({ customer_id: world.parties.owner.id })
          .pluck<string[]>('id'),
      );
      for (const { cell, outcome, request, authorization } of prepared) {
        const answer = await invoke(BookingServiceService[key], request, authorization);
        const parties = {
          callerId: partyOf(world.parties, cell.caller).id,
          ownerId: world.parties.owner.id,
          staff: cell.caller === 'agent' || cell.caller === 'admin',
        };
        const leak =
          answer.outcome === 'OK' ? wrongParty(key, parties, answer.response, ownerBookingIds) : undefined;
        observed[cell.name] = answer.outcome + (leak ? ` but served ${leak}` : '');
        expected[cell.name] = expectedOutcome(outcome);
      }
      expect(observed).toEqual(expected);
    },
  );

  it('has a request for exactly the RPCs of WebhookService, each bound to a REST operation', () => {
    expect(Object.keys(webhookRequests).sort()).toEqual([...webhookMethodKeys].sort());
    expect([...webhookBindings.keys()].sort()).toEqual(webhookMethodKeys.map(webhookMethodNameOf).sort());
  });

  it.each(webhookMethodKeys.map((key) => [webhookMethodNameOf(key), key] as const))(
    '%s answers each token case as the proto option says',
    async (_methodName, key) => {
      const requirement = webhookRequirementOf(key);
      const prepared = await Promise.all(
        cells.map(async (cell) => {
          const outcome = cell.expected(requirement);
          const fresh = outcome === 'OK' && requirement.changesState;
          const request = await webhookRequests[key]({ world, fresh });
          return { cell, outcome, request, authorization: await cell.authorization(requirement) };
        }),
      );
      const observed: Record<string, string> = {};
      const expected: Record<string, string> = {};
      for (const { cell, outcome, request, authorization } of prepared) {
        const answer = await invoke(WebhookServiceService[key], request, authorization);
        const parties = { callerId: partyOf(world.parties, cell.caller).id, ownerId: world.parties.owner.id };
        const leak = answer.outcome === 'OK' ? wrongWebhookParty(key, parties, answer.response) : undefined;
        observed[cell.name] = answer.outcome + (leak ? ` but served ${leak}` : '');
        expected[cell.name] = expectedOutcome(outcome);
      }
      expect(observed).toEqual(expected);
    },
  );

  it('gives the gRPC front a bare-token verifier returning the caller', async () => {
    const { email, password, id } = world.parties.owner;
    const { access_token: token } = await world.identityProvider.login({ email, password }, '127.0.0.1');
    await expect(world.verifier.verifyAccessToken(token)).resolves.toMatchObject({
      userId: id,
      roles: ['customer'],
    });
    await expect(world.verifier.verifyAccessToken('not-a.jwt')).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
  });
});
