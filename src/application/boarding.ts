// Day of travel for drivers and agents: a scanned ticket boards its passenger, and a trip's manifest; both fronts call it.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import type { Knex } from 'knex';
import { findBookingRow } from '../db/booking-read-model';
import { pageWindow, type PageRequest } from '../db/paging';
import {
  findPassengerBoarding,
  findTicketRevocation,
  manifestListing,
  readManifestPage,
  tripExists,
} from '../db/trip-manifest';
import type { Actor } from '../domain/actor';
import { alreadyBoarded, type BoardingStatus } from '../domain/boarding';
import type { BookingState } from '../domain/booking';
import { bookingStateConflict, DomainError, notFound, validationFailed } from '../domain/errors';
import { isTerminal } from '../domain/lifecycle';
import { ticketRevoked } from '../domain/tickets';
import { validateId } from '../domain/validation';
import type { FieldCipher } from '../security/field-encryption';
import { verifyTicket } from '../security/ticket-tokens';
import type { bookingWorkflow } from '../workflows/booking';
import { bookingWorkflowId, recordBoardingUpdate } from '../workflows/shared';
import type { Page } from './interface';
import { domainErrorFromTemporal, isWorkflowGone } from './temporal-outcomes';
import { ReadThroughCache } from './read-through-cache';

/** A scan as a front hands it over: the QR payload and the stop the bus is at. */
export interface BoardingScan {
  ticket?: unknown;
  stop?: unknown;
  /** The scanning device's own name, kept with the boarding. */
  deviceId?: unknown;
}

/** Who boarded where: what the driver's device shows. */
export interface BoardingView {
  bookingId: string;
  passengerId: string;
  firstName: string;
  lastName: string;
  seatNumber: string;
  stop: string;
  boardedAt: string;
}

export interface ManifestEntry {
  passengerId: string;
  bookingId: string;
  firstName: string;
  lastName: string;
  seatNumber: string;
  boardingStop: string;
  alightingStop: string;
  status: BoardingStatus;
  boardedAt?: string;
  boardedStop?: string;
}

export interface BoardingApplication {
  recordBoarding(actor: Actor, tripId: string, scan: BoardingScan): Promise<BoardingView>;
  tripManifest(actor: Actor, tripId: string, page: PageRequest): Promise<Page<ManifestEntry>>;
}

export interface BoardingApplicationDependencies {
  database: Knex;
  temporal: Client;
  cipher: FieldCipher;
  /** The public keys tickets are signed with: only tickets this service signed verify. */
  ticketKeys: () => Promise<JSONWebKeySet>;
  now?: () => Date;
}

const maximumTicketLength = 4096;
const maximumDeviceIdLength = 64;

function readScan(scan: BoardingScan): { ticket: string; stop: string; deviceId?: string } {
  const violations = [];
  const { ticket, stop, deviceId } = scan;
  if (typeof ticket !== 'string' || ticket.length === 0 || ticket.length > maximumTicketLength) {
    violations.push({
      field: 'ticket',
      message: `must be the scanned ticket, 1 to ${maximumTicketLength} characters`,
    });
  }
  if (typeof stop !== 'string' || !/^[A-Z0-9]{2,12}$/.test(stop)) {
    violations.push({
      field: 'stop',
      message: 'must be a stop code of 2 to 12 capital letters or digits, such as HAJ',
    });
  }
  if (deviceId !== undefined && (typeof deviceId !== 'string' || !/^[A-Za-z0-9._:-]{1,64}$/.test(deviceId))) {
    violations.push({
      field: 'device_id',
      message: `must be 1 to ${maximumDeviceIdLength} letters, digits or . _ : -`,
    });
  }
  if (violations.length > 0) throw validationFailed(violations);
  return {
    ticket: ticket as string,
    stop: stop as string,
    ...(typeof deviceId === 'string' ? { deviceId } : {}),
  };
}

/** How long a read key set serves scans before it is read again, so a key no longer published stops verifying. */
const keySetKeptMs = 60_000;

/**
 * The ticket key set as scans need it: read once and kept, and read again at once when a ticket names a key the
 * kept set lacks (another process rotated), so a bus of scans does not read PostgreSQL once per passenger.
 */
function keptTicketKeys(read: () => Promise<JSONWebKeySet>, now: () => Date) {
  const cache = new ReadThroughCache<JSONWebKeySet>({
    timeToLiveMs: keySetKeptMs,
    maximumEntries: 1,
    now: () => now().getTime(),
  });
  return async (ticket: string): Promise<JSONWebKeySet> => {
    const keys = await cache.read('ticket keys', read);
    const kid = kidOf(ticket);
    if (kid === undefined || keys.keys.some((key) => key.kid === kid)) return keys;
    cache.forgetAll();
    return cache.read('ticket keys', read);
  };
}

/** The key id a ticket names; none for a token too malformed to say, which verifying then refuses. */
function kidOf(ticket: string): string | undefined {
  try {
    return decodeProtectedHeader(ticket.trim()).kid;
  } catch {
    return undefined;
  }
}

export function createBoardingApplication(
  dependencies: BoardingApplicationDependencies,
): BoardingApplication {
  const { database, temporal, cipher } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const ticketKeysFor = keptTicketKeys(dependencies.ticketKeys, now);

  async function assertTripExists(tripId: string): Promise<void> {
    if (!(await tripExists(database, tripId))) throw notFound('Trip', tripId);
  }

  /** A booking whose workflow has ended answers from the read model: a boarded passenger is still ALREADY_BOARDED. */
  async function endedBookingAnswer(bookingId: string, passengerId: string): Promise<DomainError> {
    const row = await findBookingRow(database, bookingId);
    const boarding = await findPassengerBoarding(database, passengerId);
    if (boarding?.status === 'BOARDED' && boarding.boardedAt !== null && boarding.boardedStop !== null) {
      return alreadyBoarded({
        passengerId,
        boardedAt: boarding.boardedAt.toISOString(),
        stopCode: boarding.boardedStop,
      });
    }
    if (row === undefined) return notFound('Booking', bookingId);
    return bookingStateConflict(
      row.status,
      'board',
      row.status === 'CANCELLED' ? 'the booking was cancelled' : undefined,
    );
  }

  async function recordBoarding(
    actor: Actor,
    tripIdInput: string,
    scan: BoardingScan,
  ): Promise<BoardingView> {
    const tripId = validateId(tripIdInput, 'trip_id');
    const { ticket, stop, deviceId } = readScan(scan);
    await assertTripExists(tripId);
    const claims = await verifyTicket(ticket, await ticketKeysFor(ticket), { now: now() });
    if (claims.tripId !== tripId) {
      throw validationFailed([
        { field: 'ticket', message: `is a ticket for trip ${claims.tripId}, not this trip` },
      ]);
    }
    if (claims.boardingStopCode !== stop) {
      throw validationFailed([
        { field: 'stop', message: `the ticket boards at ${claims.boardingStopCode}, not at ${stop}` },
      ]);
    }
    const issued = await findTicketRevocation(database, claims.ticketId);
    if (issued === undefined) throw notFound('Ticket', claims.ticketId);
    if (issued.revokedReason !== null) throw ticketRevoked(claims.ticketId, issued.revokedReason);

    const row = await findBookingRow(database, claims.bookingId);
    if (row === undefined || row.trip_id !== tripId) throw notFound('Booking', claims.bookingId);
    if (isTerminal(row.status)) throw await endedBookingAnswer(row.id, claims.passengerId);
    const handle: WorkflowHandle<typeof bookingWorkflow> = temporal.workflow.getHandle(
      bookingWorkflowId(row.id),
    );
    let booking: BookingState;
    try {
      booking = await handle.executeUpdate(recordBoardingUpdate, {
        args: [
          {
            passengerId: claims.passengerId,
            stopCode: stop,
            boardedAt: now().toISOString(),
            actorId: actor.userId,
            ...(deviceId === undefined ? {} : { deviceId }),
          },
        ],
      });
    } catch (error) {
      if (isWorkflowGone(error)) throw await endedBookingAnswer(row.id, claims.passengerId);
      throw domainErrorFromTemporal(error);
    }
    const passenger = booking.passengers.find((candidate) => candidate.id === claims.passengerId);
    const boarding = booking.boardings?.find((candidate) => candidate.passengerId === claims.passengerId);
    if (passenger === undefined || boarding === undefined) {
      throw new DomainError('INTERNAL', 'The booking did not record the boarding it accepted');
    }
    return {
      bookingId: booking.id,
      passengerId: passenger.id,
      firstName: passenger.firstName,
      lastName: passenger.lastName,
      seatNumber: passenger.seatNumber,
      stop: boarding.stopCode,
      boardedAt: boarding.boardedAt,
    };
  }

  async function tripManifest(
    _actor: Actor,
    tripIdInput: string,
    request: PageRequest,
  ): Promise<Page<ManifestEntry>> {
    const tripId = validateId(tripIdInput, 'trip_id');
    const window = pageWindow(manifestListing, request, { tripId });
    await assertTripExists(tripId);
    const page = await readManifestPage(database, tripId, window);
    return {
      items: page.rows.map((row) => ({
        passengerId: row.passenger_id,
        bookingId: row.booking_id,
        firstName: cipher.decrypt(row.first_name),
        lastName: cipher.decrypt(row.last_name),
        seatNumber: row.seat_number,
        boardingStop: row.boarding_stop,
        alightingStop: row.alighting_stop,
        status: row.boarding_status,
        ...(row.boarded_at === null ? {} : { boardedAt: row.boarded_at.toISOString() }),
        ...(row.boarded_stop === null ? {} : { boardedStop: row.boarded_stop }),
      })),
      ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
    };
  }

  return { recordBoarding, tripManifest };
}
