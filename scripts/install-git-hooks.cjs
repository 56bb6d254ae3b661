// `npm ci`'s prepare step: points this checkout's git hooks at .husky/ (the pre-commit lint and boundary check).
//
// Does nothing, successfully, where hooks have no use or cannot be installed: in CI (CI=true), when asked not to
// (SKIP_HOOKS=1 or HUSKY=0), outside a git checkout (an unpacked archive, a container build) and without the
// dev dependencies. The hooks path git records is relative (.husky/_), so in a repository with several worktrees
// each worktree runs the hooks of its own checkout, and one without .husky/ runs none.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

function skipReason() {
  if (process.env.CI === 'true' || process.env.CI === '1') return 'CI';
  if (process.env.SKIP_HOOKS === '1' || process.env.HUSKY === '0') return 'SKIP_HOOKS=1 or HUSKY=0';
  const inside = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' });
  if (inside.error !== undefined || inside.status !== 0) return 'not a git checkout';
  return undefined;
}

async function main() {
  process.chdir(path.resolve(__dirname, '..'));
  const reason = skipReason();
  if (reason !== undefined) {
    process.stdout.write(`git hooks not installed: ${reason}\n`);
    return;
  }
  let installHusky;
  try {
    ({ default: installHusky } = await import('husky'));
  } catch {
    process.stdout.write('git hooks not installed: husky is not installed (no dev dependencies)\n');
    return;
  }
  const problem = installHusky('.husky');
  process.stdout.write(problem ? `git hooks not installed: ${problem}\n` : 'git hooks installed (.husky/)\n');
}

main().catch((error) => {
  // A hook that could not be installed never fails the install itself.
  process.stdout.write(
    `git hooks not installed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
});
