/**
 * Records a small session with the hansard library and prints its directory.
 * Run from the repository root: npx tsx docs/examples/record-session.ts [./sessions]
 */
import { openSession } from '../../lib/index.js';

const s = openSession(process.argv[2] ?? './sessions', { agent: 'support-bot' });
const m = s.message({ user_id: 'priya', text: 'restart the payments worker' });
const t = s.turnStart({ context_message_ids: [m.id] });
const a = s.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'systemctl restart payments' } });
s.actionResult({ action_id: a.id, status: 'ok', output: 'restarted', exit_code: 0 });
s.output({ turn_id: t.turn_id, text: 'The payments worker is running again.' });
s.turnEnd({ turn_id: t.turn_id, status: 'completed' });
s.end();
console.log(s.dir);
