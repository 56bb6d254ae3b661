// The async context every workflow of a worker's V8 context shares: loaded once, when the context is made.
import type { Context, ContextManager } from '@opentelemetry/api';

/*
 * Why one store for all: Node keeps one slot per enabled AsyncLocalStorage on every promise created while it is
 * enabled, and a workflow keeps its storages enabled for as long as it is cached. A storage made per workflow
 * therefore costs every promise of every cached workflow one slot per cached workflow: memory that grows with the
 * square of the cache. The worker preloads this module (see src/worker/workflow-bundle.ts), so the storages
 * below are made once per V8 context; a store is bound to the promises made under it, so workflows that take
 * turns in the context never see each other's.
 *
 * The SDK freezes what a preloaded module exports, and the storages must stay writable: only functions are
 * exported, the storages stay in this module's scope. Nothing of @opentelemetry/api is imported at run time
 * for the same reason (a frozen copy of it could not register a tracer provider); callers pass its root context.
 */

/** What the code below uses of an AsyncLocalStorage. */
interface ContextStorage<T> {
  run<R>(store: T, work: () => R): R;
  getStore(): T | undefined;
}

/** Outside a workflow sandbox (a test importing the interceptors' constants) there is no context to keep. */
class NoContextStorage<T> implements ContextStorage<T> {
  run<R>(_store: T, work: () => R): R {
    return work();
  }

  getStore(): T | undefined {
    return undefined;
  }
}

/** The sandbox's AsyncLocalStorage (the SDK injects it): made before any workflow, it outlives every workflow. */
const SandboxAsyncLocalStorage =
  (globalThis as unknown as { AsyncLocalStorage?: new <T>() => ContextStorage<T> }).AsyncLocalStorage ??
  NoContextStorage;

const tracingContexts: ContextStorage<Context> = new SandboxAsyncLocalStorage<Context>();
const servedRequestIds: ContextStorage<string> = new SandboxAsyncLocalStorage<string>();

/**
 * An OpenTelemetry context manager over the one shared storage; each workflow registers its own (a small object),
 * and disabling it leaves the storage to the other workflows.
 */
export function sharedContextManager(rootContext: Context): ContextManager {
  const manager: ContextManager = {
    active: () => tracingContexts.getStore() ?? rootContext,
    with: (context, work, thisArgument, ...workArguments) =>
      tracingContexts.run(context, () => work.apply(thisArgument, workArguments)),
    bind: (context, target) => {
      if (typeof target !== 'function') return target;
      const bound = function (this: unknown, ...targetArguments: unknown[]) {
        return manager.with(context, () =>
          (target as (...values: unknown[]) => unknown).apply(this, targetArguments),
        );
      };
      return bound as typeof target;
    },
    enable: () => manager,
    disable: () => manager,
  };
  return manager;
}

/** Runs `work` as part of serving the request `requestId`: what it logs and the activities it starts carry it. */
export function servingRequest<T>(requestId: string, work: () => T): T {
  return servedRequestIds.run(requestId, work);
}

/** The request the code running now serves, if any. */
export function servedRequestId(): string | undefined {
  return servedRequestIds.getStore();
}
