/**
 * The API reference (`GET /v1/docs`): the OpenAPI document (`./openapi.ts`) rendered on the server with
 * hono/jsx. Every operation with its method, path, auth and scopes, parameters, request body and answers;
 * every schema as a table of its fields. Plain HTML and inline CSS, no script: it renders under the same
 * strict CSP as the board.
 */
import type { Child } from 'hono/jsx';
import type { Json } from './openapi.js';

const CSS = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5rem; }
header { border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
h1 { font-size: 1.3rem; margin: .2rem 0 .6rem; } h1 a { color: inherit; text-decoration: none; }
h2 { font-size: 1.15rem; margin-top: 2.2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1rem; margin: 1.6rem 0 .3rem; } h4 { font-size: .85rem; margin: .8rem 0 .2rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: .2rem 0 .6rem; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
.method { display: inline-block; min-width: 3.6rem; text-align: center; padding: .05rem .4rem; border-radius: .3rem; font: 600 .75rem ui-monospace, monospace; }
.get { background: #dbeafe; color: #1e3a8a; } .post { background: #dcfce7; color: #14532d; } .delete { background: #fee2e2; color: #7f1d1d; }
.muted { color: var(--muted); } .req { color: #b91c1c; font-size: .75rem; }
section.op { border-top: 1px solid var(--line); } .scope { font-weight: 600; }
ul.toc { list-style: none; padding-left: 0; } ul.toc li { margin: .15rem 0; }
td.name { white-space: nowrap; }
`;

/** Text with `code` spans, as the descriptions of the document are written. */
function Md({ text }: { text: unknown }) {
  if (typeof text !== 'string') return null;
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</>;
}

const obj = (v: unknown): Json | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;

/** The name of a component a `$ref` points to. */
function refName(s: Json): string | null {
  return typeof s.$ref === 'string' ? s.$ref.replace('#/components/schemas/', '') : null;
}

/** A short type label: `string`, `WriterView[]`, `integer | null`, `map of integer`. */
function TypeLabel({ schema }: { schema: unknown }): Child {
  const s = obj(schema) ?? {};
  const name = refName(s);
  if (name) return <a href={`#schema-${name}`}>{name}</a>;
  const alternatives = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(alternatives)) {
    return (
      <>
        {alternatives.map((a, i) => (
          <>
            {i > 0 ? ' | ' : ''}
            <TypeLabel schema={a} />
          </>
        ))}
      </>
    );
  }
  if ('const' in s) return <code>{JSON.stringify(s.const)}</code>;
  if (Array.isArray(s.type)) return s.type.join(' | ');
  if (s.type === 'array') {
    return (
      <>
        <TypeLabel schema={s.items} />
        []
      </>
    );
  }
  if (s.type === 'object' && !s.properties && obj(s.additionalProperties)) {
    return (
      <>
        map of <TypeLabel schema={s.additionalProperties} />
      </>
    );
  }
  return typeof s.type === 'string' ? s.type : 'any';
}

/** The constraints of a schema (and of its non-null alternatives), in words. */
function constraints(schema: Json): Child[] {
  const out: Child[] = [];
  const parts = [schema, ...(((schema.anyOf ?? schema.oneOf) as unknown[] | undefined) ?? [])];
  for (const v of parts) {
    const s = obj(v);
    if (!s) continue;
    if (Array.isArray(s.enum)) {
      out.push(
        <>
          one of{' '}
          {s.enum.map((e, i) => (
            <>
              {i > 0 ? ', ' : ''}
              <code>{JSON.stringify(e)}</code>
            </>
          ))}
        </>,
      );
    }
    if (typeof s.format === 'string') out.push(`format ${s.format}`);
    if (typeof s.pattern === 'string')
      out.push(
        <>
          pattern <code>{s.pattern}</code>
        </>,
      );
    if (typeof s.minLength === 'number') out.push(`at least ${s.minLength} characters`);
    if (typeof s.maxLength === 'number') out.push(`at most ${s.maxLength} characters`);
    if (typeof s.minimum === 'number') out.push(`≥ ${s.minimum}`);
    if (typeof s.maximum === 'number') out.push(`≤ ${s.maximum}`);
    if (typeof s.minItems === 'number') out.push(`at least ${s.minItems} items`);
    if (typeof s.maxItems === 'number') out.push(`at most ${s.maxItems} items`);
    const items = obj(s.items);
    if (items && !items.$ref && !items.properties) {
      const each = constraints(items);
      if (each.length)
        out.push(
          <>
            each:{' '}
            {each.map((x, i) => (
              <>
                {i > 0 ? ', ' : ''}
                {x}
              </>
            ))}
          </>,
        );
    }
    if ('default' in s)
      out.push(
        <>
          default <code>{JSON.stringify(s.default)}</code>
        </>,
      );
  }
  return out;
}

/** The constraints of a schema as a muted line, or nothing. */
function Constraints({ schema }: { schema: Json }) {
  const c = constraints(schema);
  if (c.length === 0) return null;
  return (
    <div class="muted">
      {c.map((x, i) => (
        <>
          {i > 0 ? '; ' : ''}
          {x}
        </>
      ))}
    </div>
  );
}

/** The inline object a property holds (itself, its items, its map values or its non-null alternative). */
function inlineObject(schema: Json): { schema: Json; suffix: string } | null {
  if (schema.type === 'object' && obj(schema.properties)) return { schema, suffix: '.' };
  const items = obj(schema.items);
  if (schema.type === 'array' && items) {
    const inner = inlineObject(items);
    return inner ? { schema: inner.schema, suffix: `[]${inner.suffix}` } : null;
  }
  const values = obj(schema.additionalProperties);
  if (schema.type === 'object' && !schema.properties && values) {
    const inner = inlineObject(values);
    return inner ? { schema: inner.schema, suffix: `.*${inner.suffix}` } : null;
  }
  for (const a of ((schema.anyOf ?? schema.oneOf) as unknown[] | undefined) ?? []) {
    const s = obj(a);
    const inner = s && inlineObject(s);
    if (inner) return inner;
  }
  return null;
}

interface Row {
  name: string;
  required: boolean;
  schema: Json;
}

/** One row per field, nested inline objects flattened with dotted names. */
function fieldRows(schema: Json, prefix = ''): Row[] {
  const props = obj(schema.properties) ?? {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const rows: Row[] = [];
  for (const [name, v] of Object.entries(props)) {
    const s = obj(v) ?? {};
    rows.push({ name: `${prefix}${name}`, required: required.has(name), schema: s });
    const inner = inlineObject(s);
    if (inner) rows.push(...fieldRows(inner.schema, `${prefix}${name}${inner.suffix}`));
  }
  return rows;
}

/** A schema as a table of its fields, or as its type when it has none. */
function SchemaTable({ schema }: { schema: Json }) {
  const rows = fieldRows(schema);
  if (rows.length === 0) {
    return (
      <div>
        <TypeLabel schema={schema} />
        <Constraints schema={schema} />
      </div>
    );
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Field</th>
          <th>Type</th>
          <th>Description</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr>
            <td class="name">
              <code>{r.name}</code> {r.required ? <span class="req">required</span> : null}
            </td>
            <td>
              <TypeLabel schema={r.schema} />
            </td>
            <td>
              <Md text={r.schema.description} />
              <Constraints schema={r.schema} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A body of a media type: its component, its error codes, or its description. */
function BodyLabel({ schema }: { schema: unknown }) {
  const s = obj(schema) ?? {};
  const all = Array.isArray(s.allOf) ? (s.allOf as unknown[]) : null;
  if (all) {
    // An error answer: ErrorBody narrowed to the codes this operation may answer with this status.
    const codes = (obj(obj(obj(obj(obj(all[1])?.properties)?.error)?.properties)?.code)?.enum ??
      []) as string[];
    return (
      <>
        <TypeLabel schema={all[0]} /> with code{' '}
        {codes.map((c, i) => (
          <>
            {i > 0 ? ', ' : ''}
            <code>{c}</code>
          </>
        ))}
      </>
    );
  }
  if (refName(s)) return <TypeLabel schema={s} />;
  return <Md text={s.description ?? ''} />;
}

/** "Bearer token with the read or board scope; or the board cookie". */
function AuthLine({ op }: { op: Json }) {
  const security = Array.isArray(op.security) ? (op.security as Json[]) : [];
  if (security.length === 0) return <p>Auth: none.</p>;
  const schemes = new Set(security.flatMap((r) => Object.keys(r)));
  const scopes = Array.isArray(op['x-scopes']) ? (op['x-scopes'] as string[]) : [];
  return (
    <p>
      Auth: {schemes.has('bearer') ? <code>Authorization: Bearer hns_…</code> : null}
      {schemes.has('boardCookie') ? ', or the board cookie' : ''}
      {scopes.length ? (
        <>
          {' '}
          with the{' '}
          {scopes.map((s, i) => (
            <>
              {i > 0 ? ' or ' : ''}
              <span class="scope">{s}</span>
            </>
          ))}{' '}
          scope.
        </>
      ) : (
        '.'
      )}
    </p>
  );
}

interface Op {
  method: string;
  path: string;
  op: Json;
}

function operations(doc: Json): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries(obj(doc.paths) ?? {})) {
    for (const [method, op] of Object.entries(obj(item) ?? {})) {
      const o = obj(op);
      if (o) out.push({ method, path, op: o });
    }
  }
  return out;
}

function Operation({ method, path, op }: Op) {
  const params = Array.isArray(op.parameters) ? (op.parameters as Json[]) : [];
  const body = obj(op.requestBody);
  const responses = Object.entries(obj(op.responses) ?? {});
  return (
    <section class="op" id={`op-${String(op.operationId)}`} data-path={path} data-method={method}>
      <h3>
        <span class={`method ${method}`}>{method.toUpperCase()}</span> <code>{path}</code>
      </h3>
      <p>
        <Md text={op.summary} />
      </p>
      {op.description ? (
        <p class="muted">
          <Md text={op.description} />
        </p>
      ) : null}
      <AuthLine op={op} />
      {params.length ? (
        <>
          <h4>Parameters</h4>
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>In</th>
                <th>Type</th>
                <th>Description</th>
              </tr>
            </thead>
            <tbody>
              {params.map((p) => {
                const s = obj(p.schema) ?? {};
                return (
                  <tr>
                    <td class="name">
                      <code>{String(p.name)}</code> {p.required ? <span class="req">required</span> : null}
                    </td>
                    <td>{String(p.in)}</td>
                    <td>
                      <TypeLabel schema={s} />
                    </td>
                    <td>
                      <Md text={p.description} />
                      <Constraints schema={s} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      ) : null}
      {body ? (
        <>
          <h4>Request body</h4>
          {Object.entries(obj(body.content) ?? {}).map(([type, m]) => (
            <p>
              <code>{type}</code>: <BodyLabel schema={obj(m)?.schema} />
            </p>
          ))}
        </>
      ) : null}
      <h4>Responses</h4>
      <table>
        <thead>
          <tr>
            <th>Status</th>
            <th>Description</th>
            <th>Body</th>
          </tr>
        </thead>
        <tbody>
          {responses.map(([status, v]) => {
            const r = obj(v) ?? {};
            const headers = Object.keys(obj(r.headers) ?? {});
            return (
              <tr>
                <td>
                  <code>{status}</code>
                </td>
                <td>
                  <Md text={r.description} />
                  {headers.length ? <div class="muted">headers: {headers.join(', ')}</div> : null}
                </td>
                <td>
                  {Object.entries(obj(r.content) ?? {}).map(([type, m]) => (
                    <div>
                      <code>{type}</code> <BodyLabel schema={obj(m)?.schema} />
                    </div>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

/** The whole reference page of `doc`. */
export function DocsPage({ doc }: { doc: Json }) {
  const info = obj(doc.info) ?? {};
  const ops = operations(doc);
  const tags = (Array.isArray(doc.tags) ? (doc.tags as Json[]) : []).map((t) => ({
    name: String(t.name),
    description: String(t.description ?? ''),
  }));
  const tagOf = (o: Op) => (Array.isArray(o.op.tags) ? String(o.op.tags[0]) : '');
  const schemas = Object.entries(obj(obj(doc.components)?.schemas) ?? {});
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>hansard API reference</title>
        <style>{CSS}</style>
      </head>
      <body>
        <header>
          <h1>
            <a href="/">hansard</a> <span class="muted">· API reference · {String(info.version)}</span>
          </h1>
        </header>
        {String(info.description ?? '')
          .split('\n\n')
          .map((para) => (
            <p>
              <Md text={para} />
            </p>
          ))}
        <p>
          The same as an OpenAPI 3.1 document: <a href="/v1/openapi.json">/v1/openapi.json</a>.
        </p>
        <h2 id="operations">Operations</h2>
        {tags.map((t) => (
          <>
            <h4>
              {t.name} <span class="muted">— {t.description}</span>
            </h4>
            <ul class="toc">
              {ops
                .filter((o) => tagOf(o) === t.name)
                .map((o) => (
                  <li>
                    <a href={`#op-${String(o.op.operationId)}`}>
                      <span class={`method ${o.method}`}>{o.method.toUpperCase()}</span> <code>{o.path}</code>
                    </a>{' '}
                    <span class="muted">
                      <Md text={o.op.summary} />
                    </span>
                  </li>
                ))}
            </ul>
          </>
        ))}
        {tags.map((t) => (
          <>
            <h2 id={`tag-${t.name.replace(/\W+/g, '-')}`}>{t.name}</h2>
            {ops
              .filter((o) => tagOf(o) === t.name)
              .map((o) => (
                <Operation {...o} />
              ))}
          </>
        ))}
        <h2 id="schemas">Schemas</h2>
        {schemas.map(([name, s]) => {
          const schema = obj(s) ?? {};
          return (
            <section id={`schema-${name}`}>
              <h3>
                <code>{name}</code>
              </h3>
              {schema.description ? (
                <p class="muted">
                  <Md text={schema.description} />
                </p>
              ) : null}
              <SchemaTable schema={schema} />
            </section>
          );
        })}
        <footer class="muted">
          <p>Generated from the zod schemas the routes validate with.</p>
        </footer>
      </body>
    </html>
  );
}
