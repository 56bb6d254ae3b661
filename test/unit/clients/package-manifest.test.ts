// The client package's manifest: versioned with the REST contract it is generated from, licensed as the project.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const root = path.join(__dirname, '..', '..', '..');
const readJson = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>;

describe('clients/typescript/package.json', () => {
  const manifest = readJson('clients/typescript/package.json');

  it("carries the version of the OpenAPI contract its types come from (info.version), not the service's release", () => {
    const contract = parse(fs.readFileSync(path.join(root, 'openapi/openapi.yaml'), 'utf8')) as {
      info: { version: string };
    };
    expect(manifest.version).toBe(contract.info.version);
  });

  it('is publishable, under the licence of the project', () => {
    expect(manifest.private).toBe(false);
    expect(manifest.license).toBe(readJson('package.json').license);
  });
});
