// The import-boundary rule (.dependency-cruiser.cjs) passes a tree that follows the layers (dev/ importing src/) and
// names each wrong-way import, module cycle and folder cycle in one that does not (src/ importing dev/ among them).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const projectRoot = path.resolve(__dirname, '../../..');
const ruleFile = path.join(projectRoot, '.dependency-cruiser.cjs');
const cruiser = path.join(projectRoot, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

type SourceTree = Record<string, string>;

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/** A miniature src/ and dev/ in the project's shape, where every import goes the allowed way. */
const layeredTree: SourceTree = {
  'src/domain/booking.ts': 'export type Money = { amountMinor: number; currency: string };\n',
  'src/domain/roles.ts':
    "import type { Money } from './booking';\nexport type Role = 'customer';\nexport type M = Money;\n",
  'src/domain/task-queues.ts': "export const taskQueues = { bookings: 'bookings' } as const;\n",
  'src/project-root.ts': "export const projectRoot = '.';\n",
  'src/config/index.ts':
    "import { taskQueues } from '../domain/task-queues';\nexport const queues = taskQueues;\n",
  'src/generated/booking.ts': 'export const BookingMessage = {};\n',
  'src/contracts/proto-options.ts':
    "import { BookingMessage } from '../generated/booking';\nimport { projectRoot } from '../project-root';\nexport const read = [BookingMessage, projectRoot];\n",
  'src/security/policy.ts':
    "import type { Role } from '../domain/roles';\nimport { read } from '../contracts/proto-options';\nexport const policy = (role: Role) => [role, read];\n",
  'src/db/connection.ts': "import { policy } from '../security/policy';\nexport const database = policy;\n",
  'src/retry.ts': 'export const retrying = <T>(work: () => Promise<T>): Promise<T> => work();\n',
  'src/ports/ledger.ts':
    "import type { Money } from '../domain/booking';\nexport interface Ledger { record(amount: Money): Promise<void> }\nexport class LedgerDown extends Error {}\n",
  'src/db/ledger.ts':
    "import type { Ledger } from '../ports/ledger';\nimport { retrying } from '../retry';\nexport const ledger: Ledger = { record: () => retrying(() => Promise.resolve()) };\n",
  'src/identity/provider.ts':
    "import { database } from '../db/connection';\nexport const provider = database;\n",
  'src/activities/interface.ts':
    "import { ApplicationFailure } from '@temporalio/common';\nimport type { Money } from '../domain/booking';\nexport type Charge = (amount: Money) => Promise<void>;\nexport const businessFailure = () => ApplicationFailure.nonRetryable('declined');\n",
  'src/activities/payments.ts':
    "import { database } from '../db/connection';\nimport { businessFailure, type Charge } from './interface';\nexport const charge: Charge = async () => { void database; throw businessFailure(); };\n",
  'src/workflows/shared.ts': "export const bookingWorkflowType = 'bookingWorkflow';\n",
  'src/workflows/booking.ts':
    "import { proxyActivities } from '@temporalio/workflow';\nimport { businessFailure, type Charge } from '../activities/interface';\nexport async function bookingWorkflow(): Promise<void> { const { charge } = proxyActivities<{ charge: Charge }>({ startToCloseTimeout: 1000 }); await charge({ amountMinor: 1, currency: 'EUR' }); void businessFailure; }\n",
  'src/application/bookings.ts':
    "import { bookingWorkflowType } from '../workflows/shared';\nimport type { bookingWorkflow } from '../workflows/booking';\nimport type { Knex } from 'knex';\nimport { database } from '../db/connection';\nexport const start = (workflow: typeof bookingWorkflow, handle: Knex) => [bookingWorkflowType, workflow, database, handle];\n",
  'src/api/rest/handlers.ts':
    "import { start } from '../../application/bookings';\nimport { provider } from '../../identity/provider';\nexport const handlers = [start, provider];\n",
  'src/api/main.ts':
    "import { handlers } from './rest/handlers';\nimport { database } from '../db/connection';\nexport const main = [handlers, database];\n",
  'dev/seed/demo-users.ts':
    "import type { Role } from '../../src/domain/roles';\nexport const demoRole: Role = 'customer';\n",
  'dev/stack/start.ts':
    "import { main } from '../../src/api/main';\nimport { demoRole } from '../seed/demo-users';\nexport const start = [main, demoRole];\n",
};

/** Each wrong-way import added to the layered tree, with the violation the rule must report for it. */
const wrongWayImports: { file: string; source: string; expected: Violation[] }[] = [
  {
    file: 'src/domain/money.ts',
    source: "import '../application/bookings';\n",
    expected: [{ rule: 'layer-domain', from: 'src/domain/money.ts', to: 'src/application/bookings.ts' }],
  },
  {
    file: 'src/domain/clock.ts',
    source: "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
    expected: [{ rule: 'domain-plain-functions', from: 'src/domain/clock.ts', to: 'fs' }],
  },
  {
    file: 'src/security/token-verifier.ts',
    source: "import type { start } from '../application/bookings';\nexport type Start = typeof start;\n",
    expected: [
      { rule: 'layer-security', from: 'src/security/token-verifier.ts', to: 'src/application/bookings.ts' },
    ],
  },
  {
    file: 'src/security/from-config.ts',
    source: "import { provider } from '../identity/provider';\nexport const verifier = provider;\n",
    expected: [
      { rule: 'layer-security', from: 'src/security/from-config.ts', to: 'src/identity/provider.ts' },
    ],
  },
  {
    file: 'src/config/index.ts',
    source:
      "import { bookingWorkflowType } from '../workflows/shared';\nexport const type = bookingWorkflowType;\n",
    expected: [{ rule: 'layer-config', from: 'src/config/index.ts', to: 'src/workflows/shared.ts' }],
  },
  {
    file: 'src/activities/index.ts',
    source:
      "import { bookingWorkflowType } from '../workflows/shared';\nexport const type = bookingWorkflowType;\n",
    expected: [{ rule: 'layer-activities', from: 'src/activities/index.ts', to: 'src/workflows/shared.ts' }],
  },
  {
    file: 'src/application/summary.ts',
    source:
      "import { bookingWorkflow } from '../workflows/booking';\nexport const workflow = bookingWorkflow;\n",
    expected: [
      {
        rule: 'application-workflow-types-only',
        from: 'src/application/summary.ts',
        to: 'src/workflows/booking.ts',
      },
    ],
  },
  {
    file: 'src/workflows/seats.ts',
    source: "import { charge } from '../activities/payments';\nexport const run = charge;\n",
    expected: [{ rule: 'layer-workflows', from: 'src/workflows/seats.ts', to: 'src/activities/payments.ts' }],
  },
  {
    file: 'src/workflows/clock.ts',
    source: "import { hostname } from 'node:os';\nexport const host = hostname;\n",
    expected: [{ rule: 'workflows-sandbox-packages', from: 'src/workflows/clock.ts', to: 'os' }],
  },
  {
    file: 'src/api/rest/users.ts',
    source: "import { database } from '../../db/connection';\nexport const users = database;\n",
    expected: [{ rule: 'api-fronts-no-db', from: 'src/api/rest/users.ts', to: 'src/db/connection.ts' }],
  },
  {
    file: 'src/application/routes.ts',
    source: "import knex from 'knex';\nexport const routes = knex;\n",
    expected: [{ rule: 'sql-in-db', from: 'src/application/routes.ts', to: 'node_modules/knex/knex.js' }],
  },
  {
    file: 'src/api/rest/readiness.ts',
    source: "import type { Knex } from 'knex';\nexport type Handle = Knex;\n",
    expected: [
      {
        rule: 'api-fronts-no-knex',
        from: 'src/api/rest/readiness.ts',
        to: 'node_modules/knex/knex.js',
      },
    ],
  },
  {
    file: 'src/identity/demo-accounts.ts',
    source: "import { demoRole } from '../../dev/seed/demo-users';\nexport const role = demoRole;\n",
    expected: [{ rule: 'src-not-dev', from: 'src/identity/demo-accounts.ts', to: 'dev/seed/demo-users.ts' }],
  },
  {
    file: 'src/retry.ts',
    source: "import type { Money } from './domain/booking';\nexport type Backoff = Money;\n",
    expected: [{ rule: 'layer-retry', from: 'src/retry.ts', to: 'src/domain/booking.ts' }],
  },
  {
    file: 'src/db/ledger-errors.ts',
    source: "import { LedgerDown } from '../ports/ledger';\nexport const down = LedgerDown;\n",
    expected: [{ rule: 'db-ports-types-only', from: 'src/db/ledger-errors.ts', to: 'src/ports/ledger.ts' }],
  },
  {
    file: 'src/adapters/simulator.ts',
    source: "import { ledger } from '../db/ledger';\nexport const store = ledger;\n",
    expected: [{ rule: 'layer-adapters', from: 'src/adapters/simulator.ts', to: 'src/db/ledger.ts' }],
  },
  {
    file: 'src/ports/left.ts',
    source: "import { right } from './right';\nexport const left = (): unknown => right;\n",
    // One cycle is one violation, named from the module the cruise meets first.
    expected: [{ rule: 'no-circular', from: 'src/ports/left.ts', to: 'src/ports/right.ts' }],
  },
  {
    file: 'src/ports/right.ts',
    source: "import { left } from './left';\nexport const right = (): unknown => left;\n",
    expected: [],
  },
];

/** Runs the boundary check the way `npm test` does (dependency-cruiser's CLI on src and dev, default reporter). */
function cruise(tree: SourceTree): { status: number | null; violations: Violation[]; rules: string[] } {
  const root = mkdtempSync(path.join(tmpdir(), 'import-boundaries-'));
  try {
    for (const [file, text] of Object.entries(tree)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    writeFileSync(
      path.join(root, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }),
    );
    // The Temporal packages the rules name resolve as they do in the project.
    symlinkSync(path.join(projectRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    const run = spawnSync(process.execPath, [cruiser, 'src', 'dev', '--config', ruleFile], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    // The reporter writes `error <rule>: <from> → <to>`; a cycle lists its members on the following lines.
    const blocks = run.stdout.split(/^\s*error /m).slice(1);
    const parsed = blocks.flatMap((block) => {
      const match = /^([\w-]+): ([\s\S]*)$/.exec(block.split('\n\n')[0].trim());
      if (!match) return [];
      // An npm package resolves through the node_modules link to wherever the project keeps it.
      const chain = match[2].split('→').map((member) => member.trim().replace(/^.*?(?=node_modules\/)/, ''));
      return [{ rule: match[1], from: chain[0], to: chain[1] }];
    });
    const rules = parsed.map((violation) => violation.rule);
    // Folder cycles are checked by rule name alone; module edges are compared exactly.
    const violations = parsed.filter((violation) => violation.rule !== 'no-folder-cycle');
    return { status: run.status, violations, rules };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('the import-boundary rule', () => {
  it('passes a tree whose imports follow the layers', () => {
    const { status, rules } = cruise(layeredTree);
    expect(rules).toEqual([]);
    expect(status).toBe(0);
  });

  describe('in a tree with wrong-way imports', () => {
    const wrongTree: SourceTree = { ...layeredTree };
    for (const { file, source } of wrongWayImports) wrongTree[file] = (wrongTree[file] ?? '') + source;
    let outcome: ReturnType<typeof cruise>;
    beforeAll(() => {
      outcome = cruise(wrongTree);
    });

    it('fails the run', () => {
      expect(outcome.status).not.toBe(0);
    });

    it.each(wrongWayImports.flatMap(({ expected }) => expected))(
      'reports $rule: $from → $to',
      (violation) => {
        expect(outcome.violations).toContainEqual(violation);
      },
    );

    it('reports the folder cycle a wrong-way import closes', () => {
      // activities/index.ts → workflows/shared.ts closes activities → workflows → activities.
      expect(outcome.rules).toContain('no-folder-cycle');
    });

    it('reports nothing but the wrong-way imports and the folder cycles they close', () => {
      const byEdge = (left: Violation, right: Violation) =>
        `${left.rule} ${left.from} ${left.to}`.localeCompare(`${right.rule} ${right.from} ${right.to}`);
      const expected = wrongWayImports.flatMap((wrongWay) => wrongWay.expected);
      expect([...outcome.violations].sort(byEdge)).toEqual([...expected].sort(byEdge));
      expect(outcome.rules.filter((rule) => rule !== 'no-folder-cycle')).toHaveLength(expected.length);
    });
  });
});
