// The notification outbox: NOTIFICATIONS_OUTBOX_DIR, else .data/outbox; the development stacks put it in their data folder.
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { loadStackConfig, stackOutboxDirectory } from '../../../dev/stack/settings';

const projectRoot = path.resolve(__dirname, '../../..');

const minimalEnvironment = {
  DATABASE_URL: 'postgres://user:password@127.0.0.1:5432/bookings',
  ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  ENCRYPTION_ACTIVE_KEY_ID: 'k1',
  BLIND_INDEX_KEY: Buffer.alloc(32, 2).toString('base64'),
  GRPC_INSECURE: 'true',
};

/** Where the worker's outbox writes, resolved as the activities resolve it. */
function outboxOf(environment: Record<string, string>): string {
  return path.resolve(
    projectRoot,
    loadConfig({ ...minimalEnvironment, ...environment }).notifications.outboxDirectory,
  );
}

describe('notification outbox folder', () => {
  it('is .data/outbox of the project when NOTIFICATIONS_OUTBOX_DIR is not set', () => {
    expect(outboxOf({})).toBe(path.join(projectRoot, '.data', 'outbox'));
  });

  it('is NOTIFICATIONS_OUTBOX_DIR when that is set', () => {
    expect(outboxOf({ NOTIFICATIONS_OUTBOX_DIR: '/srv/mail' })).toBe('/srv/mail');
  });

  it.each([
    ['an absolute STACK_DATA_DIR', { STACK_DATA_DIR: '/srv/stack-data' }],
    ['an absolute STACK_DATA_DIR with a trailing slash', { STACK_DATA_DIR: '/srv/stack-data/' }],
    ['a relative STACK_DATA_DIR', { STACK_DATA_DIR: 'var/stack' }],
    ['no STACK_DATA_DIR', {}],
  ])(
    "is the development stack's data folder's outbox with %s",
    (_case, environment: Record<string, string>) => {
      const dataDirectory = loadStackConfig(environment, projectRoot).dataDirectory;
      const handedDown = stackOutboxDirectory(environment, dataDirectory);
      expect(outboxOf({ NOTIFICATIONS_OUTBOX_DIR: handedDown })).toBe(path.join(dataDirectory, 'outbox'));
    },
  );

  it('is NOTIFICATIONS_OUTBOX_DIR under a development stack too, whatever STACK_DATA_DIR says', () => {
    const environment = { STACK_DATA_DIR: '/srv/stack-data', NOTIFICATIONS_OUTBOX_DIR: '/srv/mail' };
    const dataDirectory = loadStackConfig(environment, projectRoot).dataDirectory;
    expect(stackOutboxDirectory(environment, dataDirectory)).toBe('/srv/mail');
  });
});
