// Unit tests: the AsyncAPI message payloads as the schema registry receives them, and the newly-required check.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { asyncApiPayloads, loadContracts, newlyRequired } from '../../../scripts/schema-registry.js';

type Node = Record<string, unknown>;

const repositoryRoot = path.join(__dirname, '../../..');
const documentFile = path.join(repositoryRoot, 'asyncapi/asyncapi.yaml');
const document = parseYaml(readFileSync(documentFile, 'utf8')) as Node;
const payloads = asyncApiPayloads(document);

function keywordsIn(node: unknown, keyword: string): number {
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + keywordsIn(item, keyword), 0);
  if (typeof node !== 'object' || node === null) return 0;
  return Object.entries(node).reduce(
    (sum, [key, value]) => sum + (key === keyword ? 1 : 0) + keywordsIn(value, keyword),
    0,
  );
}

/** A one-message document whose payload is the given schema. */
function documentWith(payload: Node, schemas: Node = {}): Node {
  return {
    channels: { endpoint: { messages: { only: { name: 'thing.happened', payload } } } },
    components: { schemas },
  };
}

describe('asyncApiPayloads', () => {
  it('gives each message of the document, by name, as a self-contained schema with no $ref or allOf', () => {
    const messages = (document.components as { messages: Record<string, Node> }).messages;
    expect(payloads.map((payload) => payload.name)).toEqual(
      Object.values(messages).map((message) => message.name),
    );
    for (const payload of payloads) {
      const schema = JSON.parse(payload.schemaJson) as Node;
      expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
      expect({
        name: payload.name,
        $ref: keywordsIn(schema, '$ref'),
        allOf: keywordsIn(schema, 'allOf'),
      }).toEqual({ name: payload.name, $ref: 0, allOf: 0 });
    }
  });

  it('accepts and refuses what the document’s own schemas do', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv);
    ajv.addVocabulary(['x-sensitive']);
    const messages = Object.values((document.components as { messages: Record<string, Node> }).messages);
    for (const payload of payloads) {
      const validate = ajv.compile(JSON.parse(payload.schemaJson) as Node);
      const message = messages.find((candidate) => candidate.name === payload.name)!;
      for (const example of message.examples as { payload: Node }[]) {
        expect({ name: payload.name, valid: validate(example.payload), errors: validate.errors }).toEqual({
          name: payload.name,
          valid: true,
          errors: null,
        });
        const data = { ...(example.payload.data as Node) };
        delete data.sequence;
        expect(validate({ ...example.payload, type: 'unknown.type' })).toBe(false);
        expect(validate({ ...example.payload, data })).toBe(payload.name === 'webhook.ping');
      }
    }
  });

  it('keeps a referencing property’s own keywords over the referenced schema’s', () => {
    const [payload] = asyncApiPayloads(
      documentWith(
        {
          type: 'object',
          properties: { at: { $ref: '#/components/schemas/Time', description: 'Own words.' } },
        },
        { Time: { type: 'string', format: 'date-time', description: 'Shared words.' } },
      ),
    );
    expect((JSON.parse(payload.schemaJson) as { properties: Node }).properties.at).toEqual({
      type: 'string',
      format: 'date-time',
      description: 'Own words.',
    });
  });

  it('names allOf members that disagree, and a reference outside the document', () => {
    expect(() =>
      asyncApiPayloads(
        documentWith({
          allOf: [
            { type: 'object', properties: { count: { type: 'integer' } } },
            { type: 'object', properties: { count: { type: 'string' } } },
          ],
        }),
      ),
    ).toThrow('contracts: allOf members disagree on type at /properties/count');
    expect(() => asyncApiPayloads(documentWith({ $ref: 'other.yaml#/Thing' }))).toThrow(
      'contracts: the AsyncAPI document refers outside itself ("other.yaml#/Thing")',
    );
  });
});

describe('newlyRequired', () => {
  const before = {
    type: 'object',
    required: ['data'],
    properties: {
      data: {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'string' }, note: { type: 'string' }, items: { type: 'array', items: {} } },
      },
    },
  };

  it('names a property newly required, or required where it was optional, at any depth', () => {
    const after = structuredClone(before) as typeof before & { properties: { data: Node } };
    after.properties.data.required = ['id', 'note', 'added'];
    (after.properties.data.properties as Node).added = { type: 'string' };
    (after.properties.data.properties as Node).items = {
      type: 'array',
      items: { type: 'object', required: ['seat'] },
    };
    expect(newlyRequired(before, after)).toEqual([
      '/properties/data/required/note',
      '/properties/data/required/added',
      '/properties/data/properties/items/items/required/seat',
    ]);
  });

  it('lets pass a new optional property, even one whose own fields are required', () => {
    const after = structuredClone(before) as typeof before & { properties: { data: Node } };
    (after.properties.data.properties as Node).refund = {
      type: 'object',
      required: ['amount_minor'],
      properties: { amount_minor: { type: 'integer' } },
    };
    expect(newlyRequired(before, after)).toEqual([]);
    expect(newlyRequired(before, before)).toEqual([]);
  });
});

describe('loadContracts', () => {
  it('carries the AsyncAPI document as JSON of the same content, with its payloads', () => {
    const contracts = loadContracts(
      path.join(repositoryRoot, 'proto'),
      path.join(repositoryRoot, 'openapi/openapi.yaml'),
      documentFile,
    );
    expect(JSON.parse(contracts.asyncApi!.documentJson)).toEqual(document);
    expect(contracts.asyncApi!.payloads).toEqual(payloads);
  });
});
