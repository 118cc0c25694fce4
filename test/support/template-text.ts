/**
 * Reading a synthesized CloudFormation template in the stack tests (test/infra: stack, stack-dynamo,
 * stack-digests, stack-compaction, stack-replays, test/attack/compaction-grants): a policy statement's
 * resources as readable text, a field that may be one value or a list as a list, the grants of a
 * function's role, and IAM's resource pattern match.
 */
import type { Template } from 'aws-cdk-lib/assertions';

type Json = Record<string, unknown>;

/** A resource ARN as a readable string: `Fn::GetAtt`/`Ref` become `<LogicalId>`, joins are joined. */
export function arnText(r: unknown): string {
  if (typeof r === 'string') return r;
  const o = r as Json;
  if (o['Fn::GetAtt']) return `<${(o['Fn::GetAtt'] as string[])[0]}>`;
  if (o.Ref) return `<${o.Ref as string}>`;
  if (o['Fn::Join']) return ((o['Fn::Join'] as [string, unknown[]])[1] ?? []).map(arnText).join('');
  return JSON.stringify(r);
}

/** A template field that is absent, one value or a list (a statement's `Action`, `Resource`), as a list. */
export const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * The AWS SDK operations a source text sends, sorted and each once: `new XCommand(` and the SDK's
 * paginators `paginateX(` (which send `XCommand` page after page), as `X`.
 */
export function sdkCommandsIn(text: string): string[] {
  const names = [
    ...[...text.matchAll(/\bnew (\w+)Command\(/g)].map(([, n]) => n!),
    ...[...text.matchAll(/\bpaginate(\w+)\(/g)].map(([, n]) => n!),
  ];
  return [...new Set(names)].sort();
}

/**
 * Each action the role of the function `fnId` (a logical id) is granted by the template's
 * `AWS::IAM::Policy` resources, with its resources as {@link arnText} (`<LogicalId>/suffix` for a
 * bucket's objects), sorted.
 */
export function grantsOf(t: Template, fnId: string): Record<string, string[]> {
  const fn = t.findResources('AWS::Lambda::Function')[fnId]!.Properties as Json;
  const role = (fn.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  const out: Record<string, string[]> = {};
  for (const p of Object.values(t.findResources('AWS::IAM::Policy'))) {
    const props = p.Properties as Json;
    if (!list(props.Roles as Json[]).some((r) => r.Ref === role)) continue;
    for (const s of (props.PolicyDocument as { Statement: Json[] }).Statement) {
      for (const a of list(s.Action as string | string[])) {
        out[a] = [...(out[a] ?? []), ...list(s.Resource).map(arnText)].sort();
      }
    }
  }
  return out;
}

/** IAM's resource match: whether `pattern` (`*` any run of characters, `/` too; `?` one) matches `key`. */
export function iamMatches(pattern: string, key: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(key);
}
