// The real world an authorization matrix runs against: saga workers, the full REST app, accounts, a trip, bookings.
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { BoardingApplication } from '../../src/application/boarding';
import type { PartnerWebhookApplication } from '../../src/application/partner-webhooks';
import type { BookingView } from '../../src/application/interface';
import type { TicketApplication } from '../../src/application/tickets';
import type { RefundQuoteApplication } from '../../src/application/refund-quotes';
import type { RefundQuote } from '../../src/domain/refund-quotes';
import type { Actor } from '../../src/domain/actor';
import type { IdentityProvider } from '../../src/identity/identity-provider';
import { scopesForRoles } from '../../src/security/policy';
import type { TokenVerifier } from '../../src/security/token-verifier';
import { eventually } from './outcomes';
import { startSagaEnvironment, type SagaEnvironment } from './saga';
import { bookingRequest, createTrip, type TestTrip } from './trips';
import { composeTestApi } from './rest-app';
import { insertLoginUser, insertUser } from './users';
import type { MatrixParties } from './authorization-cells';
import {
  insertDelivery,
  loopbackWebhookSender,
  startWebhookReceiver,
  type WebhookReceiver,
} from './webhook-endpoint-fixtures';

/** Room for every booking a matrix file makes: one seat each, a few dozen in all. */
const tripSeatCount = 160;
/** Tickets open three hours before departure: a trip leaving in two lets the matrix's boarding scans be served. */
const departureInMs = 2 * 3_600_000;

export interface MatrixEnvironment {
  saga: SagaEnvironment;
  /** The REST app exactly as main.ts composes it, embedded identity provider included. */
  app: Koa;
  identityProvider: IdentityProvider;
  /** The REST app's own verifier, for the gRPC server. */
  verifier: TokenVerifier;
  /** The composed API's tickets, for the gRPC server. */
  tickets: TicketApplication;
  /** The boarding application the REST app serves, for the gRPC server. */
  boarding: BoardingApplication;
  /** The refund quotes the REST app serves, for the gRPC server. */
  refundQuotes: RefundQuoteApplication;
  /** The partner webhook application the REST app serves, for the gRPC server. */
  webhooks: PartnerWebhookApplication;
  parties: MatrixParties;
  trip: TestTrip;
  /** The trip's departure date at its origin, as the availability operation takes it. */
  tripDate: string;
  /** A seat of the trip that no other request of this environment names. */
  nextSeat(): string;
  /** A new PENDING_PAYMENT booking of the owner's on a seat of its own, made through the application. */
  createOwnerBooking(): Promise<BookingView>;
  /** Pays for the owner's booking: CONFIRMED, its tickets issued. */
  confirmOwnerBooking(booking: BookingView): Promise<BookingView>;
  /** A refund quote of the owner's booking, every passenger, made by the owner. */
  quoteOf(booking: BookingView): Promise<RefundQuote>;
  /** The QR payload of the valid ticket of a confirmed booking's first passenger, once issued. */
  ticketOf(booking: BookingView): Promise<string>;
  /** A trip of its own, for a cell that cancels one (each served cancel needs a trip not cancelled yet). */
  createSpareTrip(): Promise<string>;
  /** A trip of its own marked cancelled, without bookings, for a cell that reads a cancellation. */
  createCancelledTrip(): Promise<string>;
  /** The API's Stripe webhook signing secret, for a cell that delivers an event. */
  webhookSecret: string;
  /**
   * A webhook endpoint of the owner's (registered as a partner's service client would), pointing at a loopback
   * receiver, with one delivery: the same one for every cell unless `fresh` (a cell that deletes it).
   */
  ownerEndpoint(fresh?: boolean): Promise<{ endpointId: string; deliveryId: string }>;
  /** The loopback receiver webhook endpoints of the matrix point at. */
  receiverUrl: string;
  close(): Promise<void>;
}

export async function startMatrixEnvironment(): Promise<MatrixEnvironment> {
  // The owner holds a booking for every cell that changes one; the default cap of open holds would refuse them.
  const saga = await startSagaEnvironment({ environment: { BOOKING_MAX_OPEN_HOLDS_PER_CUSTOMER: '200' } });
  let receiver: WebhookReceiver | undefined;
  try {
    receiver = await startWebhookReceiver();
    // OIDC_DEFAULT_ROLE=none: the matrix's "no role of ours" column is refused, not given the default role.
    const webhookSecret = `whsec_${randomUUID().replace(/-/g, '')}`;
    // Pings reach the loopback receiver over http; deliveries woken are not the matrix's concern.
    const full = await composeTestApi(
      saga,
      { OIDC_DEFAULT_ROLE: 'none', STRIPE_WEBHOOK_SECRET: webhookSecret, WEBHOOK_ALLOW_HTTP: 'true' },
      { webhookSender: loopbackWebhookSender(), webhookDeliveries: { nudge: () => Promise.resolve() } },
    );
    const { identityProvider, verifier } = full;
    const ownerCredentials = { email: `owner-${randomUUID()}@matrix.test`, password: `pw-${randomUUID()}` };
    const [owner, anotherCustomer, agent, admin, trip] = await Promise.all([
      insertLoginUser(saga.database, saga.cipher, { ...ownerCredentials, roles: ['customer'] }),
      insertUser(saga.database, saga.cipher, { roles: ['customer'] }),
      insertUser(saga.database, saga.cipher, { roles: ['agent'] }),
      insertUser(saga.database, saga.cipher, { roles: ['admin'] }),
      createTrip(saga.database, { seatCount: tripSeatCount, departureInMs }),
    ]);
    const customer = (userId: string): Actor => ({
      userId,
      roles: ['customer'],
      scopes: scopesForRoles(['customer']),
    });
    let seatsGiven = 0;
    const nextSeat = () => {
      const seat = trip.seatNumbers[seatsGiven++];
      if (seat === undefined) throw new Error(`the matrix trip has only ${tripSeatCount} seats`);
      return seat;
    };
    const partner: Actor = { userId: owner.id, roles: [], scopes: ['webhooks:manage'] };
    const receiverUrl = receiver.url;
    const newOwnerEndpoint = async () => {
      const { endpoint } = await full.webhooks.createEndpoint(partner, {
        url: receiverUrl,
        eventTypes: ['booking.confirmed'],
      });
      const { deliveryId } = await insertDelivery(saga.database, {
        endpointId: endpoint.id,
        status: 'failed',
      });
      return { endpointId: endpoint.id, deliveryId };
    };
    let sharedEndpoint: Promise<{ endpointId: string; deliveryId: string }> | undefined;
    // The other customer has a booking too, so their listings show what is theirs and nothing of the owner's.
    await saga.application.createBooking(customer(anotherCustomer.id), bookingRequest(trip, [nextSeat()]));
    return {
      saga,
      app: full.app,
      identityProvider,
      verifier,
      tickets: full.tickets,
      boarding: full.boarding,
      refundQuotes: full.refundQuotes,
      webhooks: full.webhooks,
      parties: {
        owner: { id: owner.id, ...ownerCredentials },
        anotherCustomer,
        agent,
        admin,
      },
      trip,
      webhookSecret,
      receiverUrl,
      ownerEndpoint: (fresh = false) =>
        fresh ? newOwnerEndpoint() : (sharedEndpoint ??= newOwnerEndpoint()),
      tripDate: trip.departureTime.toLocaleDateString('en-CA', { timeZone: 'Europe/Lisbon' }),
      nextSeat,
      createOwnerBooking: () =>
        saga.application.createBooking(customer(owner.id), bookingRequest(trip, [nextSeat()])),
      confirmOwnerBooking: (booking) =>
        saga.application.confirmPayment(customer(owner.id), booking.id, { paymentToken: 'tok_visa' }),
      quoteOf: (booking) => full.refundQuotes.quoteRefund(customer(owner.id), booking.id, {}),
      async ticketOf(booking) {
        const row = await eventually(
          (): Promise<{ token: string } | undefined> =>
            saga
              .database('tickets')
              .where({ booking_id: booking.id, passenger_id: booking.passengers[0].id })
              .whereNull('revoked_at')
              .first('token'),
          (found) => found !== undefined,
        );
        return row!.token;
      },
      createSpareTrip: async () => (await createTrip(saga.database, { seatCount: 4 })).tripId,
      async createCancelledTrip() {
        const { tripId } = await createTrip(saga.database, { seatCount: 4 });
        await saga.database('trips').where({ id: tripId }).update({
          status: 'CANCELLED',
          cancelled_at: new Date(),
          cancellation_reason: 'The bus broke down',
        });
        return tripId;
      },
      async close() {
        await full.remove();
        await receiver?.close();
        await saga.stop();
      },
    };
  } catch (error) {
    await receiver?.close();
    await saga.stop();
    throw error;
  }
}
