// Every launch of a booking process, in the image, compose file, chart and npm scripts, passes the same V8 flags
// as the stacks the project starts itself (npm start, the cluster stack, the bench).
import fs from 'node:fs';
import path from 'node:path';
import { nodeFlagsOf } from '../../../src/runtime/node-flags';

const root = path.resolve(__dirname, '..', '..', '..');
const entryPointPattern = /^dist\/src\/((?:api|worker)\/main\.js)$/;

interface Launch {
  where: string;
  entryPoint: string;
  flags: string[];
}

/** A `node … dist/src/<name>/main.js` command, as its words; undefined when the words are not one. */
function launchOf(where: string, words: string[]): Launch | undefined {
  const entry = words.findIndex((word) => entryPointPattern.test(word));
  if (words[0] !== 'node' || entry < 0) return undefined;
  return { where, entryPoint: entryPointPattern.exec(words[entry])![1], flags: words.slice(1, entry) };
}

/** Commands written as flow sequences (`["node", "dist/src/api/main.js"]`), one per line. */
function sequenceLaunches(file: string): Launch[] {
  const launches: Launch[] = [];
  fs.readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const sequence = /\[([^\]]*dist\/src\/[^\]]*)\]/.exec(line);
      if (!sequence) return;
      const words = sequence[1].split(',').map((word) => word.trim().replace(/^["']|["']$/g, ''));
      const launch = launchOf(`${file}:${index + 1}`, words);
      if (launch) launches.push(launch);
    });
  return launches;
}

function npmScriptLaunches(): Launch[] {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return Object.entries(scripts).flatMap(([name, command]) => {
    // The scripts run their command through the wrapper that puts the project's Node first on PATH.
    const launch = launchOf(
      `package.json scripts.${name}`,
      command.replace(/^bash scripts\/with-node\.sh\s+/, '').split(/\s+/),
    );
    return launch ? [launch] : [];
  });
}

const launches = [
  ...sequenceLaunches('Dockerfile'),
  ...sequenceLaunches('docker-compose.yml'),
  ...sequenceLaunches('deploy/helm/bus-booking/templates/api-deployment.yaml'),
  ...sequenceLaunches('deploy/helm/bus-booking/templates/worker-deployments.yaml'),
  ...npmScriptLaunches(),
];

describe('the V8 flags of the booking processes', () => {
  it('finds every launch it checks: the image, compose, the chart and npm run api|worker', () => {
    expect(
      launches.map(({ where, entryPoint }) => `${where.replace(/:\d+$/, '')} ${entryPoint}`).sort(),
    ).toEqual(
      [
        'Dockerfile api/main.js',
        'deploy/helm/bus-booking/templates/api-deployment.yaml api/main.js',
        'deploy/helm/bus-booking/templates/worker-deployments.yaml worker/main.js',
        'docker-compose.yml api/main.js',
        'docker-compose.yml worker/main.js',
        'package.json scripts.api api/main.js',
        'package.json scripts.worker worker/main.js',
      ].sort(),
    );
  });

  it.each(launches.map((launch) => [launch.where, launch]))(
    '%s passes the flags of its process',
    (_where, launch) => {
      expect(launch.flags).toEqual(nodeFlagsOf(launch.entryPoint));
    },
  );

  it('gives the API a larger young generation and leaves the worker at the default', () => {
    expect(nodeFlagsOf('api/main.js')).toEqual(['--max-semi-space-size=64']);
    expect(nodeFlagsOf('worker/main.js')).toEqual([]);
    expect(() => nodeFlagsOf('stack/start.js')).toThrow('no booking process starts from stack/start.js');
  });
});
