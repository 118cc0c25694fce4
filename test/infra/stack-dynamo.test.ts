/**
 * Each function's DynamoDB grants, derived from the code it bundles (issue 8.9). esbuild bundles each
 * Lambda entry as the stack does and its metafile names the modules the bundle holds; every one of them
 * that imports the DynamoDB SDK must have a declaration of what it sends (lib/store/dynamo/access.ts,
 * checked against the code on DynamoDB Local by dynamo-access.test.ts), and the function's role must
 * allow exactly their union: reads on the table and the indexes queried, each write action only on the
 * partition-key prefixes declared for it (`dynamodb:LeadingKeys`). The replay function once lacked its
 * rate limiter's `UpdateItem` on `RL#` items: IAM denied every count on AWS and the limit failed open.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  COMPACT_STATE_METHODS,
  DIGEST_STATE_METHODS,
  REPLAY_BUILD_STATE_METHODS,
  stateMethodsOf,
} from '../../functions/access.js';
import { HansardStack } from '../../infra/stack.js';
import { RATE_LIMITER_ACCESS } from '../../lib/ratelimit/dynamo.js';
import {
  accessOf,
  type DynamoAccess,
  OPERATOR_STATE_METHODS,
  READ_ACTIONS,
  type StateMethod,
} from '../../lib/store/dynamo/access.js';
import { arnText, list } from '../support/template-text.js';
import { bundleLambda } from './lambda-bundle.js';

/**
 * What each module that imports the DynamoDB SDK sends, for a function serving `serves`. The store, its
 * token items and its status and work items send what the function's store methods declare; a module that only makes a client
 * sends nothing itself. A module missing here fails the test: declare what it sends first.
 */
const DECLARED: Record<string, (methods: readonly StateMethod[]) => readonly DynamoAccess[]> = {
  'lib/store/dynamo/state-store.ts': (methods) => accessOf(methods),
  'lib/store/dynamo/tokens.ts': (methods) => accessOf(methods),
  'lib/store/dynamo/status-work.ts': (methods) => accessOf(methods),
  'lib/store/dynamo/digest-index.ts': (methods) => accessOf(methods),
  // the writer and session items of the state store (issue 17.1), declared per store method as the rest
  'lib/store/dynamo/writers.ts': (methods) => accessOf(methods),
  'lib/store/dynamo/sessions.ts': (methods) => accessOf(methods),
  // the pending counts of a follow-up that failed for good (advanceWriter's: its deferral, sweep, Delete)
  'lib/store/dynamo/pending.ts': (methods) => accessOf(methods),
  // the tenant item's own limits (issue 17.1, 17.3)
  'lib/store/dynamo/tenants.ts': (methods) => accessOf(methods),
  // token usage (issue 27): the writer and session usage items and the tenant's usage buckets
  'lib/store/dynamo/usage.ts': (methods) => accessOf(methods),
  // alerts (issue 28): targets, the outbox, deliveries and their due marks
  'lib/store/dynamo/alerts.ts': (methods) => accessOf(methods),
  'lib/store/dynamo/alert-marks.ts': (methods) => accessOf(methods),
  // team sign-in (issue 29): OIDC settings, people and the audit list
  'lib/store/dynamo/sign-in.ts': (methods) => accessOf(methods),
  'lib/ratelimit/dynamo.ts': () => RATE_LIMITER_ACCESS,
  'lib/deploy/aws.ts': () => [],
  'lib/deploy/aws-stores.ts': () => [],
};

/** Each function: its entry, the state store methods its code calls, whether it limits requests. */
const FUNCTIONS = [
  {
    name: 'API',
    entry: 'functions/api.ts',
    methods: stateMethodsOf('all'),
    limiter: true,
    description: 'hansard API',
  },
  {
    name: 'replay',
    entry: 'functions/replay.ts',
    methods: stateMethodsOf('replay'),
    limiter: true,
    description: 'hansard streamed replays',
  },
  // the digester serves no request: no rate limiter in it (issue 15.2)
  {
    name: 'digest',
    entry: 'functions/digest.ts',
    methods: DIGEST_STATE_METHODS,
    limiter: false,
    description: 'hansard digester',
  },
  // the two event-driven functions of issue 17.2: no request, no rate limiter
  {
    name: 'replay builder',
    entry: 'functions/replay-build.ts',
    methods: REPLAY_BUILD_STATE_METHODS,
    limiter: false,
    description: 'hansard replay builder',
  },
  {
    name: 'compactor',
    entry: 'functions/compact.ts',
    methods: COMPACT_STATE_METHODS,
    limiter: false,
    description: 'hansard compactor',
  },
] as const;

/**
 * Our modules of the bundle of `entry` (those with bytes in the output) that import the DynamoDB SDK
 * (bundled since issue 17.5: the import's `original` names the package, its `path` the file it resolved
 * to; the SDK's own modules are not ours to declare).
 */
async function dynamoModulesOf(entry: string): Promise<string[]> {
  const { metafile } = await bundleLambda(entry);
  const bundled = Object.values(metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs)
      .filter(([, i]) => i.bytesInOutput > 0)
      .map(([path]) => path),
  );
  return bundled
    .filter((path) => !path.startsWith('node_modules/'))
    .filter((path) =>
      metafile.inputs[path]!.imports.some((i) =>
        /^@aws-sdk\/(client-dynamodb|lib-dynamodb)$/.test(i.original ?? i.path),
      ),
    )
    .sort();
}

type Json = Record<string, unknown>;
/** Per DynamoDB action: the resources granted and the partition-key prefixes a write is limited to. */
type Grants = Record<string, { resources: string[]; leadingKeys: string[] | null }>;

/** The DynamoDB grants of the role of the function whose description starts with `prefix`. */
function grantedTo(t: Template, prefix: string): Grants {
  const fn = Object.values(t.findResources('AWS::Lambda::Function')).find((f) =>
    String((f.Properties as Json).Description).startsWith(prefix),
  )!;
  const role = ((fn.Properties as Json).Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  const grants: Grants = {};
  for (const p of Object.values(t.findResources('AWS::IAM::Policy'))) {
    const props = p.Properties as Json;
    if (!list(props.Roles as Json[]).some((r) => r.Ref === role)) continue;
    for (const s of (props.PolicyDocument as { Statement: Json[] }).Statement) {
      for (const action of list(s.Action as string | string[]).filter((a) => a.startsWith('dynamodb:'))) {
        const condition = (s.Condition as Json | undefined)?.['ForAllValues:StringLike'] as Json | undefined;
        const leading = condition?.['dynamodb:LeadingKeys'] as string[] | undefined;
        expect(Object.keys(s.Condition ?? {}).filter((k) => k !== 'ForAllValues:StringLike')).toEqual([]);
        grants[action] ??= { resources: [], leadingKeys: null };
        const g = grants[action]!;
        g.resources = [...g.resources, ...list(s.Resource).map(arnText)].sort();
        if (leading) g.leadingKeys = [...(g.leadingKeys ?? []), ...leading].sort();
      }
    }
  }
  return grants;
}

/** The grants `access` needs on table `<table>`: reads unconditioned, writes limited to their prefixes. */
function needed(access: readonly DynamoAccess[], table: string): Grants {
  const grants: Grants = {};
  for (const a of access) {
    const action = `dynamodb:${a.action}`;
    const resource = a.index ? `<${table}>/index/${a.index}` : `<${table}>`;
    grants[action] ??= { resources: [], leadingKeys: null };
    const g = grants[action]!;
    if (!g.resources.includes(resource)) g.resources = [...g.resources, resource].sort();
    if (!READ_ACTIONS.includes(a.action) && !g.leadingKeys?.includes(`${a.pk}*`)) {
      g.leadingKeys = [...(g.leadingKeys ?? []), `${a.pk}*`].sort();
    }
  }
  return grants;
}

describe('DynamoDB grants derived from what each function bundles', () => {
  let t: Template;
  let table: string;
  const modules = new Map<string, string[]>();
  beforeAll(async () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    t = Template.fromStack(new HansardStack(app, 'Hansard'));
    table = Object.keys(t.findResources('AWS::DynamoDB::Table'))[0]!;
    for (const f of FUNCTIONS) modules.set(f.name, await dynamoModulesOf(f.entry));
  }, 180_000); // a synth, and emulators or bundles: a minute and more on a loaded machine

  for (const f of FUNCTIONS) {
    it(`the ${f.name} function's role allows exactly what the DynamoDB modules it bundles send`, () => {
      const held = modules.get(f.name)!;
      // The API and replay functions limit requests per token: the limiter is in their bundles.
      if (f.limiter) expect(held).toContain('lib/ratelimit/dynamo.ts');
      else expect(held).not.toContain('lib/ratelimit/dynamo.ts');
      expect(held.filter((m) => !(m in DECLARED))).toEqual([]);
      const access = held.flatMap((m) => DECLARED[m]!(f.methods));
      expect(grantedTo(t, f.description)).toEqual(needed(access, table));
    });
  }

  it("grants no function what the operator's methods send: a tenant's own limits are set with the operator's credentials", () => {
    for (const f of FUNCTIONS) {
      expect(f.methods).not.toEqual(expect.arrayContaining([...OPERATOR_STATE_METHODS]));
      const writes = grantedTo(t, f.description)['dynamodb:UpdateItem']?.leadingKeys ?? [];
      expect(writes, f.name).not.toContain('TENANT#*');
    }
    // and the API and replay functions read them (the rate limit applied is the tenant's own)
    expect(stateMethodsOf('all')).toContain('getTenantSettings');
    expect(stateMethodsOf('replay')).toContain('getTenantSettings');
  });

  it('lets the replay function count its requests (UpdateItem on RL#) and write nothing else but token use', () => {
    const replay = grantedTo(t, 'hansard streamed replays');
    expect(replay['dynamodb:UpdateItem']).toEqual({
      resources: [`<${table}>`],
      leadingKeys: ['RL#*', 'TOKEN#*'],
    });
    expect(Object.keys(replay).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem']);
  });
});
