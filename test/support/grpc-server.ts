// Shared by the gRPC integration tests: per-run certificates, a server on 127.0.0.1 and clients with each identity.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BookingServiceCallError, createBookingClient, type BookingClient } from '../../src/api/grpc/client';
import { startGrpcServer, type GrpcServerSettings, type RunningGrpcServer } from '../../src/api/grpc/server';
import type { AccessTokenVerifier } from '../../src/api/grpc/caller-authorization';
import type { BookingApplication, BookingView } from '../../src/application/interface';
import type { TicketApplication } from '../../src/application/tickets';
import type { BoardingApplication } from '../../src/application/boarding';
import type { RefundQuoteApplication } from '../../src/application/refund-quotes';
import type { PartnerWebhookApplication } from '../../src/application/partner-webhooks';
import type { FareApplication } from '../../src/application/fares';
import type { Actor } from '../../src/domain/actor';
import type { Readiness, ReadinessCheck } from '../../src/application/readiness';
import { unauthenticated } from '../../src/domain/errors';
import { createLogger } from '../../src/logger';
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateFiles,
} from '../../dev/stack/development-certificates';
import { bookingState } from './booking-states';

export interface PemPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface TestCertificates {
  readonly directory: string;
  readonly ca: Buffer;
  readonly server: PemPair;
  /** Signed by our CA, CN `booking-cli`: on the allow-list. */
  readonly allowedClient: PemPair;
  /** Signed by our CA, allowed only through its URI SAN. */
  readonly uriClient: PemPair;
  /** Signed by our CA, CN `intruder`: not on the allow-list. */
  readonly unlistedClient: PemPair;
  /** CN `booking-cli`, but signed by another CA. */
  readonly foreignClient: PemPair;
  readonly foreignCa: Buffer;
}

export const allowedClients = ['booking-cli', 'spiffe://bookings.example.com/reporting'];

function read(files: CertificateFiles): PemPair {
  return { cert: fs.readFileSync(files.certificate), key: fs.readFileSync(files.privateKey) };
}

/** Fresh certificates in a temporary folder, made with the same openssl recipe as the embedded stack. */
export function createTestCertificates(): TestCertificates {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bookings-grpc-certs-'));
  const authority = createCertificateAuthority(directory, { name: 'ca', commonName: 'Test CA' });
  const foreignAuthority = createCertificateAuthority(directory, {
    name: 'foreign-ca',
    commonName: 'Other CA',
  });
  const server = issueCertificate(authority, directory, {
    name: 'server',
    commonName: 'localhost',
    usage: 'server',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  const client = (name: string, commonName: string, signer = authority, uris: string[] = []) =>
    read(issueCertificate(signer, directory, { name, commonName, usage: 'client', uris }));
  return {
    directory,
    ca: fs.readFileSync(authority.certificate),
    server: read(server),
    allowedClient: client('allowed', 'booking-cli'),
    uriClient: client('uri', 'reporting-7f9c', authority, ['spiffe://bookings.example.com/reporting']),
    unlistedClient: client('unlisted', 'intruder'),
    foreignClient: client('foreign', 'booking-cli', foreignAuthority),
    foreignCa: fs.readFileSync(foreignAuthority.certificate),
  };
}

export function removeTestCertificates(certificates: TestCertificates): void {
  fs.rmSync(certificates.directory, { recursive: true, force: true });
}

/** Users the test verifier knows by token; a real verifier (JWT) replaces it where the identity code is used. */
export const actors = {
  alice: {
    userId: '44444444-4444-4444-8444-444444444444',
    roles: ['customer'],
    scopes: ['bookings:read', 'bookings:write', 'payments:write'],
  },
  readOnly: {
    userId: '77777777-7777-4777-8777-777777777777',
    roles: ['customer'],
    scopes: ['bookings:read'],
  },
} satisfies Record<string, Actor>;

export type TestToken = keyof typeof actors;

export const verifyTestToken: AccessTokenVerifier = (token) => {
  const actor = (actors as Record<string, Actor>)[token];
  return actor ? Promise.resolve(actor) : Promise.reject(unauthenticated('The token is not valid'));
};

export function bookingView(overrides: Partial<BookingView> = {}): BookingView {
  const { paymentAttempts: _paymentAttempts, refundRule: _refundRule, ...view } = bookingState();
  return { ...view, ...overrides };
}

/** An application whose every operation fails loudly unless the test supplies it. */
export function fakeApplication(operations: Partial<BookingApplication> = {}): BookingApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`BookingApplication.${name} was not expected in this test`));
  return {
    createBooking: unexpected('createBooking'),
    getBooking: unexpected('getBooking'),
    listBookings: unexpected('listBookings'),
    updateBooking: unexpected('updateBooking'),
    cancelBooking: unexpected('cancelBooking'),
    cancelPassengers: unexpected('cancelPassengers'),
    confirmPayment: unexpected('confirmPayment'),
    cancelTrip: unexpected('cancelTrip'),
    getTripCancellation: unexpected('getTripCancellation'),
    ...operations,
  };
}

/** Ticket operations that fail loudly unless the test supplies them. */
export function fakeTicketApplication(operations: Partial<TicketApplication> = {}): TicketApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`TicketApplication.${name} was not expected in this test`));
  return {
    listTickets: unexpected('listTickets'),
    ticketPdf: unexpected('ticketPdf'),
    ticketKeySet: unexpected('ticketKeySet'),
    tripRevocations: unexpected('tripRevocations'),
    ...operations,
  };
}

/** Boarding operations that fail loudly unless the test supplies them. */
export function fakeBoardingApplication(operations: Partial<BoardingApplication> = {}): BoardingApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`BoardingApplication.${name} was not expected in this test`));
  return {
    recordBoarding: unexpected('recordBoarding'),
    tripManifest: unexpected('tripManifest'),
    ...operations,
  };
}

/** Refund quote operations that fail loudly unless the test supplies them. */
export function fakeRefundQuoteApplication(
  operations: Partial<RefundQuoteApplication> = {},
): RefundQuoteApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`RefundQuoteApplication.${name} was not expected in this test`));
  return {
    quoteRefund: unexpected('quoteRefund'),
    getRefundQuote: unexpected('getRefundQuote'),
    ...operations,
  };
}

/** Webhook operations that fail loudly unless the test supplies them. */
export function fakeWebhookApplication(
  operations: Partial<PartnerWebhookApplication> = {},
): PartnerWebhookApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`PartnerWebhookApplication.${name} was not expected in this test`));
  return {
    createEndpoint: unexpected('createEndpoint'),
    listEndpoints: unexpected('listEndpoints'),
    getEndpoint: unexpected('getEndpoint'),
    updateEndpoint: unexpected('updateEndpoint'),
    deleteEndpoint: unexpected('deleteEndpoint'),
    rotateSecret: unexpected('rotateSecret'),
    pingEndpoint: unexpected('pingEndpoint'),
    listDeliveries: unexpected('listDeliveries'),
    getDelivery: unexpected('getDelivery'),
    redeliver: unexpected('redeliver'),
    ...operations,
  };
}

/** Fare operations that fail loudly unless the test supplies them. */
export function fakeFareApplication(operations: Partial<FareApplication> = {}): FareApplication {
  const unexpected = (name: string) => () =>
    Promise.reject(new Error(`FareApplication.${name} was not expected in this test`));
  return {
    createDiscountCode: unexpected('createDiscountCode'),
    listDiscountCodes: unexpected('listDiscountCodes'),
    getDiscountCode: unexpected('getDiscountCode'),
    listPassengerTypes: unexpected('listPassengerTypes'),
    getRouteAvailability: unexpected('getRouteAvailability'),
    ...operations,
  };
}

const ready: Readiness = { ready: true, checks: { postgres: 'ok', temporal: 'ok' } };

export const alwaysReady: ReadinessCheck = () => Promise.resolve(ready);

export interface TestServerOptions {
  readonly certificates: TestCertificates;
  readonly application?: BookingApplication;
  readonly tickets?: TicketApplication;
  readonly boarding?: BoardingApplication;
  readonly refundQuotes?: RefundQuoteApplication;
  readonly webhooks?: PartnerWebhookApplication;
  readonly fares?: FareApplication;
  readonly verifyAccessToken?: AccessTokenVerifier;
  readonly checkReadiness?: ReadinessCheck;
  readonly settings?: Partial<GrpcServerSettings>;
}

export function startTestServer(options: TestServerOptions): Promise<RunningGrpcServer> {
  const { certificates } = options;
  return startGrpcServer(
    {
      host: '127.0.0.1',
      port: 0,
      transport: {
        kind: 'mutual-tls',
        certificateAuthority: certificates.ca,
        certificateChain: certificates.server.cert,
        privateKey: certificates.server.key,
        allowedClients,
      },
      maxReceiveMessageBytes: 64 * 1024,
      maxSendMessageBytes: 4 * 1024 * 1024,
      keepaliveTimeMs: 60_000,
      keepaliveTimeoutMs: 20_000,
      shutdownGraceMs: 5_000,
      healthCheckIntervalMs: 200,
      ...options.settings,
    },
    {
      application: options.application ?? fakeApplication(),
      tickets: options.tickets ?? fakeTicketApplication(),
      boarding: options.boarding ?? fakeBoardingApplication(),
      refundQuotes: options.refundQuotes ?? fakeRefundQuoteApplication(),
      webhooks: options.webhooks ?? fakeWebhookApplication(),
      fares: options.fares ?? fakeFareApplication(),
      verifyAccessToken: options.verifyAccessToken ?? verifyTestToken,
      checkReadiness: options.checkReadiness ?? alwaysReady,
      logger: createLogger({ level: 'silent', name: 'grpc-test' }),
    },
  );
}

/** A client presenting `identity` (default: the allow-listed one) and trusting our CA. */
export function clientFor(
  server: RunningGrpcServer,
  certificates: TestCertificates,
  options: { identity?: PemPair | null; token?: TestToken; ca?: Buffer } = {},
): BookingClient {
  const identity = options.identity === undefined ? certificates.allowedClient : options.identity;
  return createBookingClient({
    address: `127.0.0.1:${server.port}`,
    ca: options.ca ?? certificates.ca,
    ...(identity ? { cert: identity.cert, key: identity.key } : {}),
    token: options.token ?? 'alice',
  });
}

/** The BookingServiceCallError a call fails with; anything else, or success, fails the test. */
export async function failureOf(work: Promise<unknown>): Promise<BookingServiceCallError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof BookingServiceCallError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}
