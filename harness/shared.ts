/**
 * A test file's way to the run's shared services (test/support/services.ts, vitest's globalSetup): the
 * address of DynamoDB Local, s3rver or Chromium's browser server, started on the first request of the run.
 * Null outside a vitest run with that globalSetup (bench/, another config): the caller then starts its own.
 */

/** The services test/support/services.ts shares. */
export type SharedService = 'dynamo' | 's3' | 'postgres' | 'chromium';

declare module 'vitest' {
  export interface ProvidedContext {
    /** the address of test/support/services.ts's broker (`GET /<service>` answers `{"endpoint": …}`) */
    hansardServices: string;
    /** this run's id, the prefix of each test file's process marker (test/support/leak-check.ts) */
    hansardRun: string;
  }
}

/**
 * The endpoint of the run's shared `service` (`http://…` for the emulators, `postgres://…` for PostgreSQL,
 * `ws://…` for Chromium), or null
 * when this process is not a vitest worker of a run that shares them.
 * @throws Error with the service's start error (a missing Java, a JVM that did not answer in time)
 */
export async function sharedEndpoint(service: SharedService): Promise<string | null> {
  const broker = await provided('hansardServices');
  if (!broker) return null;
  const res = await fetch(`${broker}/${service}`);
  const body = (await res.json()) as { endpoint?: string; error?: string };
  if (!res.ok || !body.endpoint) throw new Error(`shared ${service}: ${body.error ?? res.status}`);
  return body.endpoint;
}

/** A value the run's globalSetup provided, or undefined outside such a vitest worker. */
export async function provided<K extends 'hansardServices' | 'hansardRun'>(
  key: K,
): Promise<string | undefined> {
  if (!process.env.VITEST) return undefined;
  // Imported only inside vitest: bench/ uses these supports without it.
  const { inject } = await import('vitest');
  return inject(key) as string | undefined;
}
