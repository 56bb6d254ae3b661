// The project's root folder, found the same way from src/ (tests, tsx) and from dist/src/ (compiled).
import fs from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  let directory = start;
  while (!fs.existsSync(path.join(directory, 'package.json'))) {
    const parent = path.dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${start}`);
    directory = parent;
  }
  return directory;
}

export const projectRoot = findProjectRoot(__dirname);
