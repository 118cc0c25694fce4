/**
 * What Lambda hands the functions, for tests that invoke the handlers as Lambda does: API Gateway HTTP API
 * (payload format 2.0) and function URL events, a Lambda context, the runtime's `awslambda` global for
 * response streaming, and the reading of a handler's answer (buffered, maybe base64; or streamed).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

export const API_DOMAIN = 'abc123defg.execute-api.us-east-1.amazonaws.com';
export const URL_DOMAIN = 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws';
const SOURCE_IP = '203.0.113.7';
const USER_AGENT = 'hansard-test/1.0';

export interface ApiRequest {
  method: string;
  /** the path as the client sent it (already encoded) */
  path: string;
  /** the query string without `?` */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** send the body base64-encoded (API Gateway does so for content it does not take as text) */
  base64?: boolean;
  /** the host the request came through: the HTTP API (default) or the replay function's URL */
  domain?: string;
}

/** A request id in API Gateway's style (`apigw-requestid`), unique per event. */
function requestId(): string {
  return randomBytes(12).toString('base64').replace(/[+/]/g, 'x');
}

/** An `APIGatewayProxyEventV2` as the HTTP API (or a function URL) sends it, header names lower-cased. */
export function apiEvent(r: ApiRequest): APIGatewayProxyEventV2 {
  const domain = r.domain ?? API_DOMAIN;
  const query = r.query ?? '';
  const bytes = r.body === undefined ? undefined : typeof r.body === 'string' ? Buffer.from(r.body) : r.body;
  const headers: Record<string, string> = {
    accept: '*/*',
    host: domain,
    'user-agent': USER_AGENT,
    'x-amzn-trace-id': `Root=1-6749a2b0-${randomBytes(12).toString('hex')}`,
    'x-forwarded-for': SOURCE_IP,
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...(bytes ? { 'content-length': String(bytes.length) } : {}),
  };
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = v;
  const params = new URLSearchParams(query);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: r.path,
    rawQueryString: query,
    headers,
    ...(query ? { queryStringParameters: Object.fromEntries(params) } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: domain.split('.')[0]!,
      domainName: domain,
      domainPrefix: domain.split('.')[0]!,
      http: {
        method: r.method,
        path: decodeURIComponent(r.path),
        protocol: 'HTTP/1.1',
        sourceIp: SOURCE_IP,
        userAgent: USER_AGENT,
      },
      requestId: requestId(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(bytes
      ? {
          body: r.base64 ? Buffer.from(bytes).toString('base64') : Buffer.from(bytes).toString('utf8'),
          isBase64Encoded: r.base64 === true,
        }
      : { isBase64Encoded: false }),
  };
}

/** A Lambda context for one invocation of `functionName`. */
export function lambdaContext(functionName: string): Context {
  const awsRequestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `2026/11/29/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => 29_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** A handler's answer, the body decoded. */
export interface LambdaAnswer {
  status: number;
  headers: Record<string, string>;
  /** whether the function answered base64 (buffered answers only) */
  base64: boolean;
  bytes: Buffer;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers field by field
  json: any;
}

function answer(
  status: number,
  headers: Record<string, string>,
  bytes: Buffer,
  base64: boolean,
): LambdaAnswer {
  const text = bytes.toString('utf8');
  const json = (headers['content-type'] ?? '').includes('application/json') ? JSON.parse(text) : null;
  return { status, headers, base64, bytes, text, json };
}

/** A buffered handler's result (hono `handle`): the body decoded according to `isBase64Encoded`. */
export function readResult(r: {
  statusCode: number;
  body: string;
  isBase64Encoded: boolean;
  headers?: Record<string, string | string[]> | undefined;
}): LambdaAnswer {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(v);
  const bytes = r.isBase64Encoded ? Buffer.from(r.body, 'base64') : Buffer.from(r.body, 'utf8');
  return answer(r.statusCode, headers, bytes, r.isBase64Encoded);
}

/** What a streaming handler is given by Lambda: the response stream (here, one that keeps the bytes). */
export class ResponseStream extends Writable {
  readonly parts: Buffer[] = [];
  /** what the handler passed to `HttpResponseStream.from` */
  metadata: { statusCode?: number; headers?: Record<string, string>; cookies?: string[] } | null = null;
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.parts.push(Buffer.from(chunk));
    done();
  }
  /** The answer, once the handler has resolved. */
  answer(): LambdaAnswer {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.metadata?.headers ?? {})) headers[k.toLowerCase()] = v;
    return answer(this.metadata?.statusCode ?? 0, headers, Buffer.concat(this.parts), false);
  }
}

/**
 * Installs the Lambda runtime's global `awslambda` as the Node.js runtime provides it for streaming
 * functions: `streamifyResponse(f)` marks `f` as `(event, responseStream, context)`; `HttpResponseStream.from`
 * sends the status and headers first and returns the stream the body goes to (here the same stream, the
 * metadata recorded on it).
 */
export function stubAwsLambdaGlobal(): void {
  (globalThis as unknown as { awslambda: unknown }).awslambda = {
    streamifyResponse: <F>(f: F) => f,
    HttpResponseStream: {
      from: (stream: ResponseStream, metadata: ResponseStream['metadata']) => {
        stream.metadata = metadata;
        return stream;
      },
    },
  };
}
