// The saga's undo list: each step registers how to undo itself before it runs; undoing runs newest first.
import { CancellationScope } from '@temporalio/workflow';

export type Compensation<Context> = (context: Context) => Promise<void>;

export class Compensations<Context = void> {
  private readonly steps: { name: string; undo: Compensation<Context> }[] = [];

  /** Register before the step runs: a step that times out may still have happened, and undoing is idempotent. */
  add(name: string, undo: Compensation<Context>): void {
    this.steps.push({ name, undo });
  }

  has(name: string): boolean {
    return this.steps.some((step) => step.name === name);
  }

  /**
   * Runs every registered undo in reverse order, even when the workflow is being cancelled, so nothing stays
   * held and nothing stays charged. An undo leaves the list once it succeeded; if one fails, it and the older
   * ones stay registered for the next attempt.
   */
  async runInReverse(context: Context): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      while (this.steps.length > 0) {
        await this.steps[this.steps.length - 1].undo(context);
        this.steps.pop();
      }
    });
  }
}
