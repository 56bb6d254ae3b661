// Customers' requests as Workflow Updates: validated before they land in history, then run one at a time.
import { CancellationScope } from '@temporalio/workflow';
import { bookingStateConflict } from '../domain/errors';
import { asUpdateFailure, asValidationFailure } from './failures';
import { SerialExecutor } from './serial-executor';

export class CustomerRequests {
  private readonly turns = new SerialExecutor();

  /** `seatsHeld` says whether the booking exists yet: until its seats are held, every request is refused. */
  constructor(private readonly seatsHeld: () => boolean) {}

  /** An update validator: whatever `check` throws rejects the request before it is accepted. */
  validate(check: () => unknown): void {
    if (!this.seatsHeld()) {
      throw asValidationFailure(
        bookingStateConflict('PENDING_PAYMENT', 'update', 'the seats are not held yet'),
      );
    }
    try {
      check();
    } catch (error) {
      throw asValidationFailure(error);
    }
  }

  /**
   * Accepted requests run one at a time, in arrival order, and once started they finish even if the workflow
   * is cancelled: a charge must be recorded to be refundable. Each re-checks the state it finds.
   */
  answer<T>(work: () => Promise<T>): Promise<T> {
    return this.turns
      .run(() => CancellationScope.nonCancellable(work))
      .catch((error: unknown) => {
        throw asUpdateFailure(error);
      });
  }

  /** The workflow's own transitions (a timer's, an operator's cancel) wait their turn behind requests in flight. */
  inTurn<T>(work: () => Promise<T>): Promise<T> {
    return this.turns.run(work);
  }
}
