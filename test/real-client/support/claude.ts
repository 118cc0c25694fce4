/**
 * Running the real Claude Code headless (`claude -p PROMPT --allowedTools …`) in a temporary HOME against
 * the Messages API stand-in, and the three scripted sessions the suites play:
 *
 * - `parallel`: the prompt gets two Bash calls in one answer (`echo hello-from-tool`, `echo
 *   second-parallel-call`), then a final text: the run test/fixtures/real-client/0*.json came from.
 * - `failing`: one Bash call `ls no-such-file` (exit code 2), then a final text.
 * - `subagent`: one `Agent` call (the Task tool is named `Agent` in 2.1.328) with `run_in_background: false`;
 *   the subagent runs `echo from-subagent` and reports; the main loop answers. (Agents run in the
 *   background by default in 2.1.328; `subagentAsync` plays that, see the payload suite.)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstUserText, type MessagesRequest, type Reply, type Script } from './anthropic-stub.js';

/** A finished client run. */
export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** What `runClaude` needs. */
export interface ClaudeRunOptions {
  bin: string;
  home: string;
  cwd: string;
  /** the Messages API stand-in's URL */
  baseUrl: string;
  prompt: string;
  allowedTools: string[];
  /** more environment (HANSARD_STATE_DIR, …) */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * Runs `claude -p PROMPT --allowedTools …` with only PATH, HOME, the stand-in's URL, a fake key and the
 * switches that keep it off the network (no autoupdate, no nonessential traffic).
 * @throws Error when it is still running after `timeoutMs` (it is killed then)
 */
export function runClaude(o: ClaudeRunOptions): Promise<ClientRun> {
  mkdirSync(o.cwd, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: o.home,
    ANTHROPIC_BASE_URL: o.baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake-real-client-test',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    ...o.env,
  };
  return runProcess(o.bin, ['-p', o.prompt, '--allowedTools', ...o.allowedTools], o.cwd, env, o.timeoutMs);
}

/** Spawns a client with stdin closed and collects its output. */
export function runProcess(
  bin: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<ClientRun> {
  const t0 = Date.now();
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-100_000)));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${bin} ${args.join(' ')} still running after ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** Whether any message of the request holds the `tool_result` of `id` (the call ran). */
export function hasToolResult(req: MessagesRequest, id: string): boolean {
  return (req.messages ?? []).some(
    (m) =>
      Array.isArray(m.content) &&
      m.content.some(
        (b) =>
          typeof b === 'object' &&
          b !== null &&
          (b as { type?: unknown }).type === 'tool_result' &&
          (b as { tool_use_id?: unknown }).tool_use_id === id,
      ),
  );
}

/** Whether a request is the subagent's: its conversation starts from the subagent prompt. */
function isSubagentRequest(req: MessagesRequest): boolean {
  return firstUserText(req).includes(SUBAGENT_PROMPT);
}

const text = (t: string): Reply => ({ content: [{ type: 'text', text: t }] });
const bash = (id: string, command: string, description: string) =>
  ({ type: 'tool_use', id, name: 'Bash', input: { command, description } }) as const;

/** The prompt the subagent is given; its requests are told apart by it. */
export const SUBAGENT_PROMPT = 'SUBTASK: run echo from-subagent and report what it printed';

/** A scripted session: its prompt, the tools it may use without asking, and the model's script. */
export interface ClaudeScenario {
  name: 'parallel' | 'failing' | 'subagent' | 'subagentAsync';
  prompt: string;
  allowedTools: string[];
  script: Script;
  /** what the final answer says */
  finalText: string;
}

/**
 * The scripted sessions. Requests without tools (side requests a client version may add) get a short
 * text; every script stops calling tools once the results are in, so a session always ends.
 */
export function claudeScenario(name: ClaudeScenario['name']): ClaudeScenario {
  const allowedTools = ['Bash(echo:*)', 'Bash(ls:*)', 'Agent'];
  switch (name) {
    case 'parallel':
      return {
        name,
        prompt: 'run the greeting',
        allowedTools,
        finalText: 'All done: the command printed its greeting.',
        script: (req) => {
          if (!req.tools?.length) return text('ok');
          if (hasToolResult(req, 'toolu_fake0001a'))
            return text('All done: the command printed its greeting.');
          return {
            content: [
              bash('toolu_fake0001a', 'echo hello-from-tool', 'Say hello'),
              bash('toolu_fake0001b', 'echo second-parallel-call', 'Say it again'),
            ],
          };
        },
      };
    case 'failing':
      return {
        name,
        prompt: 'list the missing file',
        allowedTools,
        finalText: 'The file is not there (ls exited 2).',
        script: (req) => {
          if (!req.tools?.length) return text('ok');
          if (hasToolResult(req, 'toolu_fail0001')) return text('The file is not there (ls exited 2).');
          return { content: [bash('toolu_fail0001', 'ls no-such-file', 'List a missing file')] };
        },
      };
    case 'subagent':
    case 'subagentAsync':
      return {
        name,
        prompt: 'delegate the echo to a subagent',
        allowedTools,
        finalText: 'The subagent reported back: from-subagent.',
        script: (req) => {
          if (!req.tools?.length) return text('ok');
          if (isSubagentRequest(req)) {
            if (hasToolResult(req, 'toolu_sub0001')) return text('Subagent finished: from-subagent.');
            return { content: [bash('toolu_sub0001', 'echo from-subagent', 'Echo from the subagent')] };
          }
          if (hasToolResult(req, 'toolu_task0001')) return text('The subagent reported back: from-subagent.');
          return {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_task0001',
                name: 'Agent',
                input: {
                  description: 'Run a subtask',
                  prompt: SUBAGENT_PROMPT,
                  subagent_type: 'general-purpose',
                  ...(name === 'subagent' ? { run_in_background: false } : {}),
                },
              },
            ],
          };
        },
      };
  }
}

/** Claude Code's hook events (2.1.328) the payload suite listens to: every one it fires in a headless run. */
export const ALL_CLAUDE_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUse',
  'PostToolUseFailure',
  'Notification',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'StopFailure',
  'PreCompact',
  'PostCompact',
  'TaskCreated',
  'TaskCompleted',
  'SessionEnd',
] as const;

/**
 * Writes `<home>/.claude/settings.json` installing `command` for every event of `ALL_CLAUDE_EVENTS`
 * (tool events with matcher `*`). Used by the payload suite, whose hook only records what it is given;
 * the capture suites install hansard's hooks with `hansard integrations sync` instead.
 */
export function writeLoggingHooks(home: string, command: string): void {
  const hooks: Record<string, unknown[]> = {};
  for (const e of ALL_CLAUDE_EVENTS) {
    const hook = { type: 'command', command };
    hooks[e] = [/Tool|Permission/.test(e) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }];
  }
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), `${JSON.stringify({ hooks }, null, 2)}\n`);
}
