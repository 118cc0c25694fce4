/**
 * Reading a synthesized CloudFormation template in the stack tests (stack.test.ts, stack-dynamo.test.ts):
 * a policy statement's resources as readable text, and a field that may be one value or a list as a list.
 */

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
