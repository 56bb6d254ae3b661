// A hold claim's written transitions: which events move it where, and which are refused.
import {
  holdClaimMoves,
  holdClaimStates,
  holdClaimStatesAllowing,
  nextHoldClaimState,
  type HoldClaimEvent,
  type HoldClaimState,
} from '../../../src/domain/hold-claims';

describe('nextHoldClaimState', () => {
  it.each<[HoldClaimState | 'new', HoldClaimEvent, HoldClaimState]>([
    ['new', 'claim', 'CLAIMED'],
    ['new', 'refuse', 'REFUSED'],
    ['REFUSED', 'claim', 'CLAIMED'],
    ['RELEASED', 'claim', 'CLAIMED'],
    ['PROMISED', 'claim', 'PROMISED'],
    ['STARTED', 'claim', 'PROMISED'],
    ['CLAIMED', 'promise', 'PROMISED'],
    ['STARTED', 'promise', 'STARTED'],
    ['CLAIMED', 'withdraw', 'RELEASED'],
    ['RELEASED', 'withdraw', 'RELEASED'],
    ['CLAIMED', 'start', 'STARTED'],
    ['PROMISED', 'start', 'STARTED'],
    ['PROMISED', 'release', 'RELEASED'],
    ['STARTED', 'release', 'RELEASED'],
  ])('moves a %s claim on %s to %s', (from, event, to) => {
    expect(nextHoldClaimState(from, event)).toBe(to);
  });

  it.each<[HoldClaimState | 'new', HoldClaimEvent]>([
    // An answer that gives the id out never revives a claim its create withdrew with an error answer.
    ['RELEASED', 'promise'],
    ['REFUSED', 'promise'],
    // A promised id is never dropped by an error answer, nor one whose workflow exists.
    ['PROMISED', 'withdraw'],
    ['STARTED', 'withdraw'],
    // A workflow seen after its booking ended does not bring the slot back.
    ['RELEASED', 'start'],
    ['REFUSED', 'start'],
    ['REFUSED', 'release'],
    // A refusal is remembered only for an id without a claim.
    ['CLAIMED', 'refuse'],
    ['RELEASED', 'refuse'],
    ['new', 'promise'],
    ['new', 'release'],
  ])('refuses %s on %s', (from, event) => {
    expect(nextHoldClaimState(from, event)).toBeUndefined();
  });

  it('never moves a released claim anywhere but to a new claim of its id', () => {
    const events: HoldClaimEvent[] = ['claim', 'refuse', 'promise', 'withdraw', 'start', 'release'];
    const targets = events
      .map((event) => nextHoldClaimState('RELEASED', event))
      .filter((state) => state !== undefined && state !== 'RELEASED');
    expect(targets).toEqual(['CLAIMED']);
  });
});

describe('holdClaimStatesAllowing', () => {
  it('lists the existing states an event may move a claim from', () => {
    expect(holdClaimStatesAllowing('promise')).toEqual(['CLAIMED', 'PROMISED', 'STARTED']);
    expect(holdClaimStatesAllowing('withdraw')).toEqual(['REFUSED', 'CLAIMED', 'RELEASED']);
    expect(holdClaimStatesAllowing('release')).toEqual(['CLAIMED', 'PROMISED', 'STARTED', 'RELEASED']);
    expect(holdClaimStatesAllowing('refuse')).toEqual([]);
  });
});

describe('holdClaimMoves', () => {
  it('lists every move between two different states, the list migration 017 gives the database', () => {
    expect(holdClaimMoves()).toEqual([
      ['CLAIMED', 'PROMISED'],
      ['CLAIMED', 'RELEASED'],
      ['CLAIMED', 'STARTED'],
      ['PROMISED', 'RELEASED'],
      ['PROMISED', 'STARTED'],
      ['REFUSED', 'CLAIMED'],
      ['RELEASED', 'CLAIMED'],
      ['STARTED', 'PROMISED'],
      ['STARTED', 'RELEASED'],
    ]);
    for (const [from, to] of holdClaimMoves()) {
      expect(holdClaimStates).toContain(from);
      expect(holdClaimStates).toContain(to);
    }
  });
});
