// SQL lives in src/db: the application, the tickets module and the API fronts call its functions and build no query.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(__dirname, '../../..');

/** Folders whose every query goes through src/db, and the modules among them that only open the connection. */
const foldersWithoutSql = [
  'src/application',
  'src/tickets',
  'src/api',
  'src/adapters',
  'src/worker',
  'src/security',
];
// An activity or a sign-in step may span several db calls in one transaction (a notification is sent while its row is
// locked): these folders open transactions, and every statement inside is still a src/db function.
const foldersThatOpenTransactions = ['src/activities', 'src/identity'];
const compositionRoots = new Set(['src/api/main.ts', 'src/api/composition.ts']);

/** What building a query looks like in this code base: the knex handle called, its builder, or SQL text. */
const transactionOpened = 'a transaction opened';

const sqlSigns: { name: string; pattern: RegExp }[] = [
  {
    name: 'a table read through the knex handle',
    pattern: /\b(?:database|db|knex|trx|transaction)\s*(?:<[^>()]*>)?\(\s*['"`]/,
  },
  {
    name: 'a query-builder call',
    pattern:
      /\.(?:raw|whereRaw|joinRaw|orderByRaw|havingRaw|groupByRaw|fromRaw|whereIn|whereNotIn|whereNull|whereNotNull|whereExists|forUpdate|forShare|forNoKeyUpdate|onConflict|returning)\s*(?:<[^>()]*>)?\(/,
  },
  { name: transactionOpened, pattern: /\.transaction\s*(?:<[^>()]*>)?\(/ },
  {
    name: 'an SQL statement',
    pattern:
      /\b(?:select\s+(?:\*|\d|distinct\b|[a-z_]+\.[a-z_*]+|[a-z_]+\s*\()|insert\s+into|delete\s+from|update\s+[a-z_]+\s+(?:as\s+[a-z_]+\s+)?set\b|on\s+conflict|for\s+update\b|with\s+[a-z_]+\s+as\s+(?:materialized\s+)?\()/i,
  },
];

/** The code without its comments, line for line (a comment may well say SELECT). */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ''))
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** `line: sign` for each line of the module that builds a query. */
function sqlFindings(text: string): string[] {
  return withoutComments(text)
    .split('\n')
    .flatMap((line, index) =>
      sqlSigns.filter(({ pattern }) => pattern.test(line)).map(({ name }) => `${index + 1}: ${name}`),
    );
}

function modulesUnder(folder: string): string[] {
  return readdirSync(path.join(projectRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const child = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return modulesUnder(child);
    return entry.name.endsWith('.ts') ? [child] : [];
  });
}

describe('SQL outside src/db', () => {
  it('is found in each form the code base writes queries in', () => {
    const forms = [
      "const row = await database('users').where('id', userId).first('id');",
      'const rows = await transaction<Row>(`tickets`).select();',
      "await dependencies.database.raw('select 1');",
      "query.whereRaw('trip.route_id = route.id');",
      '.forUpdate()',
      'const sql = `SELECT route.id FROM routes AS route`;',
      "const sql = 'INSERT INTO trips (id) VALUES (?)';",
      '`UPDATE seat_allocations AS allocation SET passenger_id = null`',
      "'WITH wanted AS MATERIALIZED (SELECT 1)'",
      'await database.transaction(async (trx) => work(trx));',
    ];
    for (const form of forms)
      expect({ form, found: sqlFindings(form).length > 0 }).toEqual({ form, found: true });
  });

  it('is not seen in comments, prose or calls that only pass the handle on', () => {
    const code = [
      '// SELECT route.id FROM routes: the read this replaced',
      '/* INSERT INTO trips */',
      "throw validationFailed([{ field: 'date', message: 'must be a calendar date YYYY-MM-DD' }]);",
      'const page = await readBookingPage(database, window, { status });',
      'const selected = options.select(choice);',
      "const url = 'https://example.org/select/update';",
    ].join('\n');
    expect(sqlFindings(code)).toEqual([]);
  });

  it('is not in the activities or identity, which only open transactions around db calls', () => {
    const findings = foldersThatOpenTransactions.flatMap(modulesUnder).flatMap((module) =>
      sqlFindings(readFileSync(path.join(projectRoot, module), 'utf8'))
        .filter((finding) => !finding.endsWith(`: ${transactionOpened}`))
        .map((finding) => `${module}:${finding}`),
    );
    expect(findings).toEqual([]);
  });

  it('is not in the application, the tickets module, the API fronts, adapters, worker or security', () => {
    const modules = foldersWithoutSql.flatMap(modulesUnder).filter((module) => !compositionRoots.has(module));
    expect(modules.length).toBeGreaterThan(0);
    const findings = modules.flatMap((module) =>
      sqlFindings(readFileSync(path.join(projectRoot, module), 'utf8')).map(
        (finding) => `${module}:${finding}`,
      ),
    );
    expect(findings).toEqual([]);
  });
});
