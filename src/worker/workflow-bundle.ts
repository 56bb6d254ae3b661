// The workflow code a worker runs: the bundle `npm run build` wrote beside the compiled code when it is current, else bundled at start.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  bundleWorkflowCode,
  type Logger as TemporalLogger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type { Compiler } from 'webpack';

/** Resolves to src/workflows/index.ts under tsx and jest, and to dist/src/workflows/index.js after a build. */
export const bookingWorkflowsPath = require.resolve('../workflows');

/** Tracing and request-id interceptors, bundled with the workflow whether or not the worker exports spans. */
export const bookingWorkflowInterceptorsPath = require.resolve('../workflows/tracing/interceptors');

/**
 * The interceptors and preloaded modules every bundle of the booking workflows carries (tests bundling workflows of
 * their own take the same). The preloaded module is loaded once per V8 context rather than once per workflow: the
 * async context storages every workflow shares, whose per-workflow copies cost each cached workflow memory in
 * proportion to the whole cache.
 */
export const bookingWorkflowBundleOptions = {
  workflowInterceptorModules: [bookingWorkflowInterceptorsPath],
  preloadModules: [require.resolve('../workflows/tracing/shared-async-context')],
};

/** The build's output folder (dist/ after `npm run build`): two levels above this module's src/worker/. */
export const defaultWorkflowBundleDirectory = path.resolve(__dirname, '..', '..');
export const workflowBundleFileName = 'workflow-bundle.js';
export const workflowBundleManifestName = 'workflow-bundle.json';

/** Every file webpack put into the bundle, with its digest when the bundle was made (paths relative to the folder). */
interface WorkflowBundleManifest {
  files: { path: string; sha256: string }[];
}

function digestOf(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/**
 * Bundles the workflow code with webpack (a few seconds). `onModuleFile` hears every file the bundle includes,
 * the workflow code's own and its packages'.
 */
export function bundleBookingWorkflows(
  logger?: TemporalLogger,
  onModuleFile?: (file: string) => void,
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: bookingWorkflowsPath,
    ...bookingWorkflowBundleOptions,
    ...(logger === undefined ? {} : { logger }),
    ...(onModuleFile === undefined
      ? {}
      : {
          webpackConfigHook: (configuration) => ({
            ...configuration,
            plugins: [
              ...(configuration.plugins ?? []),
              {
                apply(compiler: Compiler) {
                  compiler.hooks.done.tap('RecordWorkflowBundleFiles', (stats) => {
                    for (const module of stats.compilation.modules) {
                      const resource = (module as { resource?: unknown }).resource;
                      if (typeof resource === 'string') onModuleFile(resource);
                    }
                  });
                },
              },
            ],
          }),
        }),
  });
}

/**
 * Writes `workflow-bundle.js` and its manifest into `directory` (the build's output folder). The manifest lists
 * every file the bundle was made from with its digest, so a worker can tell whether the bundle is still current.
 */
export async function writeWorkflowBundle(
  directory: string = defaultWorkflowBundleDirectory,
  logger?: TemporalLogger,
): Promise<{ codePath: string; fileCount: number }> {
  const files = new Set<string>();
  const bundle = await bundleBookingWorkflows(logger, (file) => files.add(file));
  const manifest: WorkflowBundleManifest = {
    // The SDK's generated entry point lives in webpack's memory only; every other module is a file on disk.
    files: [...files]
      .filter((file) => fs.existsSync(file))
      .sort()
      .map((file) => ({
        path: path.relative(directory, file),
        sha256: digestOf(file),
      })),
  };
  const codePath = path.join(directory, workflowBundleFileName);
  fs.mkdirSync(directory, { recursive: true });
  fs.writeFileSync(codePath, bundle.code);
  fs.writeFileSync(
    path.join(directory, workflowBundleManifestName),
    `${JSON.stringify(manifest, null, 2)}\n`,
  );
  return { codePath, fileCount: manifest.files.length };
}

export type WorkflowCodeSource = { kind: 'prebuilt'; codePath: string } | { kind: 'source'; reason: string };

/**
 * The pre-built bundle in `directory` when every file it was made from is unchanged; otherwise why not, so the
 * worker bundles from source instead of running code that no longer matches what was built.
 */
export function findPrebuiltWorkflowBundle(
  directory: string = defaultWorkflowBundleDirectory,
): WorkflowCodeSource {
  const codePath = path.join(directory, workflowBundleFileName);
  const manifestPath = path.join(directory, workflowBundleManifestName);
  if (!fs.existsSync(codePath) || !fs.existsSync(manifestPath)) {
    return { kind: 'source', reason: `no pre-built workflow bundle in ${directory}` };
  }
  let manifest: WorkflowBundleManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as WorkflowBundleManifest;
  } catch {
    return { kind: 'source', reason: `${manifestPath} cannot be read` };
  }
  if (!Array.isArray(manifest.files) || manifest.files.length === 0) {
    return { kind: 'source', reason: `${manifestPath} lists no files` };
  }
  for (const file of manifest.files) {
    const absolute = path.resolve(directory, file.path);
    if (!fs.existsSync(absolute) || digestOf(absolute) !== file.sha256) {
      return { kind: 'source', reason: `${absolute} changed since the workflow bundle was built` };
    }
  }
  return { kind: 'prebuilt', codePath };
}
