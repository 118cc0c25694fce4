/** Options shared by several commands. */
import { Option } from 'commander';

/** `--json`: machine-readable output. */
export const jsonOption = () => new Option('--json', 'print machine-readable JSON');
