// Jest projects: fast pure unit tests, the workflow with fake activities (a time-skipping server, no database),
// integration tests against real PostgreSQL and Temporal, the cluster tests (a real multi-process Temporal server),
// the Keycloak tests (a real external OIDC provider), the schema-registry tests (a real Apicurio Registry) and the
// ticket PDF check (pdftoppm and zbarimg); the last four run from their own npm scripts, never `npm test`.
const transform = {
  '^.+\\.(t|j)sx?$': [
    '@swc/jest',
    { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
  ],
};
const shared = {
  transform,
  testEnvironment: 'node',
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The workspace's own client package from its source, as tsconfig.json's paths have it: no build needed.
    '^@bus-booking/client$': '<rootDir>/clients/typescript/src/index.ts',
  },
  // ESM-only packages (canonicalize ships no CommonJS build) are compiled to CommonJS like our own code.
  transformIgnorePatterns: [
    '/node_modules/(?!(jose|oidc-provider|canonicalize|openid-client|oauth4webapi)/)',
  ],
  // .tools holds unpacked packages and container file systems (npm run image:test): thousands of package.json files
  // that jest's module map would otherwise crawl and report as name collisions.
  modulePathIgnorePatterns: ['<rootDir>/.tools/'],
};

/** @type {import('jest').Config} */
module.exports = {
  // A global option: jest ignores it inside a project entry. Generous because integration tests talk to real servers.
  testTimeout: 120000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // The workflow on a real worker and Temporal's time-skipping test server (Java, installed into .tools/ on first
    // use), its activities in-memory fakes: seconds, no database.
    {
      ...shared,
      displayName: 'workflow',
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
      globalSetup: '<rootDir>/test/workflow/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/workflow/support/global-teardown.ts',
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    // A trip cancel raced by a burst of commands beside a CPU hog, five times: `npm run test:burst` (CI runs one).
    {
      ...shared,
      displayName: 'burst',
      testMatch: ['<rootDir>/test/burst/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    // Each file starts its own cluster stack (dev/stack/cluster.ts) from dist/: scripts/test-cluster.sh builds first.
    { ...shared, displayName: 'cluster', testMatch: ['<rootDir>/test/cluster/**/*.test.ts'] },
    // A real Keycloak (downloaded once into .tools/, slow to start): `npm run test:keycloak` only, never `npm test`.
    {
      ...shared,
      displayName: 'keycloak',
      testMatch: ['<rootDir>/test/keycloak/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    // A ticket PDF through pdftoppm and zbarimg (installed into .tools/apt on first use): `npm run tickets:check` only.
    {
      ...shared,
      displayName: 'tickets-check',
      testMatch: ['<rootDir>/test/tickets-check/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
    // A real Apicurio Registry that scripts/test-registry.sh starts once for the step: `npm run contracts:registry`.
    { ...shared, displayName: 'registry', testMatch: ['<rootDir>/test/registry/**/*.test.ts'] },
  ],
};
