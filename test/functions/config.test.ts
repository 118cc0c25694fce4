/**
 * The Lambda functions' environment schema (functions/config.ts): what a good environment reads as, and
 * how a bad one is refused, naming every bad key and none of the values.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../functions/config.js';

const good = {
  BUCKET_NAME: 'hansard-segments-06f6163e',
  TABLE_NAME: 'Hansard-State1C20CC9A-ABC123',
  AWS_REGION: 'eu-west-1',
  // Lambda sets many more; they are ignored.
  AWS_LAMBDA_FUNCTION_NAME: 'Hansard-ApiFunction',
  NODE_OPTIONS: '--enable-source-maps',
};

function refusal(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('parseConfig accepted a bad environment');
}

describe('parseConfig', () => {
  it('accepts a deployed environment and defaults LOG_LEVEL to INFO and chunks to 4 MiB', () => {
    expect(parseConfig(good)).toEqual({
      BUCKET_NAME: good.BUCKET_NAME,
      TABLE_NAME: good.TABLE_NAME,
      AWS_REGION: 'eu-west-1',
      LOG_LEVEL: 'INFO',
      // API Gateway base64-encodes a binary body and Lambda takes 6 MB: 4 MiB is what fits.
      MAX_CHUNK_BYTES: 4 * 1024 * 1024,
    });
  });

  it('refuses a chunk limit above the 5 MiB of the API', () => {
    expect(() => parseConfig({ ...good, MAX_CHUNK_BYTES: String(6 * 1024 * 1024) })).toThrow(
      /MAX_CHUNK_BYTES/,
    );
  });

  it('takes a replay read-ahead in bytes, up to 256 MiB, and refuses anything else', () => {
    expect(parseConfig({ ...good, REPLAY_READ_BYTES: '33554432' }).REPLAY_READ_BYTES).toBe(32 * 1024 * 1024);
    expect(parseConfig(good).REPLAY_READ_BYTES).toBeUndefined();
    for (const bad of ['0', '-1', '16MiB', String(512 * 1024 * 1024)])
      expect(() => parseConfig({ ...good, REPLAY_READ_BYTES: bad }), bad).toThrow(/REPLAY_READ_BYTES/);
  });

  it('reads LOG_LEVEL case-insensitively and takes emulator endpoints for tests', () => {
    const config = parseConfig({
      ...good,
      LOG_LEVEL: 'debug',
      S3_ENDPOINT: 'http://127.0.0.1:4569',
      DYNAMODB_ENDPOINT: 'http://localhost:8000',
    });
    expect(config).toMatchObject({
      LOG_LEVEL: 'DEBUG',
      S3_ENDPOINT: 'http://127.0.0.1:4569',
      DYNAMODB_ENDPOINT: 'http://localhost:8000',
    });
  });

  it('treats an empty variable as unset', () => {
    const config = parseConfig({ ...good, LOG_LEVEL: '', S3_ENDPOINT: '' });
    expect(config.LOG_LEVEL).toBe('INFO');
    expect(config.S3_ENDPOINT).toBeUndefined();
  });

  it('refuses an environment with missing keys, naming each of them', () => {
    const err = refusal({ AWS_REGION: 'us-east-1', TABLE_NAME: '' });
    expect(err.keys).toEqual(['BUCKET_NAME', 'TABLE_NAME']);
    expect(err.message).toBe('invalid Lambda environment: BUCKET_NAME (required); TABLE_NAME (required)');
  });

  it('refuses malformed values, naming every bad key and what was expected, never the values', () => {
    const err = refusal({
      BUCKET_NAME: 'Not_A_Bucket',
      TABLE_NAME: 'ok-table',
      AWS_REGION: 'the moon',
      LOG_LEVEL: 'chatty',
      S3_ENDPOINT: 'ftp://127.0.0.1',
      DYNAMODB_ENDPOINT: 'not a url',
    });
    expect(err.keys).toEqual(['BUCKET_NAME', 'AWS_REGION', 'LOG_LEVEL', 'S3_ENDPOINT', 'DYNAMODB_ENDPOINT']);
    expect(err.message).toMatch(/^invalid Lambda environment: BUCKET_NAME \(expected an S3 bucket name/);
    expect(err.message).toContain('AWS_REGION (expected an AWS region such as us-east-1)');
    expect(err.message).toContain(
      'LOG_LEVEL (expected one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT)',
    );
    expect(err.message).toContain('S3_ENDPOINT (expected an http(s) URL');
    for (const value of ['Not_A_Bucket', 'the moon', 'chatty', 'ftp://', 'not a url']) {
      expect(err.message).not.toContain(value);
    }
  });
});
