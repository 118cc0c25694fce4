/**
 * The little of `oidc-provider` (v9, a dev dependency without types of its own; @types/oidc-provider is not
 * installed) that test/support/oidc-provider.ts uses. Shapes follow the package's lib/provider.js and
 * lib/helpers/defaults.js; anything not listed here is not used.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** The koa context the provider hands to its hooks and middleware (only the parts we read or set). */
  export interface ProviderContext {
    path: string;
    method: string;
    host: string;
    status: number;
    type: string;
    body: unknown;
    response: { get(name: string): string };
    set(name: string, value: string): void;
    oidc?: { client?: { clientId: string; clientName?: string } };
  }

  /** What `findAccount` resolves to. */
  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  /** The storage the provider keeps its models in (one per model name). */
  export interface Adapter {
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>;
    find(id: string): Promise<Record<string, unknown> | undefined>;
    findByUid(uid: string): Promise<Record<string, unknown> | undefined>;
    findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Configuration {
    adapter?: (model: string) => Adapter;
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    cookies?: { keys?: string[] };
    pkce?: { required?: (ctx: ProviderContext, client: unknown) => boolean };
    claims?: Record<string, string[] | null>;
    conformIdTokenClaims?: boolean;
    responseTypes?: string[];
    findAccount?: (ctx: ProviderContext, sub: string) => Promise<Account | undefined>;
    interactions?: { url?: (ctx: ProviderContext, interaction: { uid: string }) => Promise<string> };
    features?: {
      devInteractions?: { enabled: boolean };
      rpInitiatedLogout?: {
        enabled: boolean;
        logoutSource?: (ctx: ProviderContext, form: string) => Promise<void>;
        postLogoutSuccessSource?: (ctx: ProviderContext) => Promise<void>;
      };
    };
    ttl?: Record<string, number>;
    renderError?: (ctx: ProviderContext, out: Record<string, string>, error: Error) => Promise<void>;
  }

  /** An interaction as `interactionDetails` returns it. */
  export interface Interaction {
    uid: string;
    prompt: {
      name: string;
      reasons: string[];
      details: { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    };
    params: Record<string, unknown> & { client_id: string };
    session?: { accountId: string };
    grantId?: string;
  }

  export class Grant {
    constructor(init: { accountId: string; clientId: string });
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    save(): Promise<string>;
    static find(id: string): Promise<Grant | undefined>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    readonly Grant: typeof Grant;
    readonly Client: { validate(metadata: Record<string, unknown>): Promise<void> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }

  export default Provider;
}
