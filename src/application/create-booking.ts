// Creating a booking, as the story goes: admit the request, claim a hold slot, start the booking, answer by the deadline.
import { randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { Actor } from '../domain/actor';
import type { BookingState } from '../domain/booking';
import { bookingProcessing, DomainError, notFound, permissionDenied, unavailable } from '../domain/errors';
import { assertFareClassesOnSale, defaultRefundRule } from '../domain/fares';
import { priceWithTerms, type DiscountTerms, type PriceTerms } from '../domain/booking-price';
import { assertRedeemable } from '../domain/discount-codes';
import { assertPassengerTypes, travelDateOf } from '../domain/passenger-types';
import { assertExpectedTotal } from '../domain/price-guard';
import { assertCreateSeatsOnBus } from '../domain/seat-layout';
import {
  bookingSegmentOf,
  legRangeOf,
  resolveSegment,
  seatsTakenOnLegs,
  segmentFarePrices,
  segmentLegs,
  segmentsOverlap,
  segmentTimes,
  type Segment,
} from '../domain/segments';
import {
  isUuid,
  validateCreateBooking,
  validateId,
  type CreateBookingCommand,
  type CreateBookingInput,
} from '../domain/validation';
import { readBookableTrip, userAccountExists, type BookableTrip } from '../db/bookable-trips';
import { readDiscountCode } from '../db/discount-codes';
import { readPassengerTypes } from '../db/passenger-types';
import { bookingViewOfSnapshot, type BookingView } from '../db/booking-read-model';
import type { bookingWorkflow } from '../workflows/booking';
import { bookingWorkflowType, createBookingUpdate, type BookingWorkflowInput } from '../workflows/shared';
import {
  answerEndedCreate,
  processingRetryAfterSeconds,
  ownBookingView,
  type BookingContext,
} from './booking-context';
import { bookingStartOptions, type BookingStart } from './booking-starts';
import { answerByOf } from './command-options';
import type { CreateBookingOptions } from './interface';
import {
  answerFailedStart,
  assertStartedBySameRequest,
  reachedStart,
  settledBy,
  settleLateCreate,
  startedUnderEarlierFingerprint,
  type StartedCreate,
} from './create-answers';
import {
  assertNotRefusedWithOtherRequest,
  createRequestFingerprints,
  type RequestFingerprints,
} from './request-fingerprints';
import { seatsBeingReserved } from './seats-in-flight';
import { domainErrorFromTemporal, isWorkflowGone } from './temporal-outcomes';

/** A create let in: who books what under which booking id, and the fingerprint that tells its retries apart. */
interface AdmittedCreate {
  customerId: string;
  bookingId: string;
  /** The booking id the front chose (Idempotency-Key, request_id): a retry may name it again. */
  chosenBookingId: string | undefined;
  command: CreateBookingCommand;
  trip: BookableTrip;
  segment: Segment;
  /** One id per passenger, in order: minted here, so the price the client is held to names them. */
  passengerIds: string[];
  /** The passenger types and discount code the booking is priced with, when the request named either. */
  priceTerms: PriceTerms;
  fingerprints: RequestFingerprints;
  /** Lets other creates of this process at the seats again; idempotent. */
  leaveSeats: () => void;
}

export async function createBooking(
  context: BookingContext,
  actor: Actor,
  input: CreateBookingInput,
  options: CreateBookingOptions = {},
): Promise<BookingView> {
  // Counted from the request's arrival: the front's own timeout keeps a margin for what runs after this call.
  const answerBy = answerByOf(options, context.config.booking.createAnswerTimeoutMs, context.now);
  const create = await admit(context, actor, input, options);
  let started: StartedCreate;
  try {
    started = await startBooking(context, create, await claimHoldSlot(context, create), answerBy);
  } catch (error) {
    create.leaveSeats();
    throw error;
  }
  // The seats stay marked until the workflow has held them or failed, even when the answer goes out before.
  void started.outcome.then(create.leaveSeats);
  return answerByDeadline(context, actor, create, started, answerBy);
}

/**
 * Every check of a create's input is made here, once: only here can a bad one be refused before a workflow
 * exists. A seat someone else holds, or that another create here is reserving, is refused before any workflow (a
 * burst for a few seats starts a workflow per seat); the workflow's hold stays the authority.
 */
async function admit(
  context: BookingContext,
  actor: Actor,
  input: CreateBookingInput,
  options: CreateBookingOptions,
): Promise<AdmittedCreate> {
  const { config, database, holdClaims } = context;
  const command = validateCreateBooking(input, { maxPassengers: config.booking.maxPassengersPerBooking });
  const chosenBookingId =
    options.bookingId === undefined ? undefined : validateId(options.bookingId, 'booking_id');
  const bookingId = chosenBookingId ?? randomUUID();
  const seatNumbers = command.passengers
    .map((passenger) => passenger.seatNumber)
    .filter((seatNumber) => seatNumber !== '');
  // Both reads at once; the account's refusal still comes first when both fail.
  const customerId = actor.userId.toLowerCase();
  const [account, bookable] = await Promise.all([
    isUuid(customerId) ? userAccountExists(database, customerId) : false,
    readBookableTrip(database, {
      tripId: command.tripId,
      seatNumbers,
      bookingId,
      lapsedHoldGraceSeconds: config.booking.lapsedHoldGraceSeconds,
    }),
  ]);
  if (!account) throw permissionDenied('Bookings need a customer account; this sign-in has none');
  const trip = assertBookable(command.tripId, bookable, context.now());
  const segment = resolveSegment(trip.stops, command);
  const legs = segmentLegs(segment);
  assertSegmentNotDeparted(command.tripId, trip, segment, context.now());
  assertCreateSeatsOnBus(command, trip.seatClasses);
  assertFareClassesOnSale(command.passengers, trip.farePrices);
  const passengerIds = command.passengers.map(() => randomUUID());
  const priceTerms = await priceTermsOf(context, command, trip, segment);
  if (command.expectedTotal !== undefined) {
    const passengers = command.passengers.map((passenger, index) => ({
      ...passenger,
      id: passengerIds[index],
    }));
    // Before anything is claimed or held: a price the client did not show is refused with the one it would pay.
    assertExpectedTotal(
      command.expectedTotal,
      priceWithTerms(passengers, segmentFarePrices(trip.farePrices, trip.stops, segment), priceTerms),
    );
  }
  const fingerprints = createRequestFingerprints(context.cipher, command);
  assertNotRefusedWithOtherRequest(trip.refusedRequestFingerprint, fingerprints);
  // A refused create that named its booking id is remembered under it; a retry of a booking id is judged afresh.
  const refuseEarly = async (refusal: DomainError): Promise<never> => {
    if (chosenBookingId !== undefined)
      await holdClaims.recordRefusal(customerId, bookingId, fingerprints.fingerprint);
    throw refusal;
  };
  const seatsTaken = trip.seatsTaken.filter((taken) =>
    segmentsOverlap(segment, { boardingPosition: taken.legs.from, alightingPosition: taken.legs.to }),
  );
  if (!trip.madeBefore && seatsTaken.length > 0) {
    const stopCodes = trip.stops.map((stop) => stop.code);
    await refuseEarly(seatsTakenOnLegs(stopCodes, legRangeOf(segment), seatsTaken));
  }
  const passage = context.seatsInFlight.enter(trip.id, seatNumbers, bookingId, legs);
  if (!passage.entered && !trip.madeBefore) await refuseEarly(seatsBeingReserved(passage.reservedByOthers));
  const leaveSeats = () => {
    if (passage.entered) passage.leave();
  };
  return {
    customerId,
    bookingId,
    chosenBookingId,
    command,
    trip,
    segment,
    passengerIds,
    priceTerms,
    fingerprints,
    leaveSeats,
  };
}

/**
 * The terms a request names beyond fare classes, read only when it names them, so a plain create reads nothing
 * more: the route's passenger types (every passenger checked against them on the day of travel) and the discount
 * code, refused at once when it cannot be redeemed (it is redeemed for good with the seats).
 */
async function priceTermsOf(
  context: BookingContext,
  command: CreateBookingCommand,
  trip: BookableTrip,
  segment: Segment,
): Promise<PriceTerms> {
  const typed = command.passengers.some((passenger) => passenger.passengerType !== undefined);
  const [passengerTypes, discountCode] = await Promise.all([
    typed ? readPassengerTypes(context.database, trip.routeId) : undefined,
    command.discountCode === undefined ? undefined : readDiscountCode(context.database, command.discountCode),
  ]);
  if (passengerTypes !== undefined) {
    const travelDate = travelDateOf({
      departureTime: trip.departureTime.toISOString(),
      segment: bookingSegmentOf(trip.stops, segment, trip.departureTime.toISOString()),
    });
    assertPassengerTypes(command.passengers, passengerTypes, travelDate);
  }
  let discount: DiscountTerms | undefined;
  if (command.discountCode !== undefined) {
    const currency = Object.values(trip.farePrices)[0]?.currency;
    assertRedeemable(discountCode, {
      requestedCode: command.discountCode,
      routeId: trip.routeId,
      at: context.now().toISOString(),
      ...(currency === undefined ? {} : { currency }),
    });
    discount = {
      code: discountCode.code,
      kind: discountCode.kind,
      value: discountCode.value,
      currency: discountCode.currency,
    };
  }
  return {
    ...(passengerTypes === undefined
      ? {}
      : {
          passengerTypes: [...passengerTypes],
          legCount: segment.alightingPosition - segment.boardingPosition,
        }),
    ...(discount === undefined ? {} : { discount }),
  };
}

/** A segment whose boarding stop the bus has left cannot be booked, even when the trip is still on its way. */
function assertSegmentNotDeparted(tripId: string, trip: BookableTrip, segment: Segment, now: Date): void {
  const { departure } = segmentTimes(trip.stops, segment, trip.departureTime.toISOString());
  if (Date.parse(departure) > now.getTime()) return;
  throw new DomainError(
    'VALIDATION_FAILED',
    `Trip ${tripId} cannot be booked from ${segment.boardingStopCode}`,
    {
      fieldViolations: [
        { field: 'boarding_stop', message: `the bus left ${segment.boardingStopCode} at ${departure}` },
      ],
    },
  );
}

function assertBookable(tripId: string, trip: BookableTrip | undefined, now: Date): BookableTrip {
  const unbookable = (why: string) =>
    new DomainError('VALIDATION_FAILED', `Trip ${tripId} cannot be booked: ${why}`, {
      fieldViolations: [{ field: 'trip_id', message: why }],
    });
  if (trip === undefined) throw notFound('Trip', tripId);
  if (trip.status === 'CANCELLED') throw unbookable('the trip was cancelled');
  if (trip.status === 'DEPARTED' || trip.departureTime.getTime() <= now.getTime()) {
    throw unbookable(`the trip departed at ${trip.departureTime.toISOString()}`);
  }
  if (Object.keys(trip.farePrices).length === 0) throw unbookable('the trip has no fares on sale');
  return trip;
}

/**
 * One account may not hold a whole bus: the slot is taken before the workflow can hold anything. The booking's
 * start is stored with it, so that once the id is given out the booking is started whatever befalls this call.
 */
async function claimHoldSlot(
  context: BookingContext,
  create: AdmittedCreate,
): Promise<{ start: BookingStart; sealedStart: string }> {
  const { customerId, bookingId, command, trip, segment, passengerIds, priceTerms, fingerprints } = create;
  const times = segmentTimes(trip.stops, segment, trip.departureTime.toISOString());
  const boardingStop = trip.stops[segment.boardingPosition];
  const start: BookingStart = {
    input: {
      bookingId,
      customerId,
      tripId: trip.id,
      routeId: trip.routeId,
      departureTime: times.departure,
      originTimeZone: boardingStop.timeZone,
      segment: bookingSegmentOf(trip.stops, segment, trip.departureTime.toISOString()),
      arrivalTime: times.arrival,
      passengers: [...command.passengers],
      passengerIds,
      contactEmail: command.contactEmail,
      ...(command.contactPhone === undefined ? {} : { contactPhone: command.contactPhone }),
      farePrices: segmentFarePrices(trip.farePrices, trip.stops, segment),
      seatClasses: trip.seatClasses,
      refundRule: defaultRefundRule,
      ...priceTermsInput(priceTerms),
      maxPassengers: context.config.booking.maxPassengersPerBooking,
      timings: context.timings,
      taskQueues: context.taskQueues,
    },
    requestFingerprint: fingerprints.fingerprint,
  };
  const sealedStart = context.starts.seal(start);
  await context.holdClaims.claim(customerId, bookingId, sealedStart);
  return { start, sealedStart };
}

/** The terms as the workflow input carries them: only those the request named. */
function priceTermsInput(
  terms: PriceTerms,
): Pick<BookingWorkflowInput, 'passengerTypes' | 'legCount' | 'discount'> {
  return {
    ...(terms.passengerTypes === undefined ? {} : { passengerTypes: [...terms.passengerTypes] }),
    ...(terms.legCount === undefined ? {} : { legCount: terms.legCount }),
    ...(terms.discount === undefined ? {} : { discount: terms.discount }),
  };
}

/**
 * One round trip starts the workflow and sends its create update, which answers once the seats are held (the
 * first workflow task holds them by local activity) or is refused by its validator for another request's id.
 */
async function startBooking(
  context: BookingContext,
  create: AdmittedCreate,
  claimed: { start: BookingStart; sealedStart: string },
  answerBy: number,
): Promise<StartedCreate> {
  // Queueing (a burst, a slow database) used the whole answer time before anything was started: nothing exists
  // yet, so the caller may be told to retry. An id an earlier create of it already gave out is started all the same.
  if (context.now().getTime() >= answerBy && (await context.holdClaims.withdraw(create.bookingId))) {
    throw unavailable(
      'Too many bookings are being made right now; retry shortly',
      processingRetryAfterSeconds,
    );
  }
  const operation = new WithStartWorkflowOperation<typeof bookingWorkflow>(
    bookingWorkflowType,
    bookingStartOptions(claimed.start),
  );
  const outcome = context.temporal.workflow
    .executeUpdateWithStart(createBookingUpdate, {
      args: [{ requestFingerprint: create.fingerprints.fingerprint }],
      startWorkflowOperation: operation,
    })
    .then(
      (booking): { booking: BookingState } => ({ booking }),
      (error: unknown) => ({ error }),
    );
  return { sealedStart: claimed.sealedStart, operation, outcome };
}

/** The booking once held, its refusal, or BOOKING_PROCESSING when `answerBy` comes first. */
async function answerByDeadline(
  context: BookingContext,
  actor: Actor,
  create: AdmittedCreate,
  started: StartedCreate,
  answerBy: number,
): Promise<BookingView> {
  const { bookingId, chosenBookingId, fingerprints } = create;
  const answer = await settledBy(started.outcome, answerBy, context.now);
  if (answer === undefined) {
    // Pointed at the booking only when it is this request's (or its start is still on its way).
    if (chosenBookingId !== undefined) {
      await assertStartedBySameRequest(context, bookingId, fingerprints, { notStartedYet: 'fine' });
    }
    // The id goes out: from here on the booking is a promise, kept by whoever finds it unstarted. A create of
    // the same id that answered an error withdrew the claim first: nothing is promised under it any more.
    if (!(await context.holdClaims.promise(bookingId))) {
      throw unavailable(
        'Too many bookings are being made right now; retry shortly',
        processingRetryAfterSeconds,
      );
    }
    settleLateCreate(context, bookingId, started);
    throw bookingProcessing(bookingId, processingRetryAfterSeconds);
  }
  // The validator let the update in: this request's booking.
  if ('booking' in answer) return bookingViewOfSnapshot(answer.booking);
  const { error } = answer;
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    // The booking id names a workflow that has ended: answer what its first request got.
    await assertStartedBySameRequest(context, bookingId, fingerprints);
    return answerEndedCreate(context, actor, bookingId);
  }
  if (error instanceof WorkflowUpdateFailedError) {
    const refusal = domainErrorFromTemporal(error);
    if (refusal.code === 'IDEMPOTENCY_KEY_REUSED') {
      // This request's own booking, started under the earlier fingerprint: answered as a repeat is.
      if (await startedUnderEarlierFingerprint(context, bookingId, fingerprints)) {
        return answerRunningCreate(context, actor, bookingId);
      }
      // Refused as another request's booking id: that booking keeps its slot.
      throw refusal;
    }
    await context.holdClaims.release(bookingId);
    throw refusal;
  }
  const startReached = await reachedStart(started.operation);
  if (chosenBookingId !== undefined && startReached) {
    await assertStartedBySameRequest(context, bookingId, fingerprints);
  }
  // The workflow ended between its start and the update (a fast SEAT_UNAVAILABLE): answer its outcome.
  if (isWorkflowGone(error)) return answerEndedCreate(context, actor, bookingId);
  if (!startReached) return answerFailedStart(context, bookingId, error);
  // The workflow has started and goes on whatever failed between this process and Temporal since.
  throw bookingProcessing(bookingId, processingRetryAfterSeconds);
}

/** A create joining its booking's running workflow: the booking once its seats are held, until then BOOKING_PROCESSING. */
async function answerRunningCreate(
  context: BookingContext,
  actor: Actor,
  bookingId: string,
): Promise<BookingView> {
  const own = await ownBookingView(context, actor, bookingId);
  if (own !== undefined) return own;
  throw bookingProcessing(bookingId, processingRetryAfterSeconds);
}
