// The domain runs inside Temporal's workflow sandbox: no frameworks, no I/O, no clock, no randomness.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const domainDirectory = join(__dirname, '../../../src/domain');
const sources = readdirSync(domainDirectory)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => ({ name, text: readFileSync(join(domainDirectory, name), 'utf8') }));

describe('src/domain', () => {
  it('has sources to check', () => {
    expect(sources.length).toBeGreaterThan(5);
  });

  it.each(sources.map((source) => [source.name, source.text]))(
    '%s imports only sibling domain modules',
    (_name, text) => {
      const imports = [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
      expect(imports.filter((specifier) => !specifier.startsWith('./'))).toEqual([]);
    },
  );

  it.each(sources.map((source) => [source.name, source.text]))(
    '%s reads no clock and no randomness',
    (_name, text) => {
      expect(text).not.toMatch(/Date\.now\(|Math\.random\(|new Date\(\)|performance\.now|crypto\.|process\./);
    },
  );
});
