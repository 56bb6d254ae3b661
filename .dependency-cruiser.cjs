// Import boundaries of src/ and dev/ (dependency-cruiser, run by `npm test`): each layer of src/ imports only the layers
// below it; dev/ (the development and cluster stacks, the seed data) may import src/, never the other way.
//
// The layers, lowest first, and what each may import besides itself:
//
//   domain        nothing: no module of ours, no npm package, no Node built-in (booking rules run in the workflow sandbox)
//   generated     nothing of ours (code buf generates from proto/)
//   project-root  nothing of ours (where the checkout or image keeps openapi/ and proto/)
//   retry         nothing of ours (retries with backoff, on exponential-backoff)
//   config        domain
//   observability domain, config (metrics registry and tracing set-up; any layer from adapters up may use it)
//   contracts     domain, generated, project-root (run-time readers of openapi/ and proto/)
//   ports         domain
//   tickets       domain, db, security (a ticket's document: read, rendered as a PDF with its QR code); knex as a
//                 type only
//   adapters      ports, domain, config (never db: an adapter that keeps state gets it through a port)
//   payments      domain (pure work on a processor's messages, e.g. Stripe's webhook signatures, on its SDK: no
//                 I/O, so the REST front may use it as well as the activities)
//   security      domain, config, contracts, generated (never application, identity or api)
//   logger        config, security (its redaction list comes from the contracts' sensitive marks)
//   runtime       logger
//   db            domain, config, security, retry; types only from ports (db implements a storage port, e.g. the
//                 payment simulator's ledger, which the composition root hands the adapter); db/migrate.ts also
//                 migrations/ (outside src)
//   identity      domain, config, security, db, logger
//   activities    domain, config, ports, adapters, payments, db, security, logger, project-root, tickets, retry
//   workflows     domain, activities/interface.ts (the activity contract, which itself imports only domain and
//                 @temporalio/common); npm: @temporalio/workflow, @temporalio/common and the tracing interceptors
//                 (@temporalio/interceptors-opentelemetry, @opentelemetry/api) only, no Node built-ins; the
//                 package's private modules from workflows/tracing/package-internals.ts alone
//   application   domain, config, db, security, tickets, retry, payments, ports, workflows/shared.ts,
//                 workflows/trip-cancellation-shared.ts, workflows/partner-webhooks-shared.ts; types only from
//                 workflows/booking.ts; knex as a type only (the handle it passes to db)
//   api           application, identity, security, contracts, generated, domain, config, runtime, logger,
//                 project-root, payments, adapters/webhook-sender.ts (the composition's ping sender); only its
//                 composition roots (api/main.ts, api/composition.ts) open the db, and only they name knex or pg
//   worker        activities, workflows, security, config, domain, runtime, logger, retry, and
//                 application/webhook-delivery-starter.ts (its activities wake delivery workflows as the API does)
//
// The workflow sits above its activities, as in Temporal's samples (the workflow proxies the activity contract);
// activities never import workflow code, so the two folders form no cycle. workflows/shared.ts is the one module of
// definitions the workflow shares with its callers (updates, queries, search attributes, the start summary).
// No module cycle and no folder cycle anywhere in src/. dev/, tests, scripts and the bench may import anything; src/
// never imports them, so the production build (src/ and migrations/ only) ships none of them.

/** Folders (or single top-level modules) of src/ and what each may import besides itself. */
const layers = {
  domain: [],
  generated: [],
  'project-root.ts': [],
  'retry.ts': [],
  config: ['domain'],
  observability: ['domain', 'config'],
  contracts: ['domain', 'generated', 'project-root.ts'],
  ports: ['domain'],
  tickets: ['domain', 'db', 'security'],
  adapters: ['ports', 'domain', 'config', 'observability'],
  payments: ['domain'],
  security: ['domain', 'config', 'contracts', 'generated', 'observability'],
  'logger.ts': ['config', 'security', 'observability'],
  runtime: ['logger.ts', 'observability'],
  db: ['domain', 'config', 'security', 'observability', 'retry.ts', 'ports'],
  identity: ['domain', 'config', 'security', 'db', 'logger.ts', 'observability'],
  activities: [
    'domain',
    'config',
    'ports',
    'adapters',
    'payments',
    'db',
    'security',
    'logger.ts',
    'project-root.ts',
    'observability',
    'tickets',
    'retry.ts',
  ],
  workflows: ['domain'],
  application: [
    'domain',
    'config',
    'db',
    'security',
    'observability',
    'tickets',
    'retry.ts',
    'payments',
    'ports',
  ],
  api: [
    'observability',
    'application',
    'db',
    'identity',
    'security',
    'contracts',
    'generated',
    'domain',
    'config',
    'runtime',
    'logger.ts',
    'project-root.ts',
    'payments',
  ],
  worker: [
    'activities',
    'workflows',
    'security',
    'config',
    'domain',
    'runtime',
    'logger.ts',
    'observability',
    'retry.ts',
  ],
};

/** Single modules of another folder a layer may import although the rest of that folder is off limits to it. */
const crossings = {
  workflows: ['activities/interface.ts'],
  application: [
    'workflows/shared.ts',
    'workflows/trip-cancellation-shared.ts',
    'workflows/booking.ts',
    'workflows/partner-webhooks-shared.ts',
  ],
  worker: ['application/webhook-delivery-starter.ts'],
  api: ['adapters/webhook-sender.ts'],
};

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A folder matches everything under it, a `.ts` name exactly that module. */
const pathOf = (name) => `^src/${escape(name)}${name.endsWith('.ts') ? '$' : '/'}`;

const layerRules = Object.entries(layers).map(([layer, allowed]) => ({
  name: `layer-${layer.replace(/\.ts$/, '')}`,
  severity: 'error',
  comment: `src/${layer} may import only ${allowed.length === 0 ? 'itself' : allowed.join(', ')} (see the table above)`,
  from: { path: pathOf(layer) },
  to: {
    path: '^src/',
    pathNot: [pathOf(layer), ...allowed.map(pathOf), ...(crossings[layer] ?? []).map(pathOf)],
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'api-fronts-no-db',
      severity: 'error',
      comment:
        'The REST and gRPC fronts reach the database through the application layer; only the composition roots open it',
      from: { path: '^src/api/', pathNot: '^src/api/(main|composition)\\.ts$' },
      to: { path: '^src/db/' },
    },
    {
      name: 'sql-in-db',
      severity: 'error',
      comment:
        'SQL is built in src/db alone: the application and the tickets hold the knex handle as a type to pass on, and only the composition roots open it',
      from: {
        path: '^src/(application|tickets|api|activities|identity|adapters|security)/',
        pathNot: '^src/api/(main|composition)\\.ts$',
      },
      to: {
        path: '(^|/)node_modules/(knex|pg|pg-[a-z-]+)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'api-fronts-no-knex',
      severity: 'error',
      comment: 'The REST and gRPC fronts never see the database handle, not even its type',
      from: { path: '^src/api/', pathNot: '^src/api/(main|composition)\\.ts$' },
      to: { path: '(^|/)node_modules/(knex|pg|pg-[a-z-]+)/' },
    },
    {
      name: 'activity-contract-sandbox-safe',
      severity: 'error',
      comment:
        'The workflow loads activities/interface.ts, so it may import only domain and @temporalio/common',
      from: { path: '^src/activities/interface\\.ts$' },
      to: {
        pathNot: ['^src/domain/', '(^|/)node_modules/@temporalio/common/'],
      },
    },
    {
      name: 'db-ports-types-only',
      severity: 'error',
      comment:
        "db implements the storage an adapter asks for through a port (its types); the ports' errors and behaviour stay out of db",
      from: { path: '^src/db/' },
      to: { path: '^src/ports/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'application-workflow-types-only',
      severity: 'error',
      comment:
        'The application starts the workflow by name; workflows/booking.ts gives typed handles, never code',
      from: { path: '^src/application/' },
      to: { path: '^src/workflows/booking\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'opentelemetry-package-internals-in-one-module',
      severity: 'error',
      comment:
        "Only src/workflows/tracing/package-internals.ts reaches into @temporalio/interceptors-opentelemetry's private modules (it says why); everything else uses the package's entry point",
      from: { pathNot: '^src/workflows/tracing/package-internals\\.ts$' },
      to: {
        path: '(^|/)node_modules/@temporalio/interceptors-opentelemetry/lib/',
        pathNot: '(^|/)node_modules/@temporalio/interceptors-opentelemetry/lib/index\\.js$',
      },
    },
    {
      name: 'workflows-sandbox-packages',
      severity: 'error',
      comment:
        "Workflow code runs in the deterministic sandbox: Temporal workflow APIs only, no Node built-ins (the tracing SDK the Temporal interceptors run on draws ids from the sandbox's seeded random numbers)",
      from: { path: '^src/workflows/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core'],
        pathNot:
          '(^|/)node_modules/(@temporalio/(workflow|common|interceptors-opentelemetry)|@opentelemetry/(api|sdk-trace-base))/',
      },
    },
    {
      name: 'domain-plain-functions',
      severity: 'error',
      comment: 'Domain rules are plain functions: no npm package and no Node built-in',
      from: { path: '^src/domain/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core'],
      },
    },
    {
      name: 'migrations-from-db-only',
      severity: 'error',
      comment: 'Only the migration runner in db/ loads the migrations',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^migrations/' },
    },
    {
      name: 'src-not-dev',
      severity: 'error',
      comment:
        'Shipped code never imports the development stacks or the seed data: the production build leaves dev/ out',
      from: { path: '^src/' },
      to: { path: '^dev/' },
    },
    {
      name: 'src-not-tests-or-scripts',
      severity: 'error',
      comment: 'Shipped code never imports tests or scripts',
      from: { path: '^src/' },
      to: { path: '^(test|scripts|bench)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module cycle hides which side is the lower layer',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'Folders import each other one way only',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing cannot be checked against the layers',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count too: a type from a higher layer couples as much as a value does.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    moduleSystems: ['cjs', 'es6'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
