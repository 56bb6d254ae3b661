// Workflow updates run one at a time, in arrival order, and one failing does not stop the next.
import { SerialExecutor } from '../../../src/workflows/serial-executor';

test('work runs strictly one after another, in the order it arrived', async () => {
  const executor = new SerialExecutor();
  const events: string[] = [];
  const step = (name: string, ticks: number) => async () => {
    events.push(`${name} start`);
    for (let tick = 0; tick < ticks; tick += 1) await Promise.resolve();
    events.push(`${name} end`);
    return name;
  };

  const results = await Promise.all([
    executor.run(step('a', 5)),
    executor.run(step('b', 1)),
    executor.run(step('c', 3)),
  ]);

  expect(results).toEqual(['a', 'b', 'c']);
  expect(events).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
});

test('a failure reaches its own caller only; the queue keeps going', async () => {
  const executor = new SerialExecutor();
  const failing = executor.run(() => Promise.reject(new Error('declined')));
  const next = executor.run(() => Promise.resolve('next'));

  await expect(failing).rejects.toThrow('declined');
  await expect(next).resolves.toBe('next');
});
