// Unit tests: the committed baseline makes buf reject incompatible proto changes and accept the current contracts.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repositoryRoot = path.join(__dirname, '../../..');
const bufExecutable = path.join(repositoryRoot, 'node_modules/.bin/buf');
const baselineImage = path.join(repositoryRoot, 'proto/baseline/contracts.binpb');
const bufBreakingFindingsExitCode = 100;

let workspaceCopy: string;

function copyWorkspace(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'contracts-breaking-'));
  cpSync(path.join(repositoryRoot, 'buf.yaml'), path.join(directory, 'buf.yaml'));
  cpSync(path.join(repositoryRoot, 'proto'), path.join(directory, 'proto'), {
    recursive: true,
    filter: (source) => source !== path.join(repositoryRoot, 'proto/baseline'),
  });
  return directory;
}

function editProto(relativePath: string, search: string | RegExp, replacement: string): void {
  const file = path.join(workspaceCopy, 'proto', relativePath);
  const original = readFileSync(file, 'utf8');
  const edited = original.replace(search, replacement);
  expect(edited).not.toBe(original);
  writeFileSync(file, edited);
}

function runBreakingCheck(): { status: number | null; output: string } {
  const result = spawnSync(bufExecutable, ['breaking', '--against', baselineImage], {
    cwd: workspaceCopy,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeEach(() => {
  workspaceCopy = copyWorkspace();
});

afterEach(() => {
  rmSync(workspaceCopy, { recursive: true, force: true });
});

describe('buf breaking against the committed baseline', () => {
  it('accepts the unmodified contracts', () => {
    const { status, output } = runBreakingCheck();
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('accepts an added field', () => {
    editProto(
      'com/example/bookings/v1/booking.proto',
      '  int64 version = 19;\n',
      '  int64 version = 19;\n\n  // Seat count, added later.\n  int32 seat_count = 99;\n',
    );
    expect(runBreakingCheck().status).toBe(0);
  });

  it('rejects a changed field type in Booking', () => {
    editProto('com/example/bookings/v1/booking.proto', 'string customer_id = 2;', 'int64 customer_id = 2;');
    const { status, output } = runBreakingCheck();
    expect(status).toBe(bufBreakingFindingsExitCode);
    expect(output).toMatch(/Field "2" with name "customer_id" on message "Booking" changed type/);
  });

  it('rejects a renumbered field in Booking', () => {
    editProto('com/example/bookings/v1/booking.proto', 'string trip_id = 3;', 'string trip_id = 30;');
    const { status, output } = runBreakingCheck();
    expect(status).toBe(bufBreakingFindingsExitCode);
    expect(output).toMatch(/field "3" with name "trip_id" on message "Booking" was deleted/);
  });

  it('rejects a removed RPC', () => {
    editProto(
      'com/example/bookings/v1/booking_service.proto',
      /\n {2}\/\/ Lists bookings, newest first[\s\S]*?\n {2}}\n/,
      '\n',
    );
    const { status, output } = runBreakingCheck();
    expect(status).toBe(bufBreakingFindingsExitCode);
    expect(output).toMatch(/RPC "ListBookings" on service "BookingService" was deleted/);
  });
});
