/**
 * The little of s3rver 3.7.1 (a Koa application, CommonJS, no types of its own) that the test support
 * uses. Not a full description of its API.
 */
declare module 's3rver' {
  import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
  import type { AddressInfo } from 'node:net';

  namespace S3rver {
    /** The Koa context, as far as a middleware here reads and writes it. */
    interface Context {
      method: string;
      /** the request path, still percent-encoded */
      path: string;
      query: Record<string, string | string[] | undefined>;
      headers: IncomingHttpHeaders;
      req: IncomingMessage | NodeJS.ReadableStream;
      status: number;
      body: unknown;
      type: string;
      set(field: string, value: string): void;
    }

    type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

    interface Options {
      address?: string;
      port?: number;
      silent?: boolean;
      /** where objects are kept on disk */
      directory: string;
      resetOnClose?: boolean;
      allowMismatchedSignatures?: boolean;
      configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
    }

    /** Its filesystem store: `{directory}/{bucket}/{key}._S3rver_object` plus metadata files. */
    interface FilesystemStore {
      getResourcePath(bucket: string, key: string, resource: string): string;
      /** rejects (ENOENT) when the object does not exist */
      getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
    }
  }

  class S3rver {
    constructor(options: S3rver.Options);
    /** Koa's middleware list: `unshift` puts one before all of s3rver's own */
    middleware: S3rver.Middleware[];
    store: S3rver.FilesystemStore;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }

  export = S3rver;
}
