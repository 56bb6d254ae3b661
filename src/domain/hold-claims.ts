// A hold claim's states and the moves between them: the one table the claims' SQL and its unit tests follow.

/**
 * REFUSED   a create refused before it claimed a slot; kept for its request's fingerprint, takes no slot.
 * CLAIMED   holds one of the customer's slots and the booking's sealed start; its create may still withdraw it.
 * PROMISED  the booking id was given out (or someone else is starting it): the booking must be started.
 * STARTED   the booking's workflow is known to exist; nobody needs to start it again.
 * RELEASED  the create ended without a booking: the slot is free, the claim is kept to answer reads.
 */
export const holdClaimStates = ['REFUSED', 'CLAIMED', 'PROMISED', 'STARTED', 'RELEASED'] as const;

export type HoldClaimState = (typeof holdClaimStates)[number];

/**
 * claim     the create takes a slot: a new claim, or a lapsed or refused one of the same booking id taken again
 *           (a given-out id stays promised, since its new start must still go out).
 * refuse    a create refused before it claimed: a new row only; an existing claim is never moved by it.
 * promise   the id is about to be given out, or someone other than the create is about to start the booking.
 * withdraw  the create answers an error: nothing may start behind it, unless the id was promised first.
 * start     a workflow exists for the booking.
 * release   the create ended without a booking: the slot is free.
 */
export type HoldClaimEvent = 'claim' | 'refuse' | 'promise' | 'withdraw' | 'start' | 'release';

/** Where each event moves a claim from each state it is allowed in; `new` is a booking id without a claim. */
export const holdClaimTransitions: Readonly<
  Record<HoldClaimEvent, Readonly<Partial<Record<HoldClaimState | 'new', HoldClaimState>>>>
> = {
  claim: {
    new: 'CLAIMED',
    REFUSED: 'CLAIMED',
    RELEASED: 'CLAIMED',
    CLAIMED: 'CLAIMED',
    PROMISED: 'PROMISED',
    STARTED: 'PROMISED',
  },
  refuse: { new: 'REFUSED' },
  promise: { CLAIMED: 'PROMISED', PROMISED: 'PROMISED', STARTED: 'STARTED' },
  withdraw: { CLAIMED: 'RELEASED', RELEASED: 'RELEASED', REFUSED: 'REFUSED' },
  start: { CLAIMED: 'STARTED', PROMISED: 'STARTED', STARTED: 'STARTED' },
  release: { CLAIMED: 'RELEASED', PROMISED: 'RELEASED', STARTED: 'RELEASED', RELEASED: 'RELEASED' },
};

/** The state `event` moves a claim in `state` to; undefined when the event is not allowed there (refused). */
export function nextHoldClaimState(
  state: HoldClaimState | 'new',
  event: HoldClaimEvent,
): HoldClaimState | undefined {
  return holdClaimTransitions[event][state];
}

/** The existing states `event` may move a claim from (its SQL updates only rows in them). */
export function holdClaimStatesAllowing(event: HoldClaimEvent): HoldClaimState[] {
  return holdClaimStates.filter((state) => nextHoldClaimState(state, event) !== undefined);
}

/** Every move between two different states that some event makes, sorted: what the database lets through. */
export function holdClaimMoves(): [HoldClaimState, HoldClaimState][] {
  const moves = new Set<string>();
  for (const event of Object.keys(holdClaimTransitions) as HoldClaimEvent[]) {
    for (const from of holdClaimStates) {
      const to = nextHoldClaimState(from, event);
      if (to !== undefined && to !== from) moves.add(`${from} ${to}`);
    }
  }
  return [...moves].sort().map((move) => move.split(' ') as [HoldClaimState, HoldClaimState]);
}

/** A claim in these states takes one of the customer's slots while its booking has no row and it has not expired. */
export const slotTakingHoldClaimStates: readonly HoldClaimState[] = ['CLAIMED', 'PROMISED', 'STARTED'];

/** A claim in these states whose booking has no row may have a start that never reached Temporal. */
export const unstartedHoldClaimStates: readonly HoldClaimState[] = ['CLAIMED', 'PROMISED'];
