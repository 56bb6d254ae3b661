// Log lines are JSON for pipes, files and collectors and pretty for a person at a terminal, unless LOG_FORMAT says.
import { expect } from '@jest/globals';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { ConfigError, loadConfig, loadLogFormat } from '../../../src/config';
import { createLogger, logFormatFor } from '../../../src/logger';

const required = {
  DATABASE_URL: 'postgres://localhost/db',
  ENCRYPTION_KEYS: 'k',
  ENCRYPTION_ACTIVE_KEY_ID: 'k',
  BLIND_INDEX_KEY: 'b',
};

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  // pino-pretty colours its text when the terminal supports it; the words are what is checked.
  const text = () => stripVTControlCharacters(chunks.join(''));
  return { destination, text };
}

describe('logFormatFor', () => {
  it('writes pretty lines to a terminal and JSON anywhere else when LOG_FORMAT is unset', () => {
    expect(logFormatFor(undefined, true)).toBe('pretty');
    expect(logFormatFor(undefined, false)).toBe('json');
  });

  it('follows LOG_FORMAT whatever the output is', () => {
    expect(logFormatFor('json', true)).toBe('json');
    expect(logFormatFor('pretty', false)).toBe('pretty');
  });
});

describe('LOG_FORMAT', () => {
  it('is absent from the configuration unless set, and read as given', () => {
    expect(loadConfig(required).logFormat).toBeUndefined();
    expect(loadConfig({ ...required, LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadLogFormat({ LOG_FORMAT: 'json' })).toBe('json');
    expect(loadLogFormat({})).toBeUndefined();
  });

  it('stops the start naming the accepted values', () => {
    expect(() => loadConfig({ ...required, LOG_FORMAT: 'xml' })).toThrow(
      new ConfigError('LOG_FORMAT', 'must be one of json, pretty'),
    );
  });
});

describe('createLogger formats', () => {
  it('writes JSON to a destination other than standard output unless told otherwise', () => {
    const { destination, text } = capture();
    createLogger({ level: 'info', name: 'format-test' }, destination).info({ seats: 2 }, 'seats held');
    expect(JSON.parse(text())).toMatchObject({ name: 'format-test', msg: 'seats held', seats: 2 });
  });

  it('writes pretty lines when told, still redacted', () => {
    const { destination, text } = capture();
    createLogger({ level: 'info', name: 'format-test', format: 'pretty' }, destination).info(
      { seats: 2, email: 'traveller@example.org' },
      'seats held',
    );
    const output = text();
    expect(output).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(format-test\): seats held\n/);
    expect(output).toContain('seats: 2');
    expect(output).not.toContain('traveller@example.org');
    expect((): unknown => JSON.parse(output)).toThrow();
  });
});
